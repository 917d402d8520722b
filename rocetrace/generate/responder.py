"""The RC responder: expected PSN, MSN, coalesced ACKs on AckReq, one NAK per missing PSN,
RNR NAKs, READ responses (re-executed for duplicate READ requests), atomic ACKs, the
out-of-order buffer of selective repeat (WRITE packets only), an adaptive-routing NIC's
acceptance of out-of-order requests (no NAK), and soft-RoCE's answer to a request that reuses
a READ response PSN (an ACK of PSN 0xFFFFFF, then a stalled QP)."""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from rocetrace.dissectors.aeth import AckKind, NakCode, syndrome
from rocetrace.dissectors.opcodes import OPCODES, Operation
from rocetrace.generate.model import Conn, response_base, unwrap, wire

if TYPE_CHECKING:
    from rocetrace.generate.network import Packet
    from rocetrace.generate.sim import Simulation

ACK_CREDITS = 0x1F  # "invalid credit count": end-to-end credits not used
STALL_ACK_PSN = 0xFFFFFF  # what soft-RoCE acknowledges a request reusing a response PSN with


class Responder:
    def __init__(self, sim: Simulation, conn: Conn) -> None:
        self.sim, self.sc, self.conn = sim, sim.sc, conn
        self.epsn = conn.start_psn
        self.msn = 0
        self.nak_for: int | None = None  # ePSN a NAK / RNR NAK was sent for: stay silent
        self.rnr_left = self.sc.rnr_naks
        self.buffered: dict[int, bool] = {}  # selective repeat: OOS PSN -> ends a message
        self.msg_first = conn.start_psn  # first PSN of the message being received
        self.base = response_base(conn, self.sc)
        self.mtu = self.sc.responder_mtu or self.sc.mtu
        self.reads: list[tuple[int, int, int]] = []  # executed READs: (first, end, wire id)
        self.stalled = False
        self.held: dict[int, Packet] = {}  # responder_ooo: early requests by PSN

    def send(self, t: int, **fields: int) -> int:
        """Send a response packet after the processing delay; returns its wire id."""
        pkt = dict(self.base, **fields)
        self.sim.net.send(t + self.sc.ack_delay_ns, pkt, self.sim.deliver)
        return int(pkt["_row"])

    def ack(self, t: int, kind: AckKind, value: int, psn: int) -> int:
        return self.send(
            t, opcode=0x11, syndrome=syndrome(kind, value), msn=self.msn, psn=wire(psn)
        )

    def on_packet(self, t: int, pkt: Packet) -> None:
        if self.conn.transport != "RC" or pkt["opcode"] == 0x81 or self.stalled:
            return
        upsn = unwrap(pkt["psn"], self.epsn)
        if upsn == self.epsn:
            self.accept(t, pkt, upsn)
            while self.epsn in self.held:  # out-of-order arrivals now in sequence
                self.accept(t, self.held.pop(self.epsn), self.epsn)
        elif upsn < self.epsn:
            self.duplicate(t, pkt, upsn)
        else:
            self.out_of_sequence(t, pkt, upsn)

    def accept(self, t: int, pkt: Packet, upsn: int) -> None:
        op = OPCODES[pkt["opcode"]]
        if (
            op.operation is Operation.SEND
            and op.position in ("first", "only")
            and self.rnr_left > 0
        ):
            self.rnr_left -= 1
            self.nak_for = upsn
            self.ack(t, AckKind.RNR_NAK, self.sc.rnr_timer, upsn)
            return
        self.nak_for = None
        if op.operation is Operation.READ_REQUEST:
            self.msn += 1
            self.epsn += self.read_responses(t, pkt, upsn)
            self.msg_first = self.epsn
            return
        self.epsn += 1
        if op.operation in (Operation.CMP_SWAP, Operation.FETCH_ADD):
            self.msn += 1
            self.msg_first = self.epsn
            self.atomic_ack(t, pkt)
            return
        if op.position in ("last", "only"):
            self.msn += 1
            self.msg_first = self.epsn
        ack_req = bool(pkt.get("ack_req"))
        while self.epsn in self.buffered:  # selective repeat: the hole is filled
            self.msn += self.buffered.pop(self.epsn)
            self.epsn += 1
            ack_req = True
        if ack_req:
            self.ack(t, AckKind.ACK, ACK_CREDITS, self.epsn - 1)
        if self.buffered:
            self.nak(t)

    def duplicate(self, t: int, pkt: Packet, upsn: int) -> None:
        op = OPCODES[pkt["opcode"]]
        read = self.read_answered_at(upsn)
        if read is not None and op.operation is not Operation.READ_REQUEST:
            self.stall(t, pkt, read)
        elif op.operation is Operation.READ_REQUEST:
            self.read_responses(t, pkt, upsn)
        elif op.operation in (Operation.CMP_SWAP, Operation.FETCH_ADD):
            self.atomic_ack(t, pkt)
        elif pkt.get("ack_req"):
            self.ack(t, AckKind.ACK, ACK_CREDITS, self.epsn - 1)

    def out_of_sequence(self, t: int, pkt: Packet, upsn: int) -> None:
        op = OPCODES[pkt["opcode"]]
        if self.sc.responder_ooo:  # adaptive routing: placed now, completed in order, no NAK
            if upsn - self.epsn < self.sc.window:
                self.held[upsn] = pkt
            return
        if self.sc.recovery == "selective-repeat" and op.operation is Operation.WRITE:
            self.buffered[upsn] = op.position in ("last", "only")
        if self.nak_for != self.epsn:
            self.nak(t)
            if self.sc.cnp_on_oos:
                self.sim.notify(t, pkt, cause="oos")
            if self.sc.recovery == "go-back-0":  # the partial message is discarded
                self.epsn = self.nak_for = self.msg_first

    def nak(self, t: int) -> None:
        if self.nak_for == self.epsn:
            return
        self.nak_for = self.epsn
        self.ack(t, AckKind.NAK, NakCode.PSN_SEQUENCE_ERROR, self.epsn)

    def read_responses(self, t: int, pkt: Packet, upsn: int) -> int:
        """Send the responses of a READ request at `upsn` (segmented at this NIC's MTU);
        returns the PSNs they take."""
        mtu, length = self.mtu, pkt["dma_len"]
        n = max(1, -(-length // mtu))
        if not self.reads or upsn >= self.reads[-1][1]:  # a new READ, not a re-execution
            self.reads.append((upsn, upsn + n, pkt["_row"]))
        for k in range(n):
            code = 0x10 if n == 1 else 0x0D if k == 0 else 0x0F if k == n - 1 else 0x0E
            fields = {"opcode": code, "psn": wire(upsn + k), "msg": pkt["msg"], "span": 1}
            fields["payload_len"] = min(mtu, length - k * mtu)
            fields["episode"] = pkt.get("episode", -1)
            if code != 0x0E:
                fields.update(syndrome=syndrome(AckKind.ACK, ACK_CREDITS), msn=self.msn)
            self.send(t, **fields)
        return n

    def read_answered_at(self, upsn: int) -> int | None:
        """Wire id of the READ whose responses used PSN upsn after its first (a request
        there reuses a response PSN: the requester counted fewer responses), else None."""
        k = bisect_right(self.reads, (upsn, 1 << 62)) - 1
        if k < 0 or not self.reads[k][0] < upsn < self.reads[k][1]:
            return None
        return self.reads[k][2]

    def stall(self, t: int, pkt: Packet, read: int) -> None:
        """soft-RoCE with disagreeing MTUs: an ACK of PSN 0xFFFFFF, then no answer again."""
        answer = self.ack(t, AckKind.ACK, ACK_CREDITS, STALL_ACK_PSN)
        self.stalled = True
        self.sim.ledger.anomalies.append({
            "kind": "psn_reuse", "conn": self.conn.idx, "wire_id": pkt["_row"],
            "psn": pkt["psn"], "read_wire_id": read, "requester_mtu": self.sc.mtu,
            "responder_mtu": self.mtu, "answer_wire_id": answer, "answer_psn": STALL_ACK_PSN,
            "responder_stalled": True,
        })  # fmt: skip

    def atomic_ack(self, t: int, pkt: Packet) -> None:
        self.send(
            t, opcode=0x12, psn=pkt["psn"], msg=pkt["msg"], msn=self.msn, span=1,
            syndrome=syndrome(AckKind.ACK, ACK_CREDITS), atomic_orig=pkt["compare"],
        )  # fmt: skip
