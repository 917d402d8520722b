"""Pairing the two directions of a connection: a BTH names only the destination QP.

Evidence, strongest first: responses repeat the PSNs of the reverse direction's requests
(ACKs, atomic ACKs, first READ responses; a NAK is answered by a resend of its PSN), the DETH
source QP for UD, and finally the IP pair when one flow each way is left. Plain numpy on the
few frames that carry evidence: the first responses of each flow and the requests they echo.
"""

from __future__ import annotations

import numpy as np

from rocetrace.analysis.order import FlowOrder, rank_in_group
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    POS_FIRST,
    POS_ONLY,
    PSN_MOD,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    TRANSPORTS,
    Prepared,
    isin_small,
    psn_delta,
)

UD = TRANSPORTS.index("UD")
PAIR_SAMPLE = 64  # responses per flow used to pair by PSN space
PAIR_MAX_DELAY_NS = 1_000_000_000
GSI_QP = 1  # QP1 carries the CM MADs
NAK_VOTE = 4

Votes = tuple[np.ndarray, np.ndarray, np.ndarray]  # (response flow, request flow, weight)


def dense_ids(*cols: np.ndarray) -> np.ndarray:
    """One id per distinct tuple of non-negative integer columns, numbered in tuple order."""
    ids = np.zeros(len(cols[0]), np.int64)
    for col in cols:
        col = col.astype(np.int64)
        ids = np.unique(ids * (int(col.max(initial=0)) + 1) + col, return_inverse=True)[1]
    return ids.reshape(-1)


def _first_of_each(rows: np.ndarray, *cols: np.ndarray) -> np.ndarray:
    """Rows (capture order) keeping the first of each distinct tuple of `cols`."""
    if len(rows) == 0:
        return rows
    keep = np.unique(dense_ids(*cols), return_index=True)[1]
    return rows[np.sort(keep)]


def _occurrence(groups: np.ndarray) -> np.ndarray:
    """The k-th time each value appears, in the given order (pandas' cumcount)."""
    order = np.argsort(groups, kind="stable")
    k = np.empty(len(groups), np.int64)
    k[order] = rank_in_group(groups[order])
    return k


def _psn_table(psns: np.ndarray) -> np.ndarray:
    table = np.zeros(PSN_MOD, bool)
    table[psns] = True
    return table


def _sampled_responses(pp: Prepared, flow_id: np.ndarray, order: FlowOrder) -> np.ndarray:
    """The first PAIR_SAMPLE responses of each flow, in capture order, one per (flow, PSN)."""
    answer = isin_small(pp.kind, (ACK, ATOMIC_ACK)) | (
        (pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_ONLY))
    )
    rows, flows = order.select(answer)
    rows = np.sort(rows[rank_in_group(flows) < PAIR_SAMPLE])
    return _first_of_each(rows, flow_id[rows], pp.psn[rows])


def ack_votes(pp: Prepared, flow_id: np.ndarray, order: FlowOrder, settled: np.ndarray) -> Votes:
    """A response repeats the PSN of a request sent the other way; when several QPs use the
    same PSNs, responses come back in the order the requests went out, so the k-th response
    with a PSN answers the k-th request with it. Flows already `settled` by NAKs are left
    out: a NAKed QP's requests go unanswered until its resend, which would shift the count."""
    resp = _sampled_responses(pp, flow_id, order)
    resp = resp[~settled[flow_id[resp]]]
    echoed = _psn_table(pp.psn[resp])[pp.psn & (PSN_MOD - 1)]
    req = np.flatnonzero(echoed & (flow_id >= 0) & (pp.kind == REQUEST) & (pp.transport != UD))
    req = req[~settled[flow_id[req]]]
    req = _first_of_each(req, flow_id[req], pp.psn[req])
    # Join on (requester IP, responder IP, PSN, k-th occurrence).
    a = np.concatenate([pp.dst[resp], pp.src[req]])
    b = np.concatenate([pp.src[resp], pp.dst[req]])
    g = dense_ids(a, b, np.concatenate([pp.psn[resp], pp.psn[req]]))
    g_resp, g_req = g[: len(resp)], g[len(resp) :]
    width = max(len(resp), len(req)) + 1
    key_resp = g_resp * width + _occurrence(g_resp)
    key_req = g_req * width + _occurrence(g_req)
    _, i, j = np.intersect1d(key_resp, key_req, assume_unique=True, return_indices=True)
    dt = pp.ts[resp[i]] - pp.ts[req[j]]
    ok = (dt >= 0) & (dt <= PAIR_MAX_DELAY_NS)
    r, q = flow_id[resp[i][ok]], flow_id[req[j][ok]]
    return r, q, np.ones(len(r), np.int64)


def nak_votes(pp: Prepared, flow_id: np.ndarray, order: FlowOrder) -> Votes:
    """A NAK is answered by a resend of its PSN: only the refused QP sends that PSN *again*
    after the NAK, going back to it (strong evidence, worth several ACK matches; QPs sending
    the same PSN for the first time are no evidence)."""
    naks = np.flatnonzero((flow_id >= 0) & isin_small(pp.kind, (NAK, RNR_NAK)))
    naks = _first_of_each(naks, flow_id[naks], pp.psn[naks])
    if len(naks) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    resent = _psn_table(pp.psn[naks])[pp.psn & (PSN_MOD - 1)]
    req = np.flatnonzero(resent & (flow_id >= 0) & (pp.kind == REQUEST))
    prev = order.last_before(flow_id[req], req)
    back = (prev >= 0) & (psn_delta(pp.psn[np.maximum(prev, 0)], pp.psn[req]) >= 0)
    req = req[back]  # the flow had gone at least this far: a resend
    g = dense_ids(
        np.concatenate([pp.dst[naks], pp.src[req]]),
        np.concatenate([pp.src[naks], pp.dst[req]]),
        np.concatenate([pp.psn[naks], pp.psn[req]]),
    )
    g_nak, g_req = g[: len(naks)], g[len(naks) :]
    by_group = np.argsort(g_req, kind="stable")
    lo = np.searchsorted(g_req[by_group], g_nak, "left")
    count = np.searchsorted(g_req[by_group], g_nak, "right") - lo
    nak_row = np.repeat(np.arange(len(naks)), count)
    within = np.arange(len(nak_row)) - np.repeat(np.cumsum(count) - count, count)
    n, q = naks[nak_row], req[by_group[np.repeat(lo, count) + within]]
    dt = pp.ts[q] - pp.ts[n]
    ok = (dt >= 0) & (dt <= PAIR_MAX_DELAY_NS)
    n, q = n[ok], q[ok]
    keep = np.unique(dense_ids(flow_id[n], flow_id[q], pp.psn[n]), return_index=True)[1]
    n, q = n[keep], q[keep]
    return flow_id[n], flow_id[q], np.full(len(n), NAK_VOTE, np.int64)


def settled_flows(votes: Votes, n_flows: int) -> np.ndarray:
    """Per flow, whether the given evidence alone pairs it."""
    settled = np.zeros(n_flows, bool)
    for x, y in greedy_pairs([votes], np.zeros(n_flows, np.int64)):
        settled[[x, y]] = True
    return settled


def greedy_pairs(votes: list[Votes], sport: np.ndarray) -> list[tuple[int, int]]:
    """One-to-one pairs, strongest evidence first (both directions' matches add up); ties go
    to flows on the same UDP source port, then to the lowest flow ids."""
    r = np.concatenate([v[0] for v in votes])
    q = np.concatenate([v[1] for v in votes])
    weight = np.concatenate([v[2] for v in votes])
    if len(r) == 0:
        return []
    lo, hi = np.minimum(r, q), np.maximum(r, q)
    pair_keys, inverse = np.unique(lo * len(sport) + hi, return_inverse=True)
    n = np.bincount(inverse.reshape(-1), weights=weight).astype(np.int64)
    x, y = pair_keys // len(sport), pair_keys % len(sport)
    same_sport = sport[x] == sport[y]
    rank = np.lexsort((y, x, ~same_sport, -n))
    taken: set[int] = set()
    pairs = []
    for a, b in zip(x[rank].tolist(), y[rank].tolist(), strict=True):
        if a != b and a not in taken and b not in taken:
            taken.update((a, b))
            pairs.append((a, b))
    return pairs


def ip_pairs(src: np.ndarray, dst: np.ndarray, qp: np.ndarray, pair: np.ndarray) -> list:
    """Pair the last unpaired flow of each direction of an IP pair with its reverse."""
    free = np.flatnonzero((pair < 0) & (qp != GSI_QP))
    width = int(max(src.max(initial=0), dst.max(initial=0))) + 1
    way = src[free] * width + dst[free]
    ways, count = np.unique(way, return_counts=True)
    alone = free[count[np.searchsorted(ways, way)] == 1]
    alone_way = src[alone] * width + dst[alone]
    by_way = np.argsort(alone_way)
    back = dst[alone] * width + src[alone]
    at = np.minimum(np.searchsorted(alone_way[by_way], back), max(len(alone) - 1, 0))
    found = (alone_way[by_way][at] == back) if len(alone) else np.zeros(0, bool)
    x, y = alone[found], alone[by_way[at[found]]]
    keep = x < y
    return list(zip(x[keep].tolist(), y[keep].tolist(), strict=True))


def pair_ud(
    src: np.ndarray,
    dst: np.ndarray,
    qp: np.ndarray,
    ud_src_qp: np.ndarray,
    pair: np.ndarray,
    paired_by: np.ndarray,
    peer_qp: np.ndarray,
) -> None:
    """UD: the DETH source QP names the peer; its reverse flow is the pair when present."""
    index: dict[tuple[int, int, int], int] = {
        (int(s), int(d), int(q)): f for f, (s, d, q) in enumerate(zip(src, dst, qp, strict=True))
    }
    for f in np.flatnonzero(ud_src_qp >= 0):
        peer_qp[f] = ud_src_qp[f]
        back = index.get((int(dst[f]), int(src[f]), int(ud_src_qp[f])))
        if back is not None and pair[f] < 0 and pair[back] < 0:
            pair[f], pair[back] = back, f
            paired_by[f] = paired_by[back] = "deth"
