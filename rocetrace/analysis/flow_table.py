"""The flows table (docs/analysis-tables.md): one row per flow, its keys, counters and the
per-flow columns of every analysis, assembled side by side in one concat."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import flows
from rocetrace.analysis.episodes import ack_timeout_estimate
from rocetrace.analysis.prepared import REQUEST, TRANSPORTS, Prepared


def _roles(pp: Prepared, model: flows.FlowModel) -> np.ndarray:
    requests = model.kinds[:, REQUEST]
    responses = model.kinds[:, list(flows.RESPONSE_KINDS)].sum(axis=1)
    return np.where(requests > 0, "requester", np.where(responses > 0, "responder", "unknown"))


def _modes(eps: pd.DataFrame, n: int) -> np.ndarray:
    """Each flow's recovery mode: its episodes' one mode, "mixed" when they differ."""
    mode = np.full(n, "none", dtype=object)
    if eps.empty:
        return mode
    fid = eps["flow_id"].to_numpy(np.int64)
    names = eps["mode"].to_numpy(object)
    by = np.argsort(fid, kind="stable")
    fid, names = fid[by], names[by]
    codes = pd.factorize(names)[0]
    starts = np.flatnonzero(np.diff(fid, prepend=-1) != 0)
    uniform = np.minimum.reduceat(codes, starts) == np.maximum.reduceat(codes, starts)
    mode[fid[starts]] = np.where(uniform, names[starts], "mixed")
    return mode


def timeouts(eps: pd.DataFrame, n: int) -> pd.DataFrame:
    """Per flow: timeouts, the ACK timeout they suggest, and all retransmission episodes."""
    t = eps[eps["trigger"] == "timeout"] if not eps.empty else eps
    fid = t["flow_id"].to_numpy(np.int64) if len(t) else np.zeros(0, np.int64)
    exp = pd.array(np.zeros(n, np.int64), dtype="Int64")
    exp[:] = pd.NA
    seconds = np.full(n, np.nan)
    if len(t):
        delay = t.groupby(fid)["delay_s"].median()
        est = [ack_timeout_estimate(d) for d in delay]  # one per flow
        at = delay.index.to_numpy(np.int64)
        exp[at] = [k for k, _ in est]
        seconds[at] = [s for _, s in est]
    every = eps["flow_id"].to_numpy(np.int64) if len(eps) else np.zeros(0, np.int64)
    return pd.DataFrame(
        {
            "timeouts": np.bincount(fid, minlength=n),
            "ack_timeout_exp": exp,
            "ack_timeout_s": seconds,
            "retransmission_episodes": np.bincount(every, minlength=n),
        }
    )


def _optional(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Int64 with -1 read as missing."""
    missing = values < 0
    return pd.arrays.IntegerArray(np.where(missing, 0, values).astype(np.int64), missing)


def _per_flow(pp: Prepared, model: flows.FlowModel) -> dict[str, Any]:
    """Counters read off the flow order: packets, bytes, first/last PSN and timestamps."""
    order, n = model.order, len(model)
    if n == 0:
        empty = np.zeros(0, np.int64)
        return dict.fromkeys(("packets", "bytes", "first_psn", "last_psn", "first", "last"), empty)
    first, last = order.first_rows(), order.last_rows()
    if pp.in_time_order:  # the first and last frames are the earliest and the latest
        ts_first, ts_last = pp.ts[first], pp.ts[last]
    else:
        ts = pp.ts[order.rows]
        ts_first = np.minimum.reduceat(ts, order.bounds[:-1])
        ts_last = np.maximum.reduceat(ts, order.bounds[:-1])
    first_psn, last_psn = pp.psn[first].astype(np.int64), pp.psn[last].astype(np.int64)
    both = np.flatnonzero(
        (model.kinds[:, REQUEST] > 0) & (model.kinds[:, REQUEST] < np.diff(order.bounds))
    )
    if len(both):  # both ends post requests on this QP pair: the PSNs of its own requests
        rows, flow = order.select(pp.kind == REQUEST)
        bounds = np.searchsorted(flow, both), np.searchsorted(flow, both, "right") - 1
        first_psn[both], last_psn[both] = pp.psn[rows[bounds[0]]], pp.psn[rows[bounds[1]]]
    return {
        "packets": np.diff(order.bounds),
        "bytes": _bytes(pp, model.flow_id, n),
        "first_psn": first_psn,
        "last_psn": last_psn,
        "first": ts_first,
        "last": ts_last,
    }


_BYTES_BLOCK = 1 << 16  # frames widened to int64 at a time: no 8 MB copy at 1M frames


def _bytes(pp: Prepared, flow_id: np.ndarray, n: int) -> np.ndarray:
    """Wire bytes per flow, summed in frame order (exact int64; an unbuffered add is faster
    than a gather through the flow order), a block of frames at a time (the lengths are
    widened block by block: a whole int64 copy is heap the analysis' end would not give
    back, and the blocks stay in cache)."""
    wire = np.zeros(n + 1, np.int64)  # frames of no flow (-1) add to the last
    for at in range(0, len(flow_id), _BYTES_BLOCK):  # blocks of frames, not frames
        block = slice(at, at + _BYTES_BLOCK)
        np.add.at(wire, flow_id[block], pp.wire_len[block].astype(np.int64, copy=False))
    return wire[:n]


def flows_table(pp: Prepared, model: flows.FlowModel, parts: dict[str, Any]) -> pd.DataFrame:
    """The flows table: keys and counters here, the other analyses' columns from `parts`."""
    n = len(model)
    counted = _per_flow(pp, model)
    keys = pd.DataFrame(
        {
            "flow_id": np.arange(n, dtype=np.int64),
            "src_ip": pp.ips[model.src] if n else [],
            "dst_ip": pp.ips[model.dst] if n else [],
            "dest_qp": model.qp,
            "peer_qp": _optional(model.peer_qp),
            "pair_flow_id": _optional(model.pair),
            "paired_by": model.paired_by,
            "role": _roles(pp, model),
            "packets": counted["packets"],
            "bytes": counted["bytes"],
            "first_psn": counted["first_psn"],
            "last_psn": counted["last_psn"],
            "retransmitted_packets": parts["retx"],
            "psn_gaps": parts["gaps"],
        }
    )
    transport = np.where(model.transport >= 0, np.array(TRANSPORTS)[model.transport], "CNP")
    tail = pd.DataFrame(
        {
            "transport": transport,
            "mtu": model.mtu,
            "first_ts_ns": counted["first"],
            "last_ts_ns": counted["last"],
        }
    )
    mode = pd.DataFrame({"retransmission_mode": _modes(parts["episodes"], n)})
    columns = [keys, parts["nak_counts"], mode, parts["timeouts"], parts["congestion"]]
    return pd.concat([*columns, parts["qos"], parts["rtt"], tail], axis=1)
