"""One packet, several sightings: the same RoCE packet seen at two capture points is matched
by what a switch does not change (endpoints, dest QP, PSN, opcode and the ICRC, which
covers the invariant fields and the payload).

A resend carries the same key as its original, so a key that repeats at a vantage is
matched by aligned time instead (nearest sighting within a window), after the clocks are
fitted on the keys that do not repeat anywhere (`anchors`). Every function here is pure
over a sighting table and may run per partition (`conn`: the unordered endpoint pair, the
same partition key as the analysis): a key never spans two connections.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

from rocetrace.analysis.pfc import pfc_rows
from rocetrace.analysis.prepared import ROCE_ENCAPS
from rocetrace.scale.keys import coded_hashes
from rocetrace.schema import MALFORMED_ROCE
from rocetrace.vantage.vantage_inputs import VantageTable

SIGHTING_COLUMNS: dict[str, tuple[str, str]] = {
    "vantage": ("int16", "index of the vantage, in the order given (0 holds the reference clock)"),
    "row": ("int64", "row in that vantage's packet table (its frame - 1)"),
    "ts_ns": ("int64", "timestamp on the vantage's own clock"),
    "src": ("int32", "source IP, one code space for every vantage (-1: none)"),
    "dst": ("int32", "destination IP code (-1: none)"),
    "conn": ("int64", "unordered endpoint pair (-1: none): the partition key"),
    "dest_qp": ("int64", "BTH destination QP (-1: none; PFC: its sender's MAC, hashed)"),
    "psn": ("int64", "BTH PSN (-1: none; PFC: its enable vector and quanta, mixed)"),
    "opcode": ("int64", "BTH opcode (-1: none; PFC_OPCODE: a PFC frame)"),
    "icrc": ("int64", "ICRC (-1: not captured and not known from another vantage)"),
    "matchable": (
        "bool",
        "an intact RoCE frame or a PFC frame: may be a sighting of a frame seen elsewhere",
    ),
    "key": ("int64", "id of the sighting key within the table (-1: not matchable)"),
    "occurrence": ("int32", "k-th sighting of its key at its vantage, capture order (resends)"),
}
KEY_FIELDS = ("src", "dst", "dest_qp", "psn", "opcode", "icrc")
_ICRCLESS = KEY_FIELDS[:-1]


def ints(col: pd.Series) -> np.ndarray:
    """A nullable integer column as int64 with nulls as -1."""
    return col.astype("Int64").to_numpy(dtype=np.int64, na_value=-1)


def _ip_codes(
    tables: Sequence[VantageTable],
) -> tuple[pd.Index, list[np.ndarray], list[np.ndarray]]:
    """Source and destination IP codes of every table in one code space (the union)."""
    cats = [t.packets[c].cat.categories for t in tables for c in ("src_ip", "dst_ip")]
    space = pd.Index(np.concatenate([c.astype(str).to_numpy() for c in cats])).unique()
    out: list[list[np.ndarray]] = [[], []]
    for t in tables:
        for k, c in enumerate(("src_ip", "dst_ip")):
            col = t.packets[c]
            lut = space.get_indexer(col.cat.categories.astype(str))
            codes = col.cat.codes.to_numpy()
            out[k].append(np.where(codes >= 0, lut[codes], -1).astype(np.int32))
    return space, out[0], out[1]


PFC_OPCODE = -2  # the `opcode` of a PFC frame's sighting: its key is no RoCE header's
_MIX = np.int64(0x100000001B3)  # FNV prime: mixes the quanta into one key field


def _pfc_keys(p: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PFC frames (a pause on one link, seen by the host and the mirror of its port): per
    row whether it is one, its sender's MAC (hashed: the same at every vantage) and its
    content (class-enable vector and the eight quanta, mixed into one integer)."""
    if "encap" not in p or "pfc_class_enable" not in p:
        zero = np.zeros(len(p), np.int64)
        return np.zeros(len(p), bool), zero, zero
    is_pfc = np.zeros(len(p), bool)
    is_pfc[pfc_rows(p)] = True
    mac = pd.Categorical(p["src_mac"])
    macs = coded_hashes(mac.codes.astype(np.int64), [str(c) for c in mac.categories])
    content = ints(p["pfc_class_enable"])
    with np.errstate(over="ignore"):
        for k in range(8):
            content = content * _MIX + ints(p[f"pfc_quanta_{k}"])
    return is_pfc, macs, content & np.int64((1 << 62) - 1)


# A frame with a header anomaly, or whose ICRC fails (its bytes are not the packet's), is
# malformed at its own capture: it stays a sighting (and a merged row) of its own vantage.
UNMATCHED_ANOMALIES = (*MALFORMED_ROCE, "bad_icrc")


def _matchable(p: pd.DataFrame) -> np.ndarray:
    """Intact RoCE frames (no header anomaly, no failed ICRC)."""
    roce = p["encap"].isin(ROCE_ENCAPS).to_numpy()
    broken = p["anomaly"].isin(UNMATCHED_ANOMALIES).to_numpy() if "anomaly" in p else False
    return np.asarray(roce & ~broken & p["psn"].notna().to_numpy(), dtype=bool)


def sightings(tables: Sequence[VantageTable]) -> tuple[pd.DataFrame, pd.Index]:
    """Every frame of every vantage as a sighting (SIGHTING_COLUMNS), keyed; and the IP
    code space (code -> address)."""
    space, srcs, dsts = _ip_codes(tables)
    parts = []
    for v, (t, src, dst) in enumerate(zip(tables, srcs, dsts, strict=True)):
        p = t.packets
        part = {
            "vantage": np.full(len(p), v, np.int16),
            "row": np.arange(len(p), dtype=np.int64),
            "ts_ns": p["ts_ns"].to_numpy(np.int64),
            "src": src,
            "dst": dst,
        }
        is_pfc, mac, content = _pfc_keys(p)
        part["dest_qp"] = np.where(is_pfc, mac, ints(p["dest_qp"]))
        part["psn"] = np.where(is_pfc, content, ints(p["psn"]))
        part["opcode"] = np.where(is_pfc, PFC_OPCODE, ints(p["opcode"]))
        part["icrc"] = ints(p["icrc"])
        part["matchable"] = _matchable(p) | is_pfc
        parts.append(pd.DataFrame(part))
    s = pd.concat(parts, ignore_index=True)
    lo, hi = np.minimum(s["src"], s["dst"]), np.maximum(s["src"], s["dst"])
    s["conn"] = np.where(lo >= 0, lo.astype(np.int64) * max(len(space), 1) + hi, -1)
    return keyed(s), space


def _fill_icrc(s: pd.DataFrame) -> np.ndarray:
    """An ICRC cut off by a snap length is the one the other sightings of the same key
    (without ICRC) carry, when they all carry one and the same; else it stays unknown."""
    icrc = s["icrc"].to_numpy().copy()
    unknown = s["matchable"].to_numpy() & (icrc < 0)
    if not unknown.any():
        return icrc
    group = s.groupby(list(_ICRCLESS), sort=False).ngroup().to_numpy()
    known = pd.Series(np.where(icrc >= 0, icrc, np.nan))
    stats = known.groupby(group).agg(["nunique", "max"])
    one = (stats["nunique"] == 1).reindex(group, fill_value=False).to_numpy()
    value = stats["max"].reindex(group).to_numpy()
    fill = unknown & one
    icrc[fill] = value[fill].astype(np.int64)
    return icrc


def keyed(s: pd.DataFrame) -> pd.DataFrame:
    """The sighting table with `key` and `occurrence` (re)computed: pure over any set of
    whole connections (a partition)."""
    s = s.assign(icrc=_fill_icrc(s)) if len(s) else s
    key = np.full(len(s), -1, np.int64)
    m = s["matchable"].to_numpy()
    if m.any():
        key[m] = s.loc[m].groupby(list(KEY_FIELDS), sort=False).ngroup().to_numpy()
    occurrence = pd.Series(key).groupby([s["vantage"].to_numpy(), key]).cumcount()
    return s.assign(key=key, occurrence=occurrence.to_numpy(np.int32))


def anchors(s: pd.DataFrame) -> pd.DataFrame:
    """Sightings of keys that every vantage holding them holds once, held by two vantages
    or more: one packet beyond doubt (no resend, no duplicate), the clock fit's evidence.
    Per partition: (conn, key) names a packet across partitions."""
    m = s[(s["key"] >= 0) & (s["src"] >= 0)]  # a PFC frame crosses no host pair
    per = m.groupby(["key", "vantage"], sort=False).size()
    keys = per.groupby(level=0).agg(["max", "size"])
    good = keys.index[(keys["max"] == 1) & (keys["size"] >= 2)]
    return m[m["key"].isin(good)][["key", "vantage", "ts_ns", "src", "dst", "conn"]]


MAX_ANCHORS = 2_000_000  # anchor sightings the clock fit takes; above it, a sample


def anchor_sample(a: pd.DataFrame, cap: int | None = None) -> pd.DataFrame:
    """At most about `cap` anchor sightings: every k-th anchor packet by (conn, key), the
    same in memory and streamed. A sample keeps the fit honest: fewer packets leave a wider
    corridor of lines none contradicts, so the reported uncertainty grows, never shrinks."""
    cap = MAX_ANCHORS if cap is None else cap
    if len(a) <= cap:
        return a
    step = -(-len(a) // cap)
    group = a.groupby(["conn", "key"], sort=False).ngroup().to_numpy()
    return a[group % step == 0]


def hop_medians(s: pd.DataFrame, aligned_ns: np.ndarray) -> pd.Series:
    """Median aligned time from vantage u to vantage v of the anchor packets, per direction:
    indexed (src, dst, u, v). Where a packet seen at u is due at v."""
    a = anchors(s)
    x = a[["conn", "key", "vantage", "src", "dst"]].assign(t=aligned_ns[a.index.to_numpy()])
    both = x.merge(x[["conn", "key", "vantage", "t"]], on=["conn", "key"], suffixes=("_u", "_v"))
    both = both[both["vantage_u"] != both["vantage_v"]]
    by = [both["src"], both["dst"], both["vantage_u"], both["vantage_v"]]
    return (both["t_v"] - both["t_u"]).groupby(by).median()


def _due(pool: pd.DataFrame, v: int, hops: pd.Series) -> np.ndarray:
    """When each pool packet is due at vantage v: its first sighting's time plus the
    direction's median delay from that vantage to v (0 when no anchor shows it)."""
    to = np.full(len(pool), v, np.int16)
    idx = pd.MultiIndex.from_arrays([pool["src"], pool["dst"], pool["vantage"], to])
    delay = hops.reindex(idx).fillna(0).to_numpy(np.int64) if len(hops) else 0
    return pool["first_t"].to_numpy() + delay


def _nearest(
    rows: np.ndarray, s: pd.DataFrame, t: np.ndarray, pool: pd.DataFrame, window_ns: int
) -> np.ndarray:
    """Per sighting row, the pool packet of its key due nearest its aligned time (within the
    window), each pool packet taken once (the nearest sighting wins); -1 where none."""
    if len(pool) == 0 or len(rows) == 0:
        return np.full(len(rows), -1, np.int64)
    left = pd.DataFrame(
        {"key": s["key"].to_numpy()[rows], "t": t[rows], "at": np.arange(len(rows))}
    )
    right = pool[["key", "t", "packet"]].assign(due=pool["t"])
    got = pd.merge_asof(
        left.sort_values("t", kind="stable"),
        right.sort_values("t", kind="stable"),
        on="t",
        by="key",
        direction="nearest",
        tolerance=int(window_ns),
    )
    got = got[got["packet"].notna()]
    got = got.assign(gap=(got["t"] - got["due"]).abs())
    got = got.sort_values(["gap", "at"], kind="stable").drop_duplicates("packet")
    out = np.full(len(rows), -1, np.int64)
    out[got["at"].to_numpy()] = got["packet"].to_numpy(np.int64)
    return out


def match(
    s: pd.DataFrame, aligned_ns: np.ndarray, order: Sequence[int], window_ns: int
) -> np.ndarray:
    """Packet id per sighting. Vantages are taken in `order`; each sighting joins the packet
    of its key due nearest in aligned time (within `window_ns`; due: `hop_medians`) that no
    sighting of its own vantage holds yet, else starts a new packet. Frames that are not
    matchable are packets of their own."""
    packet = np.full(len(s), -1, np.int64)
    vantage, matchable = s["vantage"].to_numpy(), s["matchable"].to_numpy()
    hops = hop_medians(s, aligned_ns)
    pools: list[pd.DataFrame] = []
    next_id = 0
    for v in order:
        rows = np.flatnonzero((vantage == v) & matchable)
        pool = pd.concat(pools, ignore_index=True) if pools else pd.DataFrame()
        if len(pool):
            pool = pool.assign(t=_due(pool, v, hops))
        ids = _nearest(rows, s, aligned_ns, pool, window_ns)
        new = ids < 0
        ids[new] = next_id + np.arange(int(new.sum()))
        next_id += int(new.sum())
        packet[rows] = ids
        fresh = rows[new]
        cols = s.iloc[fresh][["key", "vantage", "src", "dst"]].reset_index(drop=True)
        pools.append(cols.assign(first_t=aligned_ns[fresh], packet=ids[new]))
    alone = np.flatnonzero(packet < 0)
    packet[alone] = next_id + np.arange(len(alone))
    return packet


def by_connection(s: pd.DataFrame) -> Iterator[pd.DataFrame]:
    """The sighting table in partitions, one per connection (the unordered endpoint pair),
    each keyed on its own and indexed from 0: every sighting of a packet is in one
    partition, so anchors, matching and paths run on each alone (what a streaming or Dask
    layer does; `match_by_connection` is the in-memory form)."""
    for _, part in s.groupby("conn", sort=False):
        yield keyed(part.reset_index(drop=True))


def match_by_connection(
    s: pd.DataFrame, aligned_ns: np.ndarray, order: Sequence[int], window_ns: int
) -> np.ndarray:
    """`match`, one connection at a time: the same packets (ids numbered on per partition)."""
    packet = np.empty(len(s), np.int64)
    base = 0
    for rows in s.groupby("conn", sort=False).indices.values():
        part = keyed(s.iloc[rows].reset_index(drop=True))
        ids = match(part, aligned_ns[rows], order, window_ns)
        packet[rows] = ids + base
        base += int(ids.max(initial=-1)) + 1
    return packet
