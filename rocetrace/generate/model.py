"""Shared pieces of the RC model: connections, messages, PSN arithmetic, request packets."""

from __future__ import annotations

from dataclasses import dataclass

from rocetrace.generate.scenario import Scenario
from rocetrace.generate.wire_table import ROLE_REQUEST, ROLE_RESPONSE
from rocetrace.psn import PSN_HALF, PSN_MOD

QKEY = 0x11111111
RKEY = 0x1234
OP_BASE = {"RC": 0x00, "UC": 0x20}


def wire(upsn: int) -> int:
    return upsn % PSN_MOD


def unwrap(psn: int, ref: int) -> int:
    """The unwrapped PSN closest to `ref` whose low 24 bits are `psn`."""
    return ref + ((psn - ref + PSN_HALF) % PSN_MOD) - PSN_HALF


@dataclass
class Conn:
    """One queue-pair connection: requests A -> B to qp_b, responses B -> A to qp_a."""

    idx: int
    req_host: int
    resp_host: int
    qp_a: int
    qp_b: int
    start_psn: int
    sport_a: int
    sport_b: int
    transport: str
    generation: int = 0  # a later connection reusing the same QP numbers counts up
    reverse_of: int | None = None  # the responder's own requests on connection reverse_of


@dataclass
class Message:
    """A work request: `npkts` PSNs from `first` (a READ: one per response packet)."""

    idx: int
    conn: int
    op: str
    length: int
    first: int
    npkts: int
    va: int
    status: str = "pending"  # pending | completed | retry_exceeded | rnr_retry_exceeded
    resp_next: int = 0  # READ: next response PSN expected
    reissued_at: int = -1  # READ: the missing PSN a re-issue was sent for
    t_done: int = -1

    @property
    def end(self) -> int:
        return self.first + self.npkts


@dataclass
class Episode:
    """One retransmission episode as the requester performed it."""

    idx: int
    conn: int
    role: int  # flow whose packets were sent again (request, or response for READ)
    trigger: str  # nak | timeout | rnr | read_reissue
    start_psn: int  # unwrapped
    trigger_psn: int | None  # NAKed / RNR-NAKed PSN (unwrapped) or None
    mode: str
    trigger_row: int = -1  # row of the NAK / RNR NAK that caused it
    either_policy: bool = False  # go-back-N and selective repeat would resend the same PSNs


def packets_for(sc: Scenario, op: str, length: int) -> int:
    if op in ("cmp_swap", "fetch_add"):
        return 1
    return max(1, -(-length // sc.mtu))


def _segment_opcode(op: str, k: int, n: int, base: int) -> int:
    """FIRST/MIDDLE/LAST/ONLY opcode of packet k of n for SEND and WRITE (IBTA table 38)."""
    imm = op.endswith("_imm")
    if op.startswith("send"):
        first, middle, last, only = 0x00, 0x01, 0x03 if imm else 0x02, 0x05 if imm else 0x04
    else:
        first, middle, last, only = 0x06, 0x07, 0x09 if imm else 0x08, 0x0B if imm else 0x0A
    code = only if n == 1 else first if k == 0 else last if k == n - 1 else middle
    return base | code


def request_packet(sc: Scenario, conn: Conn, m: Message, upsn: int) -> tuple[dict[str, int], int]:
    """The request packet carrying PSN `upsn` of message m, and the PSNs it consumes."""
    k = upsn - m.first
    pkt: dict[str, int] = {
        "src": conn.req_host, "dst": conn.resp_host, "dest_qp": conn.qp_b, "psn": wire(upsn),
        "udp_sport": conn.sport_a, "conn": conn.idx, "role": ROLE_REQUEST, "msg": m.idx,
        "ecn": sc.ecn, "dscp": sc.dscp, "pcp": sc.pcp, "rkey": RKEY,
    }  # fmt: skip
    if conn.transport == "UD":
        pkt.update(opcode=0x64, payload_len=m.length, qkey=QKEY, src_qp=conn.qp_a)
        return pkt, 1
    if m.op == "read":
        pkt.update(opcode=0x0C, va=m.va + k * sc.mtu, dma_len=max(m.length - k * sc.mtu, 0))
        return pkt, m.npkts - k
    if m.op in ("cmp_swap", "fetch_add"):
        op = 0x13 if m.op == "cmp_swap" else 0x14
        pkt.update(opcode=op, va=m.va, swap_add=m.idx + 1, compare=m.idx, ack_req=1)
        return pkt, 1
    pkt["opcode"] = _segment_opcode(m.op, k, m.npkts, OP_BASE[conn.transport])
    pkt["payload_len"] = min(sc.mtu, m.length - k * sc.mtu) if m.length else 0
    if k == 0:
        pkt.update(va=m.va, dma_len=m.length)
    last = k == m.npkts - 1
    pkt["ack_req"] = int(conn.transport == "RC" and (last or _periodic(sc, upsn)))
    pkt["se"] = int(last and m.op.startswith("send"))
    if m.op.endswith("_imm") and last:
        pkt["imm"] = m.idx
    return pkt, 1


def _periodic(sc: Scenario, upsn: int) -> bool:
    return sc.ack_req_every > 0 and upsn % sc.ack_req_every == sc.ack_req_every - 1


def response_base(conn: Conn, sc: Scenario) -> dict[str, int]:
    """Fields shared by every packet the responder sends back on this connection."""
    return {
        "src": conn.resp_host, "dst": conn.req_host, "dest_qp": conn.qp_a,
        "udp_sport": conn.sport_b, "conn": conn.idx, "role": ROLE_RESPONSE,
        "ecn": sc.ecn, "dscp": sc.dscp, "pcp": sc.pcp,
    }  # fmt: skip
