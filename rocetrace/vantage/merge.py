"""The merged packet table: one row per distinct packet, on the reference clock, in the
order the analysis reads as capture order; `rocetrace.analysis.pipeline.analyze_packets`
runs on it unchanged.

Which sighting a row carries: the one earliest on the packet's path, and its time is when
the packet passed the path's first vantage (aligned; when that vantage missed it, its first
sighting less the delay from there of the nearest packet of its direction seen at both).
So the rows are in the order the packets left their senders, which is causal: a resend
leaves after the NAK that asked for it arrived, so after that NAK left; and a packet the
first vantage missed does not look late among its neighbours. ECN is the highest any
vantage saw (a switch marks CE on the way; the receiver reacts to the mark). A PFC frame
(one pause on one link, seen by a host and by the mirror of its port) is matched too and
carried by its earliest sighting; frames that are neither intact RoCE nor PFC (other
traffic, malformed RoCE) are never matched: each stays a row of its own vantage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.analysis.prepared import ROCE_ENCAPS
from rocetrace.capture import CaptureInfo
from rocetrace.vantage.match import ints
from rocetrace.vantage.paths import on_paths
from rocetrace.vantage.vantage_inputs import VantageTable, combined_info, concat_tables


def _local_delays(pk: pd.DataFrame, first: pd.DataFrame) -> pd.DataFrame:
    """Per sighting at a vantage after its path's first one, of a packet seen at both: the
    delay from there (src, dst, vantage, t, delay), sorted by t."""
    at_start = pk.merge(first, on=["src", "dst", "vantage"])[["packet", "t"]]
    later = pk.merge(first, on=["src", "dst"], suffixes=("", "_start"))
    later = later[later["vantage"] != later["vantage_start"]]
    both = later.merge(at_start, on="packet", suffixes=("", "_first"))
    both = both.assign(delay=both["t"] - both["t_first"])
    return both[["src", "dst", "vantage", "t", "delay"]].sort_values("t", kind="stable")


def departures(
    s: pd.DataFrame, packet: np.ndarray, aligned: np.ndarray, pk: pd.DataFrame, order: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """Per packet id: the sighting its merged row carries (the one earliest on its path)
    and when it passed the first vantage of its path: seen there, else its first sighting
    less the delay from there of the packet of its direction seen at both nearest in time
    (packets keep their order along a path: a neighbour's queue was this packet's).
    Unmatchable frames carry themselves."""
    n = int(packet.max(initial=-1)) + 1
    carrier, when = np.full(n, -1, np.int64), np.zeros(n, np.int64)
    alone = np.flatnonzero(~on_paths(s))  # no path: its earliest sighting carries it
    alone = alone[np.lexsort((alone, aligned[alone]))[::-1]]  # the earliest written last
    carrier[packet[alone]], when[packet[alone]] = alone, aligned[alone]
    x = pk.merge(order, on=["src", "dst", "vantage"])
    x = x.sort_values(["packet", "position", "t"], kind="stable").drop_duplicates("packet")
    first = order.sort_values(["position", "vantage"]).drop_duplicates(["src", "dst"])
    x = x.merge(first[["src", "dst", "vantage"]], on=["src", "dst"], suffixes=("", "_start"))
    late = x[x["vantage"] != x["vantage_start"]].sort_values("t", kind="stable")
    ahead = pd.merge_asof(
        late[["packet", "src", "dst", "vantage", "t"]],
        _local_delays(pk, first[["src", "dst", "vantage"]]),
        on="t",
        by=["src", "dst", "vantage"],
        direction="nearest",
    )
    got = x["packet"].to_numpy()
    carrier[got], when[got] = x["sighting"].to_numpy(), x["t"].to_numpy()
    shift = ahead["delay"].fillna(0).to_numpy(np.int64)
    when[ahead["packet"].to_numpy()] -= shift
    return carrier, when


def arrow_ints(values: np.ndarray, kind: pa.DataType) -> pd.arrays.ArrowExtensionArray:
    """Integers as a nullable Arrow column (negative: null), as the packet table has them."""
    return pd.arrays.ArrowExtensionArray(pa.array(np.maximum(values, 0), kind, mask=values < 0))


def in_capture_order(s: pd.DataFrame, carrier: np.ndarray, when: np.ndarray) -> np.ndarray:
    """The times made to keep each vantage's capture order: per vantage, the running
    maximum over the packets it carries, in its record order. A host clock's jitter runs
    stamps backwards while records stay in arrival order; sorting by these times is a
    k-way merge of the vantages' captures (as mergecap does), never a reorder within one."""
    vantage, row = s["vantage"].to_numpy()[carrier], s["row"].to_numpy()[carrier]
    order = np.lexsort((row, vantage))
    ts = pd.Series(when[order]).groupby(vantage[order]).cummax().to_numpy()
    out = np.empty_like(when)
    out[order] = ts
    return out


def _merged_order(s: pd.DataFrame, carrier: np.ndarray, when: np.ndarray) -> np.ndarray:
    """Packet ids in merged order: by time, then vantage, then capture order."""
    vantage, row = s["vantage"].to_numpy()[carrier], s["row"].to_numpy()[carrier]
    return np.lexsort((row, vantage, when))


def sighting_ecn(tables: Sequence[VantageTable], s: pd.DataFrame) -> np.ndarray:
    """Per sighting, its frame's ECN field (-1: none)."""
    ecn = np.full(len(s), -1, np.int64)
    vantage, row = s["vantage"].to_numpy(), s["row"].to_numpy()
    for v, t in enumerate(tables):
        at = vantage == v
        ecn[at] = ints(t.packets["ecn"])[row[at]]
    return ecn


def _highest_ecn(ecn: np.ndarray, packet: np.ndarray) -> np.ndarray:
    """Per packet, the highest ECN field of its sightings (-1: none carried one)."""
    out = np.full(int(packet.max(initial=-1)) + 1, -1, np.int64)
    np.maximum.at(out, packet, ecn)
    return out


def merged_ids(
    s: pd.DataFrame, carrier: np.ndarray, when: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Packet ids in merged order and per packet id its time (in_capture_order). Within a
    vantage, the rows it carries come in its capture order."""
    when = in_capture_order(s, carrier, when)
    return _merged_order(s, carrier, when), when


def carried_by(s: pd.DataFrame, carrier: np.ndarray, ids: np.ndarray, v: int) -> np.ndarray:
    """The rows of vantage v the merged table carries, in merged order (= its row order)."""
    c = carrier[ids]
    return s["row"].to_numpy()[c][s["vantage"].to_numpy()[c] == v]


def merged_packets(
    tables: Sequence[VantageTable],
    s: pd.DataFrame,
    packet: np.ndarray,
    carrier: np.ndarray,
    when: np.ndarray,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The packet table with the merged columns (schema.vantage_columns.MERGED_PACKET_EXTRAS),
    and per packet id its merged row.
    `carrier`, `when`: per packet id, the sighting it carries and its time (departures)."""
    ids, when = merged_ids(s, carrier, when)
    parts = [t.packets.iloc[carried_by(s, carrier, ids, v)] for v, t in enumerate(tables)]
    ecn = sighting_ecn(tables, s)
    return assembled(parts, [t.name for t in tables], s, packet, (carrier, ids, when), ecn)


def assembled(
    parts: Sequence[pd.DataFrame],
    names: list[str],
    s: pd.DataFrame,
    packet: np.ndarray,
    placed: tuple[np.ndarray, np.ndarray, np.ndarray],
    ecn: np.ndarray,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The merged table from each vantage's carried rows (`parts`, carried_by order);
    `placed`: per packet id its carrier, the ids in merged order, per packet id its time;
    `ecn`: per sighting. Shared by the in-memory and the streamed merge."""
    carrier, ids, when = placed
    c = carrier[ids]
    vantage = s["vantage"].to_numpy()[c]
    where = [np.flatnonzero(vantage == v) for v in range(len(names))]
    merged = concat_tables(list(parts))
    merged = merged.iloc[np.argsort(np.concatenate(where), kind="stable")].reset_index(drop=True)
    row_of = np.empty(len(ids), np.int64)
    row_of[ids] = np.arange(len(ids))
    merged["frame"] = np.arange(1, len(ids) + 1, dtype=np.uint32)
    merged["ts_ns"] = when[ids]
    merged["ecn"] = arrow_ints(_highest_ecn(ecn, packet)[ids], pa.uint8())
    merged["vantage"] = pd.Categorical.from_codes(vantage.astype(np.int64), pd.Index(names))
    merged["sightings"] = np.bincount(packet, minlength=len(ids))[ids].astype(np.uint8)
    for v, name in enumerate(names):
        frame = np.full(len(ids), -1, np.int64)
        at = s["vantage"].to_numpy() == v
        frame[row_of[packet[at]]] = s["row"].to_numpy()[at] + 1
        merged[f"frame_{name}"] = pd.arrays.IntegerArray(
            np.maximum(frame, 0).astype(np.uint32), frame < 0
        )
    return merged, row_of


def merged_mads(
    tables: Sequence[VantageTable],
    s: pd.DataFrame,
    packet: np.ndarray,
    row_of: np.ndarray,
    merged: pd.DataFrame,
) -> pd.DataFrame | None:
    """The vantages' CM MADs, each once, with its merged frame and aligned time."""
    parts = []
    starts = np.concatenate([[0], np.cumsum([len(t.packets) for t in tables])])
    for v, t in enumerate(tables):
        if t.mads is None or t.mads.empty:
            continue
        sighting = starts[v] + t.mads["frame"].to_numpy(np.int64) - 1
        at = row_of[packet[sighting]]
        parts.append(t.mads.assign(frame=at + 1, ts_ns=merged["ts_ns"].to_numpy()[at]))
    if not parts:
        return None
    return pd.concat(parts, ignore_index=True).drop_duplicates("frame").sort_values("frame")


def merged_info(tables: Sequence[VantageTable], merged: pd.DataFrame) -> CaptureInfo:
    """The merged capture's facts: the vantages' files and damage (combined_info), counted
    on the merged table where a packet is once, with the vantages' files named."""
    roce = int(merged["encap"].isin(ROCE_ENCAPS).sum())
    ts = merged["ts_ns"]
    files = "; ".join(f"{t.name}={','.join(str(f) for f in t.vantage.files)}" for t in tables)
    return replace(
        combined_info([t.info for t in tables], files),
        format="merged",
        packets=len(merged),
        roce_packets=roce,
        non_roce_packets=len(merged) - roce,
        truncated_packets=int((merged["cap_len"] < merged["wire_len"]).sum()),
        first_ts_ns=int(ts.min()) if len(ts) else None,
        last_ts_ns=int(ts.max()) if len(ts) else None,
    )
