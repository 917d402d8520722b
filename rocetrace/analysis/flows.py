"""The flow model: one flow per direction of traffic to one QP, key (src_ip, dst_ip, dest_qp).

Flows are numbered by first appearance, their frames sorted once by flow (order.py), and
the two directions of each connection paired (pairing.py): by the capture's CM connections
first (rocetrace.analysis.cm), then by PSN space, DETH source QP and IP pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rocetrace.analysis import pairing
from rocetrace.analysis.order import FlowOrder, counts_by, flow_order
from rocetrace.analysis.pairing import GSI_QP, UD
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    CNP,
    N_KINDS,
    NAK,
    POS_FIRST,
    POS_MIDDLE,
    READ_RESPONSE,
    RNR_NAK,
    TRANSPORTS,
    Prepared,
    isin_small,
)

RESPONSE_KINDS = (READ_RESPONSE, ACK, NAK, RNR_NAK, ATOMIC_ACK)
UC = TRANSPORTS.index("UC")


@dataclass
class FlowModel:
    """Per-frame flow ids plus per-flow keys and pairing (index = flow_id)."""

    flow_id: np.ndarray  # per frame, -1 outside any flow
    src: np.ndarray  # per flow: IP codes and QP
    dst: np.ndarray
    qp: np.ndarray
    pair: np.ndarray  # per flow: flow id of the reverse direction, -1 unknown
    peer_qp: np.ndarray  # per flow: QP receiving its responses, -1 unknown
    paired_by: np.ndarray  # per flow: "cm" | "psn" | "deth" | "ip_pair" | "" (object array)
    transport: np.ndarray  # per flow: index into TRANSPORTS, -1 unknown
    mtu: np.ndarray  # per flow: path MTU inferred from full-size segments, 0 unknown
    order: FlowOrder  # the frames of each flow, in capture order
    sport: np.ndarray  # per flow: its usual UDP source port, -1 unknown
    kinds: np.ndarray  # per flow: frames of each kind (prepared.py), shape (flows, kinds)
    ecn: np.ndarray  # per flow: frames with ECN 0..3, shape (flows, 4)
    priority: np.ndarray  # per flow: 802.1p priority (VLAN PCP, else DSCP / 8), -1 unknown

    def __len__(self) -> int:
        return len(self.src)


def _packed_keys(pp: Prepared) -> np.ndarray:
    """Per frame (src << 44) | (dst << 24) | qp, as pairing.flow_keys packs them, built in
    place in one array; negative when any part is missing (-1: an OR keeps the sign), so
    one compare finds the frames with a full key."""
    key = pp.src.astype(np.int64)  # IP codes are int32 (prepared.IP_CODE)
    key <<= 20
    key |= pp.dst
    key <<= 24
    key |= pp.qp
    return key


def assign_flows(pp: Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flow id per frame, numbered by first appearance; returns (flow_id, src, dst, qp).
    CNPs belong to no flow: they are attributed to the flow they throttle (congestion.py)."""
    key = _packed_keys(pp)
    inside = (key >= 0) & (pp.kind != CNP)
    if inside.all():  # hashing: numbered by appearance
        flow_id, keys = pd.factorize(key)
    else:
        rows = np.flatnonzero(inside)
        codes, keys = pd.factorize(key[rows])
        flow_id = np.full(len(key), -1, np.int64)
        flow_id[rows] = codes
    keys = np.asarray(keys, np.int64)
    flow_id = flow_id.astype(np.int64, copy=False)
    return flow_id, keys >> 44, (keys >> 24) & 0xFFFFF, keys & 0xFFFFFF


def split_by_connection(
    pp: Prepared, flow_id: np.ndarray, keys: np.ndarray, conns: pd.DataFrame | None
) -> tuple[np.ndarray, np.ndarray]:
    """A QP number reused by a new connection (a new CM REQ/REP, a new starting PSN) starts
    a new flow: frames of a flow key that several CM connections name go to the flow of
    the latest connection made at or before them. Returns (flow_id, key per flow)."""
    if conns is None or len(conns) < 2 or len(keys) == 0:
        return flow_id, keys
    legs = pairing._cm_legs(conns, pp.ips)
    if legs.empty:
        return flow_id, keys
    leg_key = pairing.flow_keys(*(legs[c].to_numpy(np.int64) for c in ("src", "dst", "qp")))
    reused, counts = np.unique(leg_key, return_counts=True)
    reused = reused[counts > 1]
    rows = np.flatnonzero((flow_id >= 0) & np.isin(keys[np.maximum(flow_id, 0)], reused))
    if len(rows) == 0:
        return flow_id, keys
    connect = legs["connect"].to_numpy(np.int64)
    order = np.lexsort((connect, leg_key))
    made = _legs_made_by(leg_key[order], connect[order], keys[flow_id[rows]], pp.ts[rows])
    epoch = np.zeros(len(flow_id), np.int64)
    epoch[rows] = np.maximum(made, 1) - 1  # frames before the first connection: its flow
    code = np.where(flow_id >= 0, flow_id * 64 + np.minimum(epoch, 63), -1)
    new_id, uniques = pd.factorize(code[flow_id >= 0])
    out = np.full(len(flow_id), -1, np.int64)
    out[flow_id >= 0] = new_id
    return out, keys[np.asarray(uniques, np.int64) // 64]


def _legs_made_by(
    leg_key: np.ndarray, connect: np.ndarray, key: np.ndarray, ts: np.ndarray
) -> np.ndarray:
    """Per (key, ts): how many connections of that key were made at or before ts (legs
    sorted by key, then connect time)."""
    lo = np.searchsorted(leg_key, key, "left")
    hi = np.searchsorted(leg_key, key, "right")
    out = np.zeros(len(key), np.int64)
    for k in np.unique(key):
        at = key == k
        out[at] = np.searchsorted(connect[lo[at][0] : hi[at][0]], ts[at], "right")
    return out


def majority(flow_id: np.ndarray, order: FlowOrder, values: np.ndarray) -> np.ndarray:
    """Most frequent non-negative value per flow (the smallest on a tie), -1 when none.
    Most flows use one value throughout (that of their first frame): only the others are
    counted."""
    n = len(order.bounds) - 1
    if n == 0:
        return np.zeros(0, np.int64)
    out = values[order.first_rows()]
    differs = np.flatnonzero(values != np.take(out, flow_id))  # flow -1 reads the last flow
    differs = differs[flow_id[differs] >= 0]
    out = out.astype(np.int64)
    mixed = np.flatnonzero(np.bincount(flow_id[differs], minlength=n))
    if len(mixed) == 0:
        return np.maximum(out, -1)
    rows = order.rows_of(mixed)
    rows = rows[np.flatnonzero(values[rows] >= 0)]
    out[mixed] = -1
    keys, counts = np.unique(
        (flow_id[rows] << 32) | values[rows].astype(np.int64), return_counts=True
    )
    best = np.lexsort((-counts, keys >> 32))
    first = np.unique(keys[best] >> 32, return_index=True)[1]
    top = keys[best][first]
    out[top >> 32] = top & 0xFFFFFFFF
    return np.maximum(out, -1)


def _mtus(pp: Prepared, flow_id: np.ndarray, n: int) -> np.ndarray:
    """Per flow, the largest FIRST/MIDDLE payload: every such segment is exactly one MTU.
    One unbuffered maximum in frame order (no gather through the flow order)."""
    payload_len = pp.column("payload_len")
    full = isin_small(pp.position, (POS_FIRST, POS_MIDDLE)) & (payload_len > 0)
    mtu = np.zeros(n + 1, payload_len.dtype)  # frames of no flow (-1) land in the last
    np.maximum.at(mtu, flow_id, np.where(full, payload_len, 0))
    return mtu[:n].astype(np.int64)


def _link(pair: np.ndarray, paired_by: np.ndarray, pairs: list, how: str) -> None:
    for x, y in pairs:
        pair[x], pair[y] = y, x
        paired_by[[x, y]] = how


def _first_ts(pp: Prepared, order: FlowOrder) -> np.ndarray:
    """Each flow's earliest timestamp."""
    if pp.in_time_order or len(order.rows) == 0:
        return pp.ts[order.first_rows()] if len(order.rows) else np.zeros(0, np.int64)
    return np.minimum.reduceat(pp.ts[order.rows], order.bounds[:-1])


def _without(votes: pairing.Votes, taken: np.ndarray) -> pairing.Votes:
    keep = ~taken[votes[0]] & ~taken[votes[1]]
    return votes[0][keep], votes[1][keep], votes[2][keep]


def _psn_pairs(pp: Prepared, flow_id: np.ndarray, order: FlowOrder, by_cm: np.ndarray,
               sport: np.ndarray) -> list:  # fmt: skip
    """PSN-space pairs among the flows the CM left unpaired."""
    nak = _without(pairing.nak_votes(pp, flow_id, order), by_cm)
    settled = pairing.settled_flows(nak, len(by_cm))
    votes = [pairing.ack_votes(pp, flow_id, settled | by_cm), nak]
    return pairing.greedy_pairs(votes, sport)


def _cm_peers(
    pp: Prepared, order: FlowOrder, keys: tuple[np.ndarray, np.ndarray, np.ndarray],
    conns: pd.DataFrame | None, links: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:  # fmt: skip
    """Per flow, the peer QP its CM connection names (-1 none); flows naming each other are
    linked as pairs."""
    if conns is None or len(conns) == 0:
        return np.full(len(keys[0]), -1, np.int64)
    packed = pairing.flow_keys(*keys)
    peer = pairing.cm_peers(conns, pp.ips, packed, _first_ts(pp, order))
    _link(*links, pairing.cm_pairs(*keys, peer), "cm")
    return peer


# Frame classes counted per flow in one bincount: kind x ECN (0-3, 4 for none) x transport
# (-1 for none, then TRANSPORTS).
_CLASSES = (N_KINDS, 5, len(TRANSPORTS) + 1)


def _classes(pp: Prepared) -> np.ndarray:
    """Each frame's class code in [0, prod(_CLASSES)), in 16 bits."""
    code = pp.kind.astype(np.int16)
    code *= _CLASSES[1]
    ecn = pp.column("ecn")
    code += np.where(ecn >= 0, ecn, 4).astype(np.int16, copy=False)
    code *= _CLASSES[2]
    code += pp.transport
    code += 1
    return code


def _counters(pp: Prepared, flow_id: np.ndarray, order: FlowOrder) -> tuple[np.ndarray, ...]:
    """Per flow: transport (the most frequent, the smallest on a tie), MTU, frames of each
    kind and of each ECN value."""
    n = len(order.bounds) - 1
    width = int(np.prod(_CLASSES))
    if (n + 1) * width > max(len(flow_id), 1 << 16):  # many flows: keep the table small
        kinds, ecn = _kinds_and_ecn(pp, flow_id, n)
        return majority(flow_id, order, pp.transport), _mtus(pp, flow_id, n), kinds, ecn
    code = flow_id + 1  # frames of no flow count in row 0
    code *= width
    code += _classes(pp)
    counts = np.bincount(code, minlength=(n + 1) * width).reshape(n + 1, *_CLASSES)[1:]
    kinds, ecn = counts.sum(axis=(2, 3)), counts[:, :, :4].sum(axis=(1, 3))
    by_transport = counts.sum(axis=(1, 2))[:, 1:]
    seen = by_transport.max(axis=1, initial=0) > 0
    transport = np.where(seen, by_transport.argmax(axis=1), -1).astype(np.int64)
    return transport, _mtus(pp, flow_id, n), kinds, ecn


def _kinds_and_ecn(pp: Prepared, flow_id: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per flow, frames of each kind and of each ECN value (without the transport)."""
    ecn = pp.column("ecn")
    both = counts_by(flow_id, n, pp.kind * 5 + np.where(ecn >= 0, ecn, 4), N_KINDS * 5)
    both = both.reshape(n, N_KINDS, 5)
    return both.sum(axis=2), both[:, :, :4].sum(axis=1)


def build_flow_model(pp: Prepared, conns: pd.DataFrame | None = None) -> FlowModel:
    """Flows, their transport and MTU, and the pairing of the two directions (`conns`: the
    capture's CM connections, which name peers outright).

    All on the calling thread: with the counters on a helper, the 1M-frame pipeline spent
    more CPU (its temporaries page-faulted in the helper's malloc arena), not less wall time.
    """
    flow_id, src, dst, qp = assign_flows(pp)
    keys = pairing.flow_keys(src, dst, qp)
    flow_id, keys = split_by_connection(pp, flow_id, keys, conns)
    src, dst, qp = keys >> 44, (keys >> 24) & 0xFFFFF, keys & 0xFFFFFF
    n = len(src)
    order = flow_order(flow_id, n)
    transport, mtu, kinds, ecn = _counters(pp, flow_id, order)
    sport = majority(flow_id, order, pp.udp_sports())
    pair = np.full(n, -1, np.int64)
    paired_by = np.full(n, "", dtype=object)
    cm_peer = _cm_peers(pp, order, (src, dst, qp), conns, (pair, paired_by))
    by_cm = cm_peer >= 0
    _link(pair, paired_by, _psn_pairs(pp, flow_id, order, by_cm, sport), "psn")
    peer_qp = np.full(n, -1, np.int64)
    ud_src_qp = np.full(n, -1, np.int64)
    if (transport == UD).any():
        src_qp = majority(flow_id, order, np.where(pp.transport == UD, pp.deth_src_qp, -1))
        ud_src_qp = np.where(transport == UD, src_qp, -1)
    pairing.pair_ud(src, dst, qp, ud_src_qp, pair, paired_by, peer_qp)
    gsi = np.where(transport == UD, GSI_QP, qp)
    _link(pair, paired_by, pairing.ip_pairs(src, dst, gsi, (pair >= 0) | by_cm), "ip_pair")
    has_pair = pair >= 0
    peer_qp[has_pair] = qp[pair[has_pair]]
    peer_qp[by_cm], paired_by[by_cm] = cm_peer[by_cm], "cm"  # also when the reverse is absent
    peer_qp[transport == UC] = -1  # UC sends no responses: no QP receives them
    mtu[has_pair] = np.maximum(mtu[has_pair], mtu[pair[has_pair]])
    return FlowModel(
        flow_id, src, dst, qp, pair, peer_qp, paired_by, transport, mtu, order, sport, kinds, ecn,
        _priorities(pp, flow_id, order),
    )  # fmt: skip


def _priorities(pp: Prepared, flow_id: np.ndarray, order: FlowOrder) -> np.ndarray:
    """Per flow, the priority PFC pauses it by: its VLAN PCP when tagged, else its DSCP's
    class selector (DSCP / 8: the usual DSCP-to-priority map of PFC in DSCP trust mode)."""
    pcp = majority(flow_id, order, pp.column("pcp"))
    dscp = majority(flow_id, order, pp.column("dscp"))
    return np.where(pcp >= 0, pcp, np.where(dscp >= 0, dscp >> 3, -1))


@dataclass(frozen=True)
class ReadSpans:
    """PSNs each frame occupies (read_spans), held as its exceptions: 1 for every frame
    but the READ REQUESTs of a flow, whose spans are kept beside their rows. A per-frame
    int64 array would hold 8 MB per million frames through the state machine's pass, the
    analysis' peak, for a few thousand READs; `spans[rows]` gives the full values."""

    reads: np.ndarray  # frame indices of the READ REQUESTs, ascending
    span: np.ndarray  # the PSNs each of them takes (int64)
    is_read: np.ndarray | None  # per frame: one of `reads` (bool); None when there are none
    unsized: bool = False  # some READ's connection shows no MTU: it took the fallback

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        """The span of each frame of `rows`: int32, half the memory in the state machine's
        pass, unless a READ's span passes it (a hostile MTU): int64 then."""
        wide = len(self.span) and int(self.span.max()) > np.iinfo(np.int32).max
        out = np.ones(len(rows), np.int64 if wide else np.int32)
        if self.is_read is not None:
            hit = np.flatnonzero(self.is_read[rows])
            out[hit] = self.span[np.searchsorted(self.reads, rows[hit])]
        return out


def read_spans(pp: Prepared, model: FlowModel, fallback_mtu: int | None = None) -> ReadSpans:
    """PSNs each frame occupies: a READ REQUEST takes one per response packet it asks for,
    counted in the responder's path MTU (its full-size READ responses: when the two ends
    disagree on the MTU, the responder's count is what the PSNs on the wire follow).
    A READ whose connection shows no MTU takes `fallback_mtu`, by default the largest
    any flow of the table shows (a partition is given the capture's). Every other frame
    takes one."""
    reads, mtu = _read_mtus(pp, model)
    if len(reads) == 0:
        return ReadSpans(reads, np.zeros(0, np.int64), None)
    fallback = model.mtu.max(initial=0) if fallback_mtu is None else fallback_mtu
    unsized = mtu <= 0
    mtu = np.where(unsized, fallback if fallback > 0 else 1024, mtu)
    if unsized.any():  # no fallback may be below what the connection's packets carried
        mtu[unsized] = np.maximum(mtu[unsized], _mtu_floor(pp, model, reads[unsized]))
    length = np.maximum(pp.dma_length_at(reads), 0)
    is_read = np.zeros(len(pp), bool)
    is_read[reads] = True
    span = np.maximum(1, -(-length // mtu)).astype(np.int64)
    return ReadSpans(reads, span, is_read, bool(unsized.any()))


IB_MTUS = np.array([256, 512, 1024, 2048, 4096], np.int64)


def _mtu_floor(pp: Prepared, model: FlowModel, reads: np.ndarray) -> np.ndarray:
    """Per READ of `reads`: the smallest path MTU its connection's packets allow. No packet
    carries more than its path MTU, and a path MTU is one of IB_MTUS: a connection whose
    messages are all single packets shows no full-size segment, yet a 2048-byte WRITE ONLY
    or READ RESPONSE ONLY shows an MTU of at least 2048 (a larger payload than any of
    IB_MTUS stands for itself)."""
    largest = _largest_payload(pp, model, np.flatnonzero(model.flow_id >= 0))
    flow = model.flow_id[reads]
    pair = model.pair[flow]
    seen = np.maximum(largest[flow], np.where(pair >= 0, largest[np.maximum(pair, 0)], 0))
    legal = IB_MTUS[np.minimum(np.searchsorted(IB_MTUS, seen), len(IB_MTUS) - 1)]
    return np.where(seen > IB_MTUS[-1], seen, legal)


def _read_mtus(pp: Prepared, model: FlowModel) -> tuple[np.ndarray, np.ndarray]:
    """The READ REQUEST frames of a flow and the path MTU each is counted in (0: none)."""
    reads = np.flatnonzero(pp.read_request)
    reads = reads[model.flow_id[reads] >= 0]
    if len(reads) == 0:
        return reads, np.zeros(0, np.int64)
    flow = model.flow_id[reads]
    answered = _read_response_mtus(pp, model)
    pair = model.pair[flow]
    mtu = np.where(pair >= 0, answered[np.maximum(pair, 0)], 0)
    return reads, np.where(mtu > 0, mtu, model.mtu[flow])


def _read_response_mtus(pp: Prepared, model: FlowModel) -> np.ndarray:
    """Per flow, its largest FIRST/MIDDLE READ response payload (0: none)."""
    full = (pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_MIDDLE))
    return _largest_payload(pp, model, np.flatnonzero(full & (model.flow_id >= 0)))


def _largest_payload(pp: Prepared, model: FlowModel, rows: np.ndarray) -> np.ndarray:
    """Per flow: the largest payload among its frames of `rows` (frames of a flow), 0: none."""
    out = np.zeros(len(model), np.int64)
    np.maximum.at(out, model.flow_id[rows], pp.column("payload_len", rows).astype(np.int64))
    return out
