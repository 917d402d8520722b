"""PSN timelines: unwrap 24-bit PSNs per flow, find retransmitted packets and skipped PSNs.

Two data streams carry PSN-ordered data: the requests of a flow (its own PSN space) and the
READ responses of a flow (the PSN space of the reverse direction's READ requests). ACKs and
NAKs are coalesced and are not part of either stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.analysis.flows import UD, FlowModel
from rocetrace.analysis.order import group_starts, stable_order
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
_SPAN = BIG // 4  # values within +-_SPAN need no per-group shift in running_max_before


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
    offset = gidx * BIG  # lifts each group above the previous ones
    low: np.ndarray | int = 0
    if values.min() <= -_SPAN or values.max() >= _SPAN:  # shift each group to start at 0
        low = np.minimum.reduceat(values, np.flatnonzero(starts))[gidx]
    acc = np.maximum.accumulate(values - low + offset) - offset + low
    before = np.empty_like(acc)
    before[1:] = acc[:-1]
    before[starts] = _NONE
    return before


def build_stream(idx: np.ndarray, flow: np.ndarray, psn: np.ndarray, span: np.ndarray) -> Stream:
    """Rows in frame order (flow >= 0): sort by flow, then unwrap, mark resends and gaps."""
    order = stable_order(flow, int(flow.max(initial=0)) + 1)
    return sorted_stream(idx[order], flow[order], psn[order], span[order])


def sorted_stream(idx: np.ndarray, flow: np.ndarray, psn: np.ndarray, span: np.ndarray) -> Stream:
    """Rows already sorted by (flow, frame): unwrap, mark resends and gaps."""
    first = group_starts(flow)
    ext = unwrap(psn, first)
    end = ext + span - 1
    high = running_max_before(end, first)
    retransmitted = ~first & (ext <= high)
    gap = np.where(first, 0, np.maximum(ext - high - 1, 0))
    return Stream(idx, flow, first, ext, end, high, retransmitted, gap)


def request_stream(pp: Prepared, model: FlowModel, span: np.ndarray) -> Stream:
    """Requests of reliable and unreliable connections (UD PSNs carry no sequence)."""
    idx, flow = model.order.select((pp.kind == REQUEST) & (pp.transport != UD))
    return sorted_stream(idx, flow, pp.psn[idx], span[idx])


def response_stream(pp: Prepared, model: FlowModel, requests: Stream) -> Stream:
    """READ responses and atomic ACKs (each answers one request PSN); gaps count only READ
    response PSNs skipped within one READ (a later response of it came first)."""
    idx, flow = model.order.select(isin_small(pp.kind, (READ_RESPONSE, ATOMIC_ACK)))
    s = sorted_stream(idx, flow, pp.psn[idx], np.ones(len(idx), np.int64))
    s.gap = _read_gaps(pp, model, requests, s)
    return s


def _reads(pp: Prepared, model: FlowModel, req: Stream, s: Stream) -> tuple[np.ndarray, ...]:
    """First-time READ REQUESTs of the flows whose READ responses `s` holds: their flow,
    first and last response PSN (unwrapped), sorted by (flow, first PSN)."""
    asked = model.pair[np.unique(s.flow)]
    keep = pp.read_request[req.idx] & ~req.retransmitted & np.isin(req.flow, asked)
    return req.flow[keep], req.ext[keep], req.end[keep]


def _read_gaps(pp: Prepared, model: FlowModel, req: Stream, s: Stream) -> np.ndarray:
    """Per READ (the original request's PSN span), response PSNs skipped inside it. The
    responses are first moved by whole PSN cycles next to the first READ of their flow."""
    gap = np.zeros(len(s), np.int64)
    rows = np.flatnonzero(pp.kind[s.idx] == READ_RESPONSE)
    rows = rows[model.pair[s.flow[rows]] >= 0]
    read_flow, starts, ends = _reads(pp, model, req, s)
    if len(rows) == 0 or len(read_flow) == 0:
        return gap
    q = model.pair[s.flow[rows]]
    first_read = np.searchsorted(read_flow, q)
    has_reads = read_flow[np.minimum(first_read, len(read_flow) - 1)] == q
    rows, q, first_read = rows[has_reads], q[has_reads], first_read[has_reads]
    head = np.flatnonzero(group_starts(s.flow[rows]))
    cycles = np.round((s.ext[rows[head]] - starts[first_read[head]]) / PSN_MOD).astype(np.int64)
    ext = s.ext[rows] - PSN_MOD * np.repeat(cycles, np.diff(np.append(head, len(rows))))
    k = np.searchsorted(read_flow * BIG + starts, q * BIG + ext, side="right") - 1
    k = np.maximum(k, first_read)
    offset = ext - starts[k]
    inside = (offset >= 0) & (ext <= ends[k])
    rows, k, offset = rows[inside], k[inside], offset[inside]
    order = np.argsort(k, kind="stable")
    first = group_starts(k[order])
    high = np.maximum(running_max_before(offset[order], first), -1)
    gap[rows[order]] = np.maximum(offset[order] - high - 1, 0)
    return gap
