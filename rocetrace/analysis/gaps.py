"""PSN timelines: unwrap 24-bit PSNs per flow, find retransmitted packets and skipped PSNs.

Two data streams carry PSN-ordered data: the requests of a flow (its own PSN space) and the
READ responses of a flow (the PSN space of the reverse direction's READ requests). ACKs and
NAKs are coalesced and are not part of either stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.analysis.flows import UD, FlowModel
from rocetrace.analysis.prepared import (
    ATOMIC_ACK,
    PSN_MOD,
    READ_RESPONSE,
    REQUEST,
    Prepared,
    isin_small,
    psn_delta,
)

BIG = np.int64(1) << 42  # separates flows in one sorted key
_NONE = np.iinfo(np.int64).min // 4


@dataclass
class Stream:
    """One data stream, rows sorted by (flow, frame)."""

    idx: np.ndarray  # frame indices into Prepared
    flow: np.ndarray
    first: np.ndarray  # bool: first row of its flow
    ext: np.ndarray  # unwrapped PSN
    end: np.ndarray  # unwrapped last PSN occupied (READ REQUEST: its last response PSN)
    high_before: np.ndarray  # highest `end` earlier in the flow (very negative at first)
    retransmitted: np.ndarray
    gap: np.ndarray  # PSNs skipped just before this row

    def __len__(self) -> int:
        return len(self.idx)


def group_starts(flow: np.ndarray) -> np.ndarray:
    starts = np.ones(len(flow), bool)
    starts[1:] = flow[1:] != flow[:-1]
    return starts


def unwrap(psn: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Unwrap 24-bit PSNs within each group by accumulating signed modular steps."""
    if len(psn) == 0:
        return psn.astype(np.int64)
    step = np.empty(len(psn), np.int64)
    step[1:] = psn_delta(psn[1:], psn[:-1])
    step[starts] = psn[starts]
    total = np.cumsum(step)
    base = (total - step)[starts]
    return total - base[np.cumsum(starts) - 1]


def running_max_before(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per group, the maximum of the earlier values (_NONE on each group's first row)."""
    if len(values) == 0:
        return values.copy()
    gidx = np.cumsum(starts) - 1
    low = np.minimum.reduceat(values, np.flatnonzero(starts))[gidx]
    acc = np.maximum.accumulate(values - low + gidx * BIG) - gidx * BIG + low
    before = np.empty_like(acc)
    before[1:] = acc[:-1]
    before[starts] = _NONE
    return before


def build_stream(idx: np.ndarray, flow: np.ndarray, psn: np.ndarray, span: np.ndarray) -> Stream:
    """Rows already in frame order; sort by flow, unwrap, mark resends and gaps."""
    order = np.argsort(flow, kind="stable")
    idx, flow, psn, span = idx[order], flow[order], psn[order], span[order]
    first = group_starts(flow)
    ext = unwrap(psn, first)
    end = ext + span - 1
    high = running_max_before(end, first)
    retransmitted = ~first & (ext <= high)
    gap = np.where(first, 0, np.maximum(ext - high - 1, 0))
    return Stream(idx, flow, first, ext, end, high, retransmitted, gap)


def request_stream(pp: Prepared, model: FlowModel, span: np.ndarray) -> Stream:
    """Requests of reliable and unreliable connections (UD PSNs carry no sequence)."""
    idx = np.flatnonzero((pp.kind == REQUEST) & (model.flow_id >= 0) & (pp.transport != UD))
    return build_stream(idx, model.flow_id[idx], pp.psn[idx], span[idx])


def response_stream(pp: Prepared, model: FlowModel, requests: Stream) -> Stream:
    """READ responses and atomic ACKs (each answers one request PSN); gaps count only READ
    response PSNs skipped within one READ (a later response of it came first)."""
    idx = np.flatnonzero(isin_small(pp.kind, (READ_RESPONSE, ATOMIC_ACK)) & (model.flow_id >= 0))
    s = build_stream(idx, model.flow_id[idx], pp.psn[idx], np.ones(len(idx), np.int64))
    s.gap = _read_gaps(pp, model, requests, s)
    return s


def _read_gaps(pp: Prepared, model: FlowModel, req: Stream, s: Stream) -> np.ndarray:
    """Per READ (the original request's PSN span), response PSNs skipped inside it."""
    gap = np.zeros(len(s), np.int64)
    for f in np.unique(s.flow):
        q = model.pair[f]
        rows = np.flatnonzero((s.flow == f) & (pp.kind[s.idx] == READ_RESPONSE))
        reads = np.flatnonzero((req.flow == q) & pp.read_request[req.idx] & ~req.retransmitted)
        if q < 0 or len(reads) == 0 or len(rows) == 0:
            continue
        starts, ends = req.ext[reads], req.end[reads]
        ext = s.ext[rows]
        ext = ext - PSN_MOD * np.round((ext[0] - starts[0]) / PSN_MOD).astype(np.int64)
        k = np.clip(np.searchsorted(starts, ext, side="right") - 1, 0, None)
        offset = ext - starts[k]
        inside = (offset >= 0) & (ext <= ends[k])
        rows, k, offset = rows[inside], k[inside], offset[inside]
        order = np.argsort(k, kind="stable")
        first = group_starts(k[order])
        high = np.maximum(running_max_before(offset[order], first), -1)
        gap[rows[order]] = np.maximum(offset[order] - high - 1, 0)
    return gap
