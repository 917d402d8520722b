"""The bulk path: fault-free RC WRITE traffic with one coalesced ACK per message, built as
numpy columns (no per-packet Python), for million-packet benchmark captures.

Each requester host sends its QPs' messages round-robin, back to back at line rate; the
responder ACKs the last packet of every message (AckReq) after its processing delay.
"""

from __future__ import annotations

import numpy as np

from rocetrace.dissectors.aeth import AckKind, syndrome
from rocetrace.generate.model import PSN_MOD, RKEY, Message
from rocetrace.generate.network import WIRE_OVERHEAD
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.sim import VA_BASE, SimResult, make_connections
from rocetrace.generate.table import ROLE_REQUEST, ROLE_RESPONSE, PacketTable

HEADERS_V4 = 14 + 20 + 8 + 12 + 4  # Ethernet, IPv4, UDP, BTH, ICRC


def _segments(sc: Scenario) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(opcode, payload length, has RETH) of the packets of one message."""
    n = max(1, -(-sc.message_size // sc.mtu))
    payload = np.full(n, sc.mtu, dtype=np.int64)
    payload[-1] = sc.message_size - (n - 1) * sc.mtu
    if n == 1:
        return np.array([0x0A]), payload, np.array([True])
    opcode = np.full(n, 0x07)
    opcode[0], opcode[-1] = 0x06, 0x08
    reth = np.zeros(n, dtype=bool)
    reth[0] = True
    return opcode, payload, reth


def bulk_rows(sc: Scenario, seed: int) -> tuple[PacketTable, SimResult]:
    rng = np.random.default_rng(seed)
    conns = make_connections(sc, rng)
    opcode, payload, reth = _segments(sc)
    per_msg = len(opcode)
    m = sc.messages
    q = len(conns)
    # message slot j of the whole run: conn j % q, message j // q (round-robin per host)
    slot = np.arange(m * q)
    conn_of, k_of = slot % q, slot // q
    pkt_slot = np.repeat(slot, per_msg)
    seg = np.tile(np.arange(per_msg), m * q)
    n = len(pkt_slot)
    conn = conn_of[pkt_slot]
    req_host = np.array([c.req_host for c in conns])[conn]
    frame = HEADERS_V4 + payload[seg] + (-payload[seg]) % 4 + np.where(reth[seg], 16, 0)
    ser = ((frame + WIRE_OVERHEAD) * 8e9 / sc.link_speed_bps).astype(np.int64)
    t_tx = np.zeros(n, dtype=np.int64)
    for h in np.unique(req_host):
        mine = req_host == h
        t_tx[mine] = 1000 + np.concatenate([[0], np.cumsum(ser[mine])[:-1]])
    req = _requests(sc, conns, conn, k_of[pkt_slot], seg, opcode, payload, reth, pkt_slot)
    req.cols["t_tx"] = t_tx
    req.cols["t_sw"] = t_tx + ser + sc.link_delay_ns
    req.cols["t_rx"] = req["t_sw"] + ser + sc.link_delay_ns
    acks = _acks(sc, conns, req, per_msg)
    table = PacketTable.concat([req, acks])
    table.cols["row"] = np.arange(len(table), dtype=np.int32)
    msgs = [Message(j, int(conn_of[j]), "write", sc.message_size, 0, per_msg, 0, status="completed")
            for j in range(m * q)]  # fmt: skip
    end = int(table["t_rx"].max()) if len(table) else 0
    return table, SimResult([], conns, msgs, [], sc.requesters + sc.responders + 1, end)


def _requests(sc, conns, conn, k, seg, opcode, payload, reth, msg) -> PacketTable:
    """Request columns: PSN = start + message * packets + segment, modulo 2^24."""
    per_msg = len(opcode)
    t = PacketTable.empty(len(conn))
    start = np.array([c.start_psn for c in conns], dtype=np.int64)
    t.fill(src=np.array([c.req_host for c in conns])[conn])
    t.fill(dst=np.array([c.resp_host for c in conns])[conn])
    t.fill(dest_qp=np.array([c.qp_b for c in conns])[conn])
    t.fill(udp_sport=np.array([c.sport_a for c in conns])[conn])
    t.fill(psn=(start[conn] + k * per_msg + seg) % PSN_MOD)
    t.fill(opcode=opcode[seg], payload_len=payload[seg])
    va = (
        VA_BASE
        + conn.astype(np.uint64) * np.uint64(1 << 32)
        + k.astype(np.uint64) * np.uint64(sc.message_size)
    )
    t.fill(va=np.where(reth[seg], va, 0))
    t.fill(rkey=np.where(reth[seg], RKEY, 0))
    t.fill(dma_len=np.where(reth[seg], sc.message_size, 0))
    t.fill(ack_req=(seg == per_msg - 1).astype(np.uint8))
    t.fill(ecn=sc.ecn, ecn_tx=sc.ecn)
    t.fill(dscp=sc.dscp, pcp=sc.pcp)
    t.fill(conn=conn, msg=msg, span=1, role=ROLE_REQUEST)
    return t


def _acks(sc: Scenario, conns, req: PacketTable, per_msg: int) -> PacketTable:
    """One ACK per message for its last packet, MSN = messages completed on the QP."""
    last = np.flatnonzero(req["ack_req"] == 1)
    conn = req["conn"][last]
    t = PacketTable.empty(len(last))
    t.fill(src=req["dst"][last], dst=req["src"][last])
    t.fill(dest_qp=np.array([c.qp_a for c in conns])[conn])
    t.fill(udp_sport=np.array([c.sport_b for c in conns])[conn])
    t.fill(opcode=0x11, syndrome=syndrome(AckKind.ACK, 0x1F))
    t.fill(psn=req["psn"][last])
    count = np.zeros(len(last), dtype=np.int64)
    for c in np.unique(conn):
        count[conn == c] = np.arange(1, int((conn == c).sum()) + 1)
    t.fill(msn=count % PSN_MOD)
    t.fill(ecn=sc.ecn, ecn_tx=sc.ecn)
    t.fill(dscp=sc.dscp, pcp=sc.pcp)
    t.fill(conn=conn, role=ROLE_RESPONSE, msg=req["msg"][last])
    ser = ((HEADERS_V4 + 4 + WIRE_OVERHEAD) * 8e9 / sc.link_speed_bps).__int__()
    t.fill(t_tx=req["t_rx"][last] + sc.ack_delay_ns)
    t.fill(t_sw=t["t_tx"] + ser + sc.link_delay_ns)
    t.fill(t_rx=t["t_sw"] + ser + sc.link_delay_ns)
    return t
