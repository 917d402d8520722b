"""PSN timelines: unwrap 24-bit PSNs per flow, find retransmitted packets and skipped PSNs.

Two data streams carry PSN-ordered data: the requests of a flow (its own PSN space) and the
READ responses of a flow (the PSN space of the reverse direction's READ requests). ACKs and
NAKs are coalesced and are not part of either stream.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.analysis import native
from rocetrace.analysis.flows import UD, FlowModel
from rocetrace.analysis.order import group_starts, stable_order
from rocetrace.analysis.prepared import (
    ATOMIC_ACK,
    PSN_MOD,
    READ_RESPONSE,
    REQUEST,
    Prepared,
    isin_small,
)

BIG = np.int64(1) << 42  # separates flows in one sorted key


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


def build_stream(idx: np.ndarray, flow: np.ndarray, psn: np.ndarray, span: np.ndarray) -> Stream:
    """Rows in frame order (flow >= 0): sort by flow, then unwrap, mark resends and gaps."""
    order = stable_order(flow, int(flow.max(initial=0)) + 1)
    return sorted_stream(idx[order], flow[order], psn[order], span[order])


def sorted_stream(
    idx: np.ndarray, flow: np.ndarray, psn: np.ndarray, span: np.ndarray | None
) -> Stream:
    """Rows already sorted by (flow, frame): unwrap, mark resends and gaps, in one C pass
    (a row depends on the rows before it). `span`: PSNs each row occupies, None for one
    each."""
    first, ext, end, high, retransmitted, gap = native.scan_stream(flow, psn, span)
    return Stream(idx, flow, first, ext, end, high, retransmitted, gap)


def request_stream(pp: Prepared, model: FlowModel, span: np.ndarray) -> Stream:
    """Requests of reliable and unreliable connections (UD PSNs carry no sequence)."""
    idx, flow = model.order.select((pp.kind == REQUEST) & (pp.transport != UD))
    return sorted_stream(idx, flow, pp.psn[idx], span[idx] if pp.read_request.any() else None)


def response_stream(pp: Prepared, model: FlowModel, requests: Stream) -> Stream:
    """READ responses and atomic ACKs (each answers one request PSN); gaps count only READ
    response PSNs skipped within one READ (a later response of it came first)."""
    idx, flow = model.order.select(isin_small(pp.kind, (READ_RESPONSE, ATOMIC_ACK)))
    s = sorted_stream(idx, flow, pp.psn[idx], None)
    s.gap = _read_gaps(pp, model, requests, s)
    return s


def _reads(pp: Prepared, model: FlowModel, req: Stream, s: Stream) -> tuple[np.ndarray, ...]:
    """First-time READ REQUESTs of the flows whose READ responses `s` holds: their flow,
    first and last response PSN (unwrapped), sorted by (flow, first PSN)."""
    asked = model.pair[s.flow[s.first]]  # each flow once: the stream is sorted by flow
    wanted = np.zeros(len(model) + 1, bool)
    wanted[asked] = True  # asked holds -1 for unpaired flows: the spare last slot
    keep = np.flatnonzero(pp.read_request[req.idx] & ~req.retransmitted & wanted[req.flow])
    return req.flow[keep], req.ext[keep], req.end[keep]


def _aligned_responses(
    pp: Prepared, model: FlowModel, s: Stream, read_flow: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, ...]:
    """READ response rows of flows whose peer sent READs: (rows, requesting flow, index of
    its first READ, response PSN moved by whole PSN cycles next to that first READ)."""
    rows = np.flatnonzero(pp.kind[s.idx] == READ_RESPONSE)
    heads = np.flatnonzero(group_starts(s.flow[rows]))  # one flow per group: one lookup each
    q = model.pair[s.flow[rows[heads]]]
    first_read = np.searchsorted(read_flow, q)
    has = (q >= 0) & (read_flow[np.minimum(first_read, len(read_flow) - 1)] == q)
    lengths = np.diff(np.append(heads, len(rows)))
    rows = rows[np.flatnonzero(np.repeat(has, lengths))]
    q, first_read, heads, lengths = q[has], first_read[has], heads[has], lengths[has]
    head_rows = rows[np.cumsum(lengths) - lengths]
    cycles = np.round((s.ext[head_rows] - starts[first_read]) / PSN_MOD).astype(np.int64)
    ext = s.ext[rows] - PSN_MOD * np.repeat(cycles, lengths)
    return rows, np.repeat(q, lengths), np.repeat(first_read, lengths), ext


def _read_gaps(pp: Prepared, model: FlowModel, req: Stream, s: Stream) -> np.ndarray:
    """Per READ (the original request's PSN span), response PSNs skipped inside it: each
    READ keeps its own highest PSN seen, as a re-issued READ's answers interleave."""
    gap = np.zeros(len(s), np.int64)
    read_flow, starts, ends = _reads(pp, model, req, s)
    if len(s) == 0 or len(read_flow) == 0:
        return gap
    rows, q, first_read, ext = _aligned_responses(pp, model, s, read_flow, starts)
    keys = read_flow * BIG + starts
    gap[rows] = native.read_gaps(keys, starts, ends, q * BIG + ext, ext, first_read)
    return gap
