"""Request -> response round-trip time per flow, from the capture point's view.

An ACK (or atomic ACK, or the first READ response) repeats the PSN of the request it answers;
the latest transmission of that PSN before it is the one answered. At a mirror port this is
only the part of the path beyond the mirror.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.order import group_starts
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    POS_FIRST,
    POS_ONLY,
    PSN_MOD,
    READ_RESPONSE,
    REQUEST,
    Prepared,
    isin_small,
)

COLUMNS = ["rtt_min_s", "rtt_median_s", "rtt_max_s"]


def _time_rank(pp: Prepared) -> tuple[np.ndarray, np.ndarray]:
    """(rank of each frame in time order, timestamps in time order); frames with equal
    timestamps keep capture order. Captures are nearly always in time order already."""
    if pp.in_time_order:
        return np.arange(len(pp), dtype=np.int64), pp.ts
    by_time = np.argsort(pp.ts, kind="stable")
    rank = np.empty(len(pp), np.int64)
    rank[by_time] = np.arange(len(pp))
    return rank, pp.ts[by_time]


def _sent_by(pp: Prepared, ts_in_time: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per frame index: how many frames were sent at or before it (time rank bound)."""
    if not pp.in_time_order:
        return np.searchsorted(ts_in_time, pp.ts[a], "right")
    bound = a + 1  # in time order: every frame up to this one, plus any with its timestamp
    tie = np.flatnonzero(pp.ts[np.minimum(bound, len(pp) - 1)] == pp.ts[a])
    bound[tie] = np.searchsorted(pp.ts, pp.ts[a[tie]], "right")
    return bound


def _answered_requests(pp: Prepared, model: FlowModel) -> tuple[np.ndarray, np.ndarray]:
    """(answer frames, the request frame each answers): the latest request of the paired flow
    with the answer's PSN sent at or before the answer; answers without one are dropped."""
    answer = isin_small(pp.kind, (ACK, ATOMIC_ACK)) | (
        (pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_ONLY))
    )
    a, a_flow = model.order.select(answer)
    a = a[np.flatnonzero(model.pair[a_flow] >= 0)]
    echoed = np.zeros(PSN_MOD, bool)  # only requests whose PSN some answer repeats
    echoed[pp.psn[a]] = True
    r, r_flow = model.order.select((pp.kind == REQUEST) & echoed[pp.psn & (PSN_MOD - 1)])
    if len(a) == 0 or len(r) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rank, ts_in_time = _time_rank(pp)
    # Requests sorted by (flow, PSN, time); one composite key: dense (flow, PSN) id, time rank.
    key = (r_flow << 24) | pp.psn[r]
    by_key = np.argsort(key, kind="stable")
    r, key = r[by_key], key[by_key]
    starts = group_starts(key)
    dense = np.cumsum(starts) - 1
    bits = max(len(pp).bit_length(), 1)
    composite = (dense << bits) | rank[r]
    if not bool(np.all(composite[1:] >= composite[:-1])):
        by_time = np.argsort(composite, kind="stable")
        r, composite = r[by_time], composite[by_time]
    uniq = key[starts]
    wanted = (model.pair[model.flow_id[a]] << 24) | pp.psn[a]
    at = np.minimum(np.searchsorted(uniq, wanted), len(uniq) - 1)
    bound = _sent_by(pp, ts_in_time, a)
    j = np.searchsorted(composite, (at << bits) | bound, "left") - 1
    ok = (uniq[at] == wanted) & (j >= 0)
    ok &= (composite[np.maximum(j, 0)] >> bits) == at
    return a[ok], r[j[ok]]


def _by_flow_then_value(flow: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort (flow, value >= 0) pairs; one packed integer sort when both fit in 62 bits."""
    shift = int(value.max(initial=0)).bit_length()
    if shift + int(flow.max(initial=0)).bit_length() > 62:
        by = np.lexsort((value, flow))
        return flow[by], value[by]
    packed = np.sort((flow << shift) | value)
    return packed >> shift, packed & ((1 << shift) - 1)


def rtt_per_flow(pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """Per request flow (index = flow_id): rtt_min_s, rtt_median_s, rtt_max_s, rtt_samples."""
    n = len(model)
    stats = np.full((n, 3), np.nan)
    samples = np.zeros(n, np.int64)
    a, r = _answered_requests(pp, model)
    if len(a):
        flow, rtt_ns = _by_flow_then_value(model.flow_id[r], pp.ts[a] - pp.ts[r])
        rtt_s = rtt_ns / 1e9
        bounds = np.flatnonzero(group_starts(flow))
        count = np.diff(np.append(bounds, len(flow)))
        lower = rtt_s[bounds + (count - 1) // 2]
        upper = rtt_s[bounds + count // 2]
        median = np.where(count % 2 == 1, upper, (lower + upper) / 2)
        at = flow[bounds]
        stats[at] = np.column_stack([rtt_s[bounds], median, rtt_s[bounds + count - 1]])
        samples[at] = count
    out = pd.DataFrame(stats, columns=COLUMNS)
    out["rtt_samples"] = samples
    return out
