"""Pairing the two directions of a connection: a BTH names only the destination QP.

Evidence, strongest first: the CM exchange (REQ/REP name both QPNs, rocetrace.analysis.cm)
when the capture holds it, responses repeat the PSNs of the reverse direction's requests
(ACKs, atomic ACKs, first READ responses; a NAK is answered by a resend of its PSN), the DETH
source QP for UD, and finally the IP pair when one flow each way is left. Plain numpy on the
few frames that carry evidence: the first responses of each flow and the requests they echo.
"""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd

from rocetrace.analysis.order import FlowOrder, rank_in_group, stable_order
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    POS_FIRST,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    TRANSPORTS,
    Prepared,
    isin_small,
)
from rocetrace.capture.zeroed import zeroed
from rocetrace.psn import PSN_MOD
from rocetrace.psn import delta as psn_delta

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
    """The k-th time each value (>= 0) appears, in the given order (pandas' cumcount)."""
    order = stable_order(groups, int(groups.max(initial=0)))
    k = np.empty(len(groups), np.int64)
    k[order] = rank_in_group(groups[order])
    return k


class _PsnLookup:
    """Which frames carry one of a few PSNs, by one lookup per frame in a 2^24-entry table.
    The table is made once and cleared after each use: a fresh zeroed 16 MB per call cost
    ~5 ms of page faults in the pipeline (its freed memory goes back to the OS between
    runs), against ~0.5 ms warm. Its pages come from their own mapping (capture.zeroed):
    only those a looked-up PSN was ever written into are backed by memory (from the heap,
    calloc had made ~12 MB of its 16 resident at 1M frames, for the process' lifetime)."""

    def __init__(self) -> None:
        self._table: np.ndarray | None = None
        self._lock = threading.Lock()

    def frames_with(self, psn: np.ndarray, wanted: np.ndarray) -> np.ndarray:
        """Indices into `psn` of the values in `wanted` (PSNs or -1; -1 reads and marks the
        table's last entry, as psn & (PSN_MOD - 1) would)."""
        with self._lock:
            if self._table is None:
                self._table = zeroed((PSN_MOD,), np.bool_)
            self._table[wanted] = True
            try:
                return np.flatnonzero(np.take(self._table, psn))
            finally:
                self._table[wanted] = False


_PSN_LOOKUP = _PsnLookup()


def frames_with_psn(psn: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Indices into `psn` (a frame column) of the values in `wanted`, through the one
    shared 2^24-entry table (pairing and RTT both look PSNs up)."""
    return _PSN_LOOKUP.frames_with(psn, wanted)


def _with_psn_of(pp: Prepared, rows: np.ndarray) -> np.ndarray:
    """Frames carrying one of the PSNs of `rows`."""
    return frames_with_psn(pp.psn, pp.psn[rows])


def _sampled_responses(pp: Prepared, flow_id: np.ndarray) -> np.ndarray:
    """The first PAIR_SAMPLE responses of each flow, in capture order, one per (flow, PSN)."""
    answer = isin_small(pp.kind, (ACK, ATOMIC_ACK)) | (
        (pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_ONLY))
    )
    rows = np.flatnonzero(answer)
    flows = flow_id[rows]  # one gather: flow_id is read at random, mostly out of cache
    inside = np.flatnonzero(flows >= 0)
    rows, flows = rows[inside], flows[inside]
    early = np.flatnonzero(_occurrence(flows) < PAIR_SAMPLE)
    rows, flows = rows[early], flows[early]
    return _first_of_each(rows, flows, pp.psn[rows])


def ack_votes(pp: Prepared, flow_id: np.ndarray, settled: np.ndarray) -> Votes:
    """A response repeats the PSN of a request sent the other way; when several QPs use the
    same PSNs, responses come back in the order the requests went out, so the k-th response
    with a PSN answers the k-th request with it. Flows already `settled` by NAKs are left
    out: a NAKed QP's requests go unanswered until its resend, which would shift the count.
    Only frames with an answered PSN are looked at past the PSN lookup."""
    resp = _sampled_responses(pp, flow_id)
    resp = resp[~settled[flow_id[resp]]]
    req = _with_psn_of(pp, resp)
    req = req[(pp.kind[req] == REQUEST) & (pp.transport[req] != UD) & (flow_id[req] >= 0)]
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
    naks = np.flatnonzero(isin_small(pp.kind, (NAK, RNR_NAK)))
    naks = naks[flow_id[naks] >= 0]
    naks = _first_of_each(naks, flow_id[naks], pp.psn[naks])
    if len(naks) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    req = _with_psn_of(pp, naks)
    req = req[(pp.kind[req] == REQUEST) & (flow_id[req] >= 0)]
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


def ip_pairs(src: np.ndarray, dst: np.ndarray, qp: np.ndarray, taken: np.ndarray) -> list:
    """Pair the last flow not `taken` of each direction of an IP pair with its reverse."""
    free = np.flatnonzero(~taken & (qp != GSI_QP))
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


def flow_keys(src: np.ndarray, dst: np.ndarray, qp: np.ndarray) -> np.ndarray:
    """One int64 per (src code, dst code, QP), as flows.assign_flows packs them."""
    return (src.astype(np.int64) << 44) | (dst.astype(np.int64) << 24) | qp.astype(np.int64)


def _cm_legs(conns: pd.DataFrame, ips: np.ndarray) -> pd.DataFrame:
    """Both directions of every connection whose two QPNs are known, keyed like flows:
    requester -> responder goes to the responder's QP, and the reverse to the requester's."""
    conns = conns.dropna(subset=["requester_qpn", "responder_qpn"])
    code = pd.Series(np.arange(len(ips)), index=pd.Index(ips, dtype=object))
    legs = []
    for a, b in (("requester", "responder"), ("responder", "requester")):
        legs.append(pd.DataFrame({
            "src": conns[f"{a}_ip"].map(code), "dst": conns[f"{b}_ip"].map(code),
            "qp": conns[f"{b}_qpn"], "peer_qp": conns[f"{a}_qpn"],
            "connect": conns["connect_ts_ns"], "disconnect": conns["disconnect_ts_ns"],
        }))  # fmt: skip
    both = pd.concat(legs, ignore_index=True).dropna(subset=["src", "dst"])
    return both.fillna({"connect": np.iinfo(np.int64).min, "disconnect": np.iinfo(np.int64).max})


def cm_peers(
    conns: pd.DataFrame, ips: np.ndarray, keys: np.ndarray, first_ts: np.ndarray
) -> np.ndarray:
    """Per flow (`keys` as flow_keys), the peer QP its CM connection names, -1 for none.

    A QPN reused later in the capture belongs to the connection that was open when the
    flow's first frame went by (the latest one connected before it, not yet disconnected).
    """
    peer = np.full(len(keys), -1, np.int64)
    legs = _cm_legs(conns, ips) if len(conns) and len(keys) else None
    if legs is None or legs.empty:
        return peer
    leg_key = flow_keys(*(legs[c].to_numpy(np.int64) for c in ("src", "dst", "qp")))
    by_key = np.argsort(keys)
    at = np.minimum(np.searchsorted(keys[by_key], leg_key), len(keys) - 1)
    flow = by_key[at]
    connect, disconnect = legs["connect"].to_numpy(np.int64), legs["disconnect"].to_numpy(np.int64)
    ok = (keys[flow] == leg_key) & (connect <= first_ts[flow]) & (first_ts[flow] <= disconnect)
    flow, connect, peer_qp = flow[ok], connect[ok], legs["peer_qp"].to_numpy(np.int64)[ok]
    by_time = np.lexsort((connect, flow))
    flow, peer_qp = flow[by_time], peer_qp[by_time]
    latest = np.flatnonzero(np.diff(flow, append=-1) != 0)  # each flow's last connection
    peer[flow[latest]] = peer_qp[latest]
    return peer


def cm_pairs(src: np.ndarray, dst: np.ndarray, qp: np.ndarray, peer: np.ndarray) -> list:
    """Flows whose CM peers name each other: (x, y) with x < y."""
    keys = flow_keys(src, dst, qp)
    named = np.flatnonzero(peer >= 0)
    back = flow_keys(dst[named], src[named], peer[named])
    by_key = np.argsort(keys)
    at = np.minimum(np.searchsorted(keys[by_key], back), max(len(keys) - 1, 0))
    y = by_key[at]
    found = (keys[y] == back) & (peer[y] == qp[named]) & (named < y)
    return list(zip(named[found].tolist(), y[found].tolist(), strict=True))
