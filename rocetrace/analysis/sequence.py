"""Per-flow sequence facts read off the state machine's events: retransmitted packets, PSN
gaps and the gaps no later packet fills (capture drops), the NAKs table, and round-trip
times taken only from packets sent once (Karn's rule: a resent packet's ACK may answer
either copy)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    POS_FIRST,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    Prepared,
    _ip_codes,
    isin_small,
    malformed_roce,
)
from rocetrace.dissectors.aeth import RNR_TIMER_US
from rocetrace.schema import NAK_KINDS
from rocetrace.schema.conform import empty_frame

BIG = np.int64(1) << 42  # separates conversations in one sorted key
_CATEGORIES = [*NAK_KINDS, "invalid_rd_request", "reserved"]
_KIND_DTYPE = pd.CategoricalDtype(_CATEGORIES)
_SYNDROME_CATEGORY = np.array(  # per 5-bit NAK code (0-4 defined), its category
    [0, 2, 3, 4, 5] + [_CATEGORIES.index("reserved")] * 27, np.int8
)
NAK_COLUMNS = [
    "frame", "ts_ns", "flow_id", "nak_flow_id", "kind", "psn", "rnr_timer_us", "stale",
    "generation_latency_ns",
]  # fmt: skip
RTT_COLUMNS = ["rtt_samples", "rtt_min_s", "rtt_median_s", "rtt_max_s"]


def flow_counts(c: cn.Conversations, model: FlowModel) -> tuple[np.ndarray, np.ndarray]:
    """Per flow (its own frames): retransmitted packets and PSNs skipped."""
    n = len(model)
    resent = np.flatnonzero(c.flags & cn.RESENT)
    gapped = np.flatnonzero(c.gap > 0)
    flow_of = model.flow_id  # looked up for those events only, not for every frame
    retx = np.bincount(flow_of[c.row[resent]], minlength=n)[:n]
    gaps = np.bincount(flow_of[c.row[gapped]], weights=c.gap[gapped], minlength=n)[:n]
    gaps = gaps.astype(np.int64)
    return retx, gaps


def capture_gaps(c: cn.Conversations, pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """Gaps in a flow's requests or READ responses whose skipped PSNs never show up later in
    that flow: the capture missed them (a sniffer drop), or they were never resent. In
    event order: by conversation (`conv`, its request flow), then capture order."""
    j = np.flatnonzero(c.gap > 0)
    if len(j) == 0:
        return empty_frame(dict.fromkeys(["flow_id", "ts_ns", "frame", "psns", "conv"], object))
    flow = model.flow_id[c.row]
    same_kind = np.where(c.kind == REQUEST, 0, 1)
    group = (flow * 2 + same_kind).astype(np.int64)
    valid = isin_small(c.kind, (REQUEST, READ_RESPONSE)) & (c.ext > np.iinfo(np.int64).min // 4)
    low = c.ext[valid].min(initial=0)
    key = np.sort(np.where(valid, group * BIG + (c.ext - low), -1))
    lo, hi = c.ext[j] - c.gap[j] - low, c.ext[j] - 1 - low
    base = group[j] * BIG
    seen = np.searchsorted(key, hi + base, "right") - np.searchsorted(key, lo + base, "left")
    drop = j[seen == 0]
    drop = drop[~_malformed_inside(c, pp, drop)]
    return pd.DataFrame(
        {
            "flow_id": flow[drop],
            "ts_ns": c.ts[drop],
            "frame": pp.frames_at(c.row[drop]),
            "psns": c.gap[drop],
            "conv": c.conv[drop],
        }
    )


def _malformed_inside(c: cn.Conversations, pp: Prepared, gaps: np.ndarray) -> np.ndarray:
    """Per gap event: does a malformed frame of the flow's IP pair, captured between the
    conversation's previous request and the gap, hold the missing PSNs? Then the capture
    did not drop them (the frame is in no flow: its headers are not trusted)."""
    bad = np.flatnonzero(malformed_roce(pp.table))
    if len(bad) == 0 or len(gaps) == 0:
        return np.zeros(len(gaps), bool)
    requests = np.flatnonzero(c.kind == REQUEST)
    k = np.searchsorted(requests, gaps) - 1
    prev = requests[np.maximum(k, 0)]
    before = np.where((k >= 0) & (c.conv[prev] == c.conv[gaps]), c.row[prev], -1)
    after = c.row[gaps]
    src, dst, ips = _ip_codes(pp.table)  # the codes of pp.ips, unmasked for malformed frames
    pairs, pair = np.unique(_ip_pair(src[bad], dst[bad], len(ips)), return_inverse=True)
    marks = np.sort(pair * len(pp) + bad)  # (IP pair, frame) of each malformed frame
    wanted = _ip_pair(pp.src[after], pp.dst[after], len(ips))
    at = np.minimum(np.searchsorted(pairs, wanted), len(pairs) - 1)
    base = at * len(pp)
    between = np.searchsorted(marks, base + after) > np.searchsorted(marks, base + before, "right")
    return (pairs[at] == wanted) & between


def _ip_pair(src: np.ndarray, dst: np.ndarray, n_ips: int) -> np.ndarray:
    """One int64 per (source, destination) IP code pair (the codes are int32: the product
    would overflow them past 46,340 addresses)."""
    return src.astype(np.int64) * n_ips + dst


def nak_table(c: cn.Conversations, pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """One row per NAK or RNR NAK frame: the flow it is about (null when its carrier is not
    paired), `stale` (its PSN was already acknowledged: the requester ignores it) and
    `generation_latency_ns` (first out-of-sequence request the capture saw -> this NAK)."""
    idx = np.flatnonzero(isin_small(pp.kind, (NAK, RNR_NAK)) & (model.flow_id >= 0))
    carrier = model.flow_id[idx]
    about = model.pair[carrier]
    code = pp.syndrome[idx] & 0x1F
    rnr = pp.kind[idx] == RNR_NAK
    kind = np.where(rnr, _CATEGORIES.index("rnr"), _SYNDROME_CATEGORY[code]).astype(np.int8)
    ev = _events_of(c, idx)
    has = ev >= 0
    stale = np.zeros(len(idx), bool)
    stale[has] = (c.flags[ev[has]] & cn.STALE) > 0
    latency = np.full(len(idx), -1, np.int64)
    linked = has.copy()
    linked[has] = c.link[ev[has]] >= 0
    latency[linked] = c.ts[ev[linked]] - c.ts[c.link[ev[linked]]]
    return pd.DataFrame(
        {
            "frame": pp.frames_at(idx),
            "ts_ns": pp.ts[idx],
            "flow_id": pd.arrays.IntegerArray(np.maximum(about, 0).astype(np.int32), about < 0),
            "nak_flow_id": carrier.astype(np.int32),
            "kind": pd.Categorical.from_codes(kind, dtype=_KIND_DTYPE),
            "psn": pp.psn[idx].astype(np.int64),
            "rnr_timer_us": np.where(rnr, np.asarray(RNR_TIMER_US)[code], np.nan),
            "stale": stale,
            "generation_latency_ns": pd.arrays.IntegerArray(np.maximum(latency, 0), ~linked),
        }
    )


def _events_of(c: cn.Conversations, rows: np.ndarray) -> np.ndarray:
    """The event index of each frame index (-1 for frames in no conversation)."""
    if len(rows) == 0:  # no NAK: no sort of every event by its frame
        return np.zeros(0, np.int64)
    by_row = np.argsort(c.row, kind="stable")
    sorted_rows = c.row[by_row]
    at = np.minimum(np.searchsorted(sorted_rows, rows), max(len(sorted_rows) - 1, 0))
    if len(sorted_rows) == 0:
        return np.full(len(rows), -1, np.int64)
    return np.where(sorted_rows[at] == rows, by_row[at], -1)


def nak_counts(naks: pd.DataFrame, n_flows: int) -> pd.DataFrame:
    """Per flow (index = flow_id), NAKs the peer sent about it, by kind."""
    kinds = naks["kind"].astype("category").cat
    code = [NAK_KINDS.index(k) if k in NAK_KINDS else -1 for k in kinds.categories]
    kind = np.array([*code, -1], np.int64)[kinds.codes.to_numpy()]
    keep = np.flatnonzero((kind >= 0) & naks["flow_id"].notna().to_numpy())
    flow = naks["flow_id"].to_numpy(np.int64, na_value=-1)[keep]
    counts = np.bincount(flow * len(NAK_KINDS) + kind[keep], minlength=n_flows * len(NAK_KINDS))
    return pd.DataFrame(
        counts.reshape(n_flows, len(NAK_KINDS)),
        index=pd.RangeIndex(n_flows),
        columns=[f"naks_{k}" for k in NAK_KINDS],
    ).astype(np.int64)


def rtt_per_flow(c: cn.Conversations, pp: Prepared, n_flows: int) -> pd.DataFrame:
    """Per request flow: min, median and max request -> answer time at the capture point,
    from answers to requests sent once (ACKs and atomic ACKs the state machine timed, first
    READ responses of READs answered once)."""
    acks = isin_small(c.kind, (ACK, ATOMIC_ACK))
    first_response = (c.kind == READ_RESPONSE) & ((c.flags & cn.RESENT) == 0)
    responses = np.flatnonzero(first_response)  # their positions only, not every frame's
    first_response[responses] = isin_small(pp.position[c.row[responses]], (POS_FIRST, POS_ONLY))
    ev = np.flatnonzero((acks | first_response) & (c.link >= 0))
    ev = ev[c.ts[c.link[ev]] <= c.ts[ev]]  # a clock that went back gives no sample
    rtt = (c.ts[ev] - c.ts[c.link[ev]]).astype(float) / 1e9
    out = np.full((n_flows, 3), np.nan)
    samples = np.bincount(c.conv[ev], minlength=n_flows)[:n_flows]
    if len(ev):
        df = pd.DataFrame({"flow": c.conv[ev], "rtt": rtt})
        g = df.groupby("flow")["rtt"]
        stats = pd.concat([g.min(), g.median(), g.max()], axis=1)
        out[stats.index.to_numpy(np.int64)] = stats.to_numpy()
    table = pd.DataFrame(out, columns=RTT_COLUMNS[1:])
    table.insert(0, "rtt_samples", np.asarray(samples, np.int64))
    return table
