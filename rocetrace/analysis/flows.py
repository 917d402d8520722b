"""The flow model: one flow per direction of traffic to one QP, key (src_ip, dst_ip, dest_qp).

A BTH names only the destination QP, so the two directions of a connection are paired here:
by PSN space (ACK and READ-response PSNs repeat request PSNs of the reverse direction), by
the DETH source QP for UD, and finally by IP pair when one flow each way is left.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    CNP,
    NAK,
    POS_FIRST,
    POS_MIDDLE,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    TRANSPORTS,
    Prepared,
    isin_small,
)

RESPONSE_KINDS = (READ_RESPONSE, ACK, NAK, RNR_NAK, ATOMIC_ACK)
UD = TRANSPORTS.index("UD")
UC = TRANSPORTS.index("UC")
PAIR_SAMPLE = 64  # responses per flow used to pair by PSN space
PAIR_MAX_DELAY_NS = 1_000_000_000
GSI_QP = 1  # QP1 carries the CM MADs
NAK_VOTE = 4


@dataclass
class FlowModel:
    """Per-frame flow ids plus per-flow keys and pairing (index = flow_id)."""

    flow_id: np.ndarray  # per frame, -1 outside any flow
    src: np.ndarray  # per flow: IP codes and QP
    dst: np.ndarray
    qp: np.ndarray
    pair: np.ndarray  # per flow: flow id of the reverse direction, -1 unknown
    peer_qp: np.ndarray  # per flow: QP receiving its responses, -1 unknown
    paired_by: np.ndarray  # per flow: "psn" | "deth" | "ip_pair" | "" (object array)
    transport: np.ndarray  # per flow: index into TRANSPORTS, -1 unknown
    mtu: np.ndarray  # per flow: path MTU inferred from full-size segments, 0 unknown

    def __len__(self) -> int:
        return len(self.src)


def assign_flows(pp: Prepared) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Flow id per frame, numbered by first appearance; returns (flow_id, src, dst, qp).
    CNPs belong to no flow: they are attributed to the flow they throttle (congestion.py)."""
    inside = np.flatnonzero((pp.src >= 0) & (pp.dst >= 0) & (pp.qp >= 0) & (pp.kind != CNP))
    key = (pp.src[inside] << 44) | (pp.dst[inside] << 24) | pp.qp[inside]
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    flow_id = np.full(len(pp), -1, np.int64)
    flow_id[inside] = rank[inverse]
    keys = uniq[order]
    return flow_id, keys >> 44, (keys >> 24) & 0xFFFFF, keys & 0xFFFFFF


def _majority(flow_id: np.ndarray, values: np.ndarray, n_flows: int) -> np.ndarray:
    """Most frequent non-negative value per flow, -1 when none."""
    ok = (flow_id >= 0) & (values >= 0)
    out = np.full(n_flows, -1, np.int64)
    if not ok.any():
        return out
    f, v = flow_id[ok], values[ok]
    width = int(v.max()) + 1
    if n_flows * width <= 1 << 24:  # small domains (DSCP, PCP, transport): one bincount
        counts = np.bincount(f * width + v, minlength=n_flows * width).reshape(n_flows, width)
        best = counts.argmax(axis=1)
        return np.where(counts.max(axis=1) > 0, best, -1)
    keys, counts = np.unique((f << 32) | v, return_counts=True)
    order = np.lexsort((-counts, keys >> 32))
    first = np.unique(keys[order] >> 32, return_index=True)[1]
    top = keys[order][first]
    out[top >> 32] = top & 0xFFFFFFFF
    return out


def _mtus(pp: Prepared, flow_id: np.ndarray, n_flows: int) -> np.ndarray:
    """Per flow, the largest FIRST/MIDDLE payload: every such segment is exactly one MTU."""
    full = (flow_id >= 0) & isin_small(pp.position, (POS_FIRST, POS_MIDDLE)) & (pp.payload_len > 0)
    mtu = np.zeros(n_flows, np.int64)
    np.maximum.at(mtu, flow_id[full], pp.payload_len[full])
    return mtu


def _psn_scores(pp: Prepared, flow_id: np.ndarray) -> pd.DataFrame:
    """Candidate (response flow, request flow, votes). A response repeats the PSN of a request
    sent the other way; when several QPs use the same PSNs, responses come back in the order
    the requests went out, so the k-th response with a PSN answers the k-th request with it."""
    resp_mask = (flow_id >= 0) & (
        isin_small(pp.kind, (ACK, ATOMIC_ACK))
        | ((pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_ONLY)))
    )
    resp = pd.DataFrame(
        {"r": flow_id[resp_mask], "a": pp.dst[resp_mask], "b": pp.src[resp_mask]}
        | {"psn": pp.psn[resp_mask], "t": pp.ts[resp_mask]}
    )
    resp = resp[resp.groupby("r").cumcount() < PAIR_SAMPLE].drop_duplicates(["r", "psn"])
    req_mask = (flow_id >= 0) & (pp.kind == REQUEST) & (pp.transport != UD)
    req = pd.DataFrame(
        {"q": flow_id[req_mask], "a": pp.src[req_mask], "b": pp.dst[req_mask]}
        | {"psn": pp.psn[req_mask], "tq": pp.ts[req_mask]}
    )
    req = req[req["psn"].isin(resp["psn"].unique())].drop_duplicates(["q", "psn"])
    resp["k"] = resp.groupby(["a", "b", "psn"]).cumcount()
    req["k"] = req.groupby(["a", "b", "psn"]).cumcount()
    m = resp.merge(req, on=["a", "b", "psn", "k"])
    dt = m["t"] - m["tq"]
    m = m[(dt >= 0) & (dt <= PAIR_MAX_DELAY_NS)]
    votes = m.groupby(["r", "q"]).size().reset_index(name="n")
    return pd.concat([votes, _nak_votes(pp, flow_id)], ignore_index=True)


def _nak_votes(pp: Prepared, flow_id: np.ndarray) -> pd.DataFrame:
    """A NAK is answered by a resend of its PSN: only the refused QP sends that PSN again
    after the NAK (strong evidence, worth several ACK matches)."""
    nak_mask = (flow_id >= 0) & isin_small(pp.kind, (NAK, RNR_NAK))
    naks = pd.DataFrame(
        {"r": flow_id[nak_mask], "a": pp.dst[nak_mask], "b": pp.src[nak_mask]}
        | {"psn": pp.psn[nak_mask], "t": pp.ts[nak_mask]}
    ).drop_duplicates(["r", "psn"])
    req_mask = (flow_id >= 0) & (pp.kind == REQUEST) & np.isin(pp.psn, naks["psn"].unique())
    req = pd.DataFrame(
        {"q": flow_id[req_mask], "a": pp.src[req_mask], "b": pp.dst[req_mask]}
        | {"psn": pp.psn[req_mask], "tq": pp.ts[req_mask]}
    )
    m = naks.merge(req, on=["a", "b", "psn"])
    dt = m["tq"] - m["t"]
    m = m[(dt >= 0) & (dt <= PAIR_MAX_DELAY_NS)].drop_duplicates(["r", "q", "psn"])
    return (m.groupby(["r", "q"]).size() * NAK_VOTE).reset_index(name="n")


def _greedy_pairs(scores: pd.DataFrame, sport: np.ndarray) -> list[tuple[int, int]]:
    """One-to-one pairs, strongest evidence first (both directions' matches add up)."""
    if scores.empty:
        return []
    lo = np.minimum(scores["r"], scores["q"])
    hi = np.maximum(scores["r"], scores["q"])
    und = pd.DataFrame({"x": lo, "y": hi, "n": scores["n"]}).groupby(["x", "y"]).sum()
    und = und.reset_index()
    und["same_sport"] = sport[und["x"]] == sport[und["y"]]
    und = und.sort_values(["n", "same_sport", "x", "y"], ascending=[False, False, True, True])
    taken: set[int] = set()
    pairs = []
    for x, y in zip(und["x"].tolist(), und["y"].tolist(), strict=True):
        if x != y and x not in taken and y not in taken:
            taken.update((x, y))
            pairs.append((x, y))
    return pairs


def _ip_pairs(src: np.ndarray, dst: np.ndarray, qp: np.ndarray, pair: np.ndarray) -> list:
    """Pair the last unpaired flow of each direction of an IP pair with its reverse."""
    free = pd.DataFrame({"f": np.arange(len(src)), "s": src, "d": dst})
    free = free[(pair < 0) & (qp != GSI_QP)]
    alone = free.groupby(["s", "d"]).filter(lambda g: len(g) == 1)
    rev = alone.merge(alone, left_on=["s", "d"], right_on=["d", "s"])
    rev = rev[rev["f_x"] < rev["f_y"]]
    return list(zip(rev["f_x"].tolist(), rev["f_y"].tolist(), strict=True))


def build_flow_model(pp: Prepared) -> FlowModel:
    """Flows, their transport and MTU, and the pairing of the two directions."""
    flow_id, src, dst, qp = assign_flows(pp)
    n = len(src)
    transport = _majority(flow_id, pp.transport.astype(np.int64), n)
    sport = _majority(flow_id, pp.sport, n)
    pair = np.full(n, -1, np.int64)
    paired_by = np.full(n, "", dtype=object)
    peer_qp = np.full(n, -1, np.int64)
    for x, y in _greedy_pairs(_psn_scores(pp, flow_id), sport):
        pair[x], pair[y] = y, x
        paired_by[[x, y]] = "psn"
    _pair_ud(pp, flow_id, src, dst, qp, transport, pair, paired_by, peer_qp)
    for x, y in _ip_pairs(src, dst, np.where(transport == UD, GSI_QP, qp), pair):
        pair[x], pair[y] = y, x
        paired_by[[x, y]] = "ip_pair"
    has_pair = pair >= 0
    peer_qp[has_pair] = qp[pair[has_pair]]
    peer_qp[transport == UC] = -1  # UC sends no responses: no QP receives them
    mtu = _mtus(pp, flow_id, n)
    mtu[has_pair] = np.maximum(mtu[has_pair], mtu[pair[has_pair]])
    return FlowModel(flow_id, src, dst, qp, pair, peer_qp, paired_by, transport, mtu)


def _pair_ud(
    pp: Prepared,
    flow_id: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    qp: np.ndarray,
    transport: np.ndarray,
    pair: np.ndarray,
    paired_by: np.ndarray,
    peer_qp: np.ndarray,
) -> None:
    """UD: the DETH source QP names the peer; its reverse flow is the pair when present."""
    src_qp = _majority(flow_id, np.where(pp.transport == UD, pp.deth_src_qp, -1), len(src))
    index: dict[tuple[int, int, int], int] = {
        (int(s), int(d), int(q)): f for f, (s, d, q) in enumerate(zip(src, dst, qp, strict=True))
    }
    for f in np.flatnonzero((transport == UD) & (src_qp >= 0)):
        peer_qp[f] = src_qp[f]
        back = index.get((int(dst[f]), int(src[f]), int(src_qp[f])))
        if back is not None and pair[f] < 0 and pair[back] < 0:
            pair[f], pair[back] = back, f
            paired_by[f] = paired_by[back] = "deth"


def read_spans(pp: Prepared, model: FlowModel) -> np.ndarray:
    """PSNs each frame occupies: a READ REQUEST takes one per response packet it asks for."""
    span = np.ones(len(pp), np.int64)
    reads = np.flatnonzero(pp.read_request & (model.flow_id >= 0))
    if len(reads) == 0:
        return span
    mtu = model.mtu[model.flow_id[reads]]
    fallback = model.mtu.max(initial=0)
    mtu = np.where(mtu > 0, mtu, fallback if fallback > 0 else 1024)
    length = np.maximum(pp.dma_length[reads], 0)
    span[reads] = np.maximum(1, -(-length // mtu))
    return span
