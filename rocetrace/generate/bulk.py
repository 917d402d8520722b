"""The bulk path: fault-free RC traffic built as numpy columns (no per-packet Python), for
million-packet benchmark captures.

Messages cycle through `Scenario.ops` as in the event model: RDMA WRITE and SEND (first /
middle / last, or only; AckReq on the last packet and every `ack_req_every` PSNs) and RDMA
READ (one request; its responses flow back). Each requester host sends its QPs' messages
round-robin, back to back at line rate; the responder ACKs every AckReq packet (one coalesced
ACK per message) and answers READs after its processing delay. Every NIC port and switch
egress port serializes FIFO at the link speed, as the event model's fabric does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.dissectors.aeth import AckKind, syndrome
from rocetrace.generate.encap import roce_layout
from rocetrace.generate.model import PSN_MOD, RKEY, Conn, Message, _segment_opcode, packets_for
from rocetrace.generate.responder import ACK_CREDITS
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.sim import SimResult
from rocetrace.generate.topology import VA_BASE, encap_of, make_connections
from rocetrace.generate.wire_table import ROLE_REQUEST, ROLE_RESPONSE, PacketTable
from rocetrace.link import wire_ns

READ_REQUEST, ACK = 0x0C, 0x11
READ_RESPONSES = (0x0D, 0x0E, 0x0F, 0x10)  # first, middle, last, only
START_NS = 1000


@dataclass(frozen=True)
class Shapes:
    """The request packets of one message of each op (row i: `Scenario.ops[i]`), padded to
    the n PSNs every message takes (a READ takes n PSNs with its one request)."""

    opcode: np.ndarray  # (ops, n)
    payload: np.ndarray  # (ops, n)
    count: np.ndarray  # (ops,) request packets per message
    read: np.ndarray  # (ops,) bool
    send: np.ndarray  # (ops,) bool
    imm: np.ndarray  # (ops,) bool


def positions(n: int, codes: tuple[int, ...]) -> np.ndarray:
    """Opcodes of the n packets of one message from its (first, middle, last, only) codes."""
    if n == 1:
        return np.array([codes[3]])
    out = np.full(n, codes[1])
    out[0], out[-1] = codes[0], codes[2]
    return out


def payloads(sc: Scenario, n: int) -> np.ndarray:
    """Payload bytes of the n packets of one message: the MTU, the remainder last."""
    return np.clip(sc.message_size - np.arange(n) * sc.mtu, 0, sc.mtu)


def shapes_of(sc: Scenario, n: int) -> Shapes:
    opcode = np.zeros((len(sc.ops), n), dtype=np.int64)
    payload = np.zeros_like(opcode)
    for i, op in enumerate(sc.ops):  # one row per op kind; the event model's opcode rule
        if op == "read":
            opcode[i, 0] = READ_REQUEST
            continue
        codes = tuple(_segment_opcode(op, k, m, 0) for k, m in ((0, 2), (1, 3), (1, 2), (0, 1)))
        opcode[i], payload[i] = positions(n, codes), payloads(sc, n)
    read = np.array([op == "read" for op in sc.ops])
    return Shapes(
        opcode, payload, np.where(read, 1, n), read,
        np.array([op.startswith("send") for op in sc.ops]),
        np.array([op.endswith("_imm") for op in sc.ops]),
    )  # fmt: skip


def bulk_rows(sc: Scenario, seed: int) -> tuple[PacketTable, SimResult]:
    rng = np.random.default_rng(seed)
    conns = make_connections(sc, rng)
    n = packets_for(sc, "write", sc.message_size)  # PSNs per message, whatever its op
    req, msn_after = requests(sc, conns, shapes_of(sc, n), n)
    send(req, np.full(len(req), START_NS, dtype=np.int64), sc)
    resp, ready = responses(sc, conns, req, msn_after, n)
    send(resp, ready, sc)
    table = PacketTable.concat([req, resp])
    table.cols["row"] = np.arange(len(table), dtype=np.int32)
    number_ip_ids(table)
    end = int(table["t_rx"].max()) if len(table) else 0
    hosts = sc.requesters + sc.responders + 1
    return table, SimResult([], conns, messages(sc, conns, n), [], hosts, end)


def endpoints(t: PacketTable, sc: Scenario, conns: list[Conn], conn: np.ndarray, role: int) -> None:
    """Hosts, destination QP, UDP source port and QoS marks of each packet's direction."""

    def of(name: str) -> np.ndarray:
        return np.array([getattr(c, name) for c in conns])[conn]

    if role == ROLE_REQUEST:
        t.fill(src=of("req_host"), dst=of("resp_host"), dest_qp=of("qp_b"), udp_sport=of("sport_a"))
    else:
        t.fill(src=of("resp_host"), dst=of("req_host"), dest_qp=of("qp_a"), udp_sport=of("sport_b"))
    t.fill(conn=conn, role=role, ecn=sc.ecn, ecn_tx=sc.ecn, dscp=sc.dscp, pcp=sc.pcp)


def requests(
    sc: Scenario, conns: list[Conn], shapes: Shapes, n: int
) -> tuple[PacketTable, np.ndarray]:
    """Request packets in sending order (message k of every QP, then k + 1), and the MSN the
    responder holds after each (messages of the QP completed up to it)."""
    q, m = len(conns), sc.messages
    slot = np.arange(q * m)
    op = (slot // q) % len(sc.ops)
    count = shapes.count[op]
    pkt_slot = np.repeat(slot, count)
    seg = np.arange(len(pkt_slot)) - (np.cumsum(count) - count)[pkt_slot]
    conn, k, o = pkt_slot % q, pkt_slot // q, op[pkt_slot]
    t = PacketTable.empty(len(pkt_slot))
    endpoints(t, sc, conns, conn, ROLE_REQUEST)
    upsn = np.array([c.start_psn for c in conns], dtype=np.int64)[conn] + k * n + seg
    read, last = shapes.read[o], seg == shapes.count[o] - 1
    every = sc.ack_req_every
    periodic = upsn % every == every - 1 if every > 0 else np.zeros(len(t), dtype=bool)
    msg = conn * m + k
    t.fill(psn=upsn % PSN_MOD, opcode=shapes.opcode[o, seg], payload_len=shapes.payload[o, seg])
    t.fill(span=np.where(read, n, 1), msg=msg, ack_req=~read & (last | periodic))
    t.fill(se=shapes.send[o] & last, imm=np.where(shapes.imm[o] & last, msg, 0))
    reth = read | (~shapes.send[o] & (seg == 0))  # WRITE first / only, READ request
    va = (
        VA_BASE
        + (conn.astype(np.uint64) << np.uint64(32))
        + (k * sc.message_size).astype(np.uint64)
    )
    t.fill(va=np.where(reth, va, 0), rkey=np.where(reth, RKEY, 0))
    t.fill(dma_len=np.where(reth, sc.message_size, 0))
    return t, k + last


def responses(
    sc: Scenario, conns: list[Conn], req: PacketTable, msn_after: np.ndarray, n: int
) -> tuple[PacketTable, np.ndarray]:
    """The responder's packets in the order it decides them, and when each is ready: one ACK
    per AckReq packet, n READ responses per READ request (AETH on all but the middle ones)."""
    read = req["opcode"] == READ_REQUEST
    count = np.where(read, n, req["ack_req"]).astype(np.int64)
    parent = np.repeat(np.arange(len(req)), count)
    r = np.arange(len(parent)) - (np.cumsum(count) - count)[parent]
    is_read = read[parent]
    t = PacketTable.empty(len(parent))
    endpoints(t, sc, conns, req["conn"][parent], ROLE_RESPONSE)
    t.fill(opcode=np.where(is_read, positions(n, READ_RESPONSES)[r], ACK))
    t.fill(psn=(req["psn"][parent].astype(np.int64) + r) % PSN_MOD, msg=req["msg"][parent])
    t.fill(payload_len=np.where(is_read, payloads(sc, n)[r], 0), span=is_read)
    aeth = t["opcode"] != READ_RESPONSES[1]
    t.fill(syndrome=np.where(aeth, syndrome(AckKind.ACK, ACK_CREDITS), 0))
    t.fill(msn=np.where(aeth, msn_after[parent] % PSN_MOD, 0))
    return t, req["t_rx"][parent] + sc.ack_delay_ns


def serialization_ns(t: PacketTable, sc: Scenario) -> np.ndarray:
    """Link time of every frame (frame length from the layout of its opcode and payload)."""
    key = t["opcode"].astype(np.int64) << 32 | t["payload_len"].astype(np.int64)
    kinds = np.unique(key)  # a dozen frame shapes
    encap = encap_of(sc)
    frame = np.array(
        [roce_layout(encap, int(s) >> 32, int(s) & 0xFFFFFFFF).frame_len for s in kinds]
    )
    ser = np.asarray(wire_ns(frame, sc.link_speed_bps)).astype(np.int64)
    return ser[np.searchsorted(kinds, key)]


def fifo(ready: np.ndarray, ser: np.ndarray, port: np.ndarray) -> np.ndarray:
    """Start times on FIFO ports: a packet waits until it is ready and its port is free.
    start[i] = max(ready[i], start[i-1] + ser[i-1]) = S[i] + max over j <= i of
    (ready[j] - S[j]), S being the link time queued before i (a running maximum)."""
    start = np.empty(len(ready), dtype=np.int64)
    for p in np.unique(port):  # one pass per port
        idx = in_time_order(np.flatnonzero(port == p), ready)
        before = np.cumsum(ser[idx]) - ser[idx]
        start[idx] = before + np.maximum.accumulate(ready[idx] - before)
    return start


def in_time_order(idx: np.ndarray, t: np.ndarray) -> np.ndarray:
    """idx ordered by t, ties kept in place (usually already so: no sort then)."""
    if np.all(t[idx][1:] >= t[idx][:-1]):
        return idx
    return idx[np.argsort(t[idx], kind="stable")]


def send(t: PacketTable, ready: np.ndarray, sc: Scenario) -> None:
    """Wire times: the source NIC's port, the link, the switch egress port, the link."""
    ser = serialization_ns(t, sc)
    t.fill(t_tx=fifo(ready, ser, t["src"]))
    t.fill(t_sw=fifo(t["t_tx"] + ser + sc.link_delay_ns, ser, t["dst"]))
    t.fill(t_rx=t["t_sw"] + ser + sc.link_delay_ns)


def number_ip_ids(t: PacketTable) -> None:
    """IPv4 identification: a counter per source host, in sending order."""
    for h in np.unique(t["src"]):
        mine = in_time_order(np.flatnonzero(t["src"] == h), t["t_tx"])
        t["ip_id"][mine] = np.arange(len(mine)) & 0xFFFF


def messages(sc: Scenario, conns: list[Conn], n: int) -> list[Message]:
    """Every message, completed, numbered QP by QP as the event model numbers them."""
    k = np.tile(np.arange(sc.messages, dtype=np.int64), len(conns))
    conn = np.repeat(np.arange(len(conns)), sc.messages)
    first = np.array([c.start_psn for c in conns], dtype=np.int64)[conn] + k * n
    va = VA_BASE + conn * (1 << 32) + k * sc.message_size
    ops = [sc.ops[j % len(sc.ops)] for j in range(sc.messages)] * len(conns)
    size = sc.message_size
    columns = zip(conn.tolist(), ops, first.tolist(), va.tolist(), strict=True)
    return [
        Message(i, c, op, size, f, n, v, "completed", f + n)
        for i, (c, op, f, v) in enumerate(columns)
    ]
