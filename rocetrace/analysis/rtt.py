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
from rocetrace.analysis.pairing import frames_with_psn
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    POS_FIRST,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
    Prepared,
    isin_small,
)

COLUMNS = ["rtt_min_s", "rtt_median_s", "rtt_max_s"]


def _answers(pp: Prepared, model: FlowModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(answer frames, the flow each answers, its PSN) for answers of a paired flow."""
    answer = isin_small(pp.kind, (ACK, ATOMIC_ACK)) | (
        (pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_ONLY))
    )
    a, flow, psn = _in_flows(pp, model, np.flatnonzero(answer))
    asked = model.pair[flow]
    paired = np.flatnonzero(asked >= 0)
    return a[paired], asked[paired], psn[paired]


def _echoed_requests(pp: Prepared, model: FlowModel, psns: np.ndarray) -> tuple[np.ndarray, ...]:
    """(request frames, their flows, their PSNs) of the requests whose PSN is among `psns`:
    only these can be answered, a small share of all requests. The PSN table is pairing's,
    kept between calls (a fresh zeroed 16 MB table costs a memset and page faults)."""
    frames = frames_with_psn(pp.psn, psns)
    return _in_flows(pp, model, frames[pp.kind[frames] == REQUEST])


def _in_flows(pp: Prepared, model: FlowModel, frames: np.ndarray) -> tuple[np.ndarray, ...]:
    """(frames, their flows, their PSNs) of those `frames` in a flow and with a PSN."""
    flow, psn = model.flow_id[frames], pp.psn[frames]
    keep = np.flatnonzero((flow >= 0) & (psn >= 0))
    return frames[keep], flow[keep], psn[keep]


def _sorted_pairs(major: np.ndarray, minor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort (major, minor) pairs of integers >= 0: one sort of packed integers when both fit
    in 62 bits, else two stable argsorts (np.lexsort is ~30 times slower)."""
    shift = int(minor.max(initial=0)).bit_length()
    if shift + int(major.max(initial=0)).bit_length() > 62:
        by = np.argsort(minor, kind="stable")
        by = by[np.argsort(major[by], kind="stable")]
        return major[by], minor[by]
    packed = np.sort((major << shift) | minor)
    return packed >> shift, packed & ((1 << shift) - 1)


def _answered_rtts(pp: Prepared, model: FlowModel) -> tuple[np.ndarray, np.ndarray]:
    """(request flow, RTT in ns) per answer whose request was seen: the latest request of the
    paired flow with the answer's PSN sent at or before the answer.

    Requests and answers are sorted together by (flow, PSN, time code): a request's code is
    2 * its time (ns since the first), an answer's 2 * its time + 1, so an answer sorts right
    after the requests sent at or before it. The answered request is the last request before
    it, if of the same (flow, PSN); among requests sent at the same time any gives the same
    RTT. The codes give both times back: a sort of packed integers, no argsort, and no time
    order needed."""
    a, asked, a_psn = _answers(pp, model)
    r, r_flow, r_psn = _echoed_requests(pp, model, a_psn)
    if len(a) == 0 or len(r) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ts_r, ts_a = pp.ts[r], pp.ts[a]
    first = min(ts_r.min(), ts_a.min())
    key = np.concatenate(((r_flow << 24) | r_psn, (asked << 24) | a_psn))
    code = np.concatenate((2 * (ts_r - first), 2 * (ts_a - first) + 1))
    key, code = _sorted_pairs(key, code)
    is_answer = (code & 1).astype(bool)
    at = np.flatnonzero(is_answer)
    before = at - np.arange(len(at))  # requests sorted before each answer
    hit = np.flatnonzero(before > 0)
    at, req = at[hit], np.flatnonzero(~is_answer)[before[hit] - 1]
    hit = np.flatnonzero(key[req] == key[at])
    at, req = at[hit], req[hit]
    return key[req] >> 24, (code[at] >> 1) - (code[req] >> 1)


def rtt_per_flow(pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """Per request flow (index = flow_id): rtt_min_s, rtt_median_s, rtt_max_s, rtt_samples."""
    n = len(model)
    stats = np.full((n, 3), np.nan)
    samples = np.zeros(n, np.int64)
    flow, rtt_ns = _answered_rtts(pp, model)
    if len(flow):
        flow, rtt_ns = _sorted_pairs(flow, rtt_ns)
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
