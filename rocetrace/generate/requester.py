"""The RC requester: sends within a window, reacts to ACKs, NAKs, RNR NAKs, READ response
gaps and its ACK timer, and records each retransmission episode it performs.

PSNs are kept unwrapped (plain ints) inside the model and wrapped to 24 bits on the wire.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from typing import TYPE_CHECKING

from rocetrace.dissectors.aeth import RNR_TIMER_US, AckKind, NakCode, ack_kind
from rocetrace.generate.dcqcn import Dcqcn
from rocetrace.generate.model import Conn, Episode, Message, request_packet, unwrap
from rocetrace.generate.wire_table import ROLE_REQUEST, ROLE_RESPONSE

if TYPE_CHECKING:
    from rocetrace.generate.network import Packet
    from rocetrace.generate.sim import Simulation


class Requester:
    def __init__(self, sim: Simulation, conn: Conn, msgs: list[Message]) -> None:
        self.sim, self.sc, self.conn, self.msgs = sim, sim.sc, conn, msgs
        self.firsts = [m.first for m in msgs]
        self.end = msgs[-1].end if msgs else conn.start_psn
        self.una = self.next_new = self.send_ptr = conn.start_psn
        self.urgent: deque[tuple[int, bool, int]] = deque()  # (upsn, ack_req, episode)
        self.retry_left, self.rnr_left = self.sc.retry_cnt, self.sc.rnr_retry
        self.blocked_until = self.next_allowed = 0
        self.timer_gen, self.timer_on, self.pump_at = 0, False, -1
        self.episode: Episode | None = None  # open go-back episode
        self.failed = False
        self.oldest = 0
        self.cause_row = -1  # the packet being handled: what a READ re-issue answers
        self.rate = Dcqcn(self.sc.link_speed_bps) if self.sc.dcqcn else None
        self.reliable = conn.transport == "RC"

    # -- sending -------------------------------------------------------------------------
    def owner(self, upsn: int) -> Message:
        return self.msgs[bisect_right(self.firsts, upsn) - 1]

    def pending_before(self, m: Message) -> list[Message]:
        """Pending messages older than m (the oldest pending one is tracked lazily)."""
        while self.oldest < len(self.msgs) and self.msgs[self.oldest].status != "pending":
            self.oldest += 1
        end = m.idx - self.msgs[0].idx
        return [e for e in self.msgs[self.oldest : end] if e.status == "pending"]

    def wake(self, t: int) -> None:
        if self.pump_at < 0 or self.pump_at > t:
            self.pump_at = t
            self.sim.loop.at(t, self.pump)

    def pump(self, t: int) -> None:
        if t != self.pump_at:
            return
        self.pump_at = -1
        if self.failed:
            return
        ready = max(
            t,
            self.blocked_until,
            self.next_allowed,
            self.sim.net.port_free.get(self.conn.req_host, 0),
        )
        if ready > t:
            self.wake(ready)
            return
        pick = self._pick()
        if pick is None:
            return
        upsn, ack_req, episode = pick
        self._transmit(t, upsn, ack_req, episode)
        self.wake(max(self.sim.net.port_free[self.conn.req_host], self.next_allowed))

    def _pick(self) -> tuple[int, bool, int] | None:
        """Next PSN to send: urgent resends, then go-back resends, then new packets."""
        if self.urgent:
            return self.urgent.popleft()
        if self.send_ptr < self.next_new:
            ep = self.episode.idx if self.episode else -1
            upsn = self.send_ptr
            self.send_ptr += request_packet(self.sc, self.conn, self.owner(upsn), upsn)[1]
            if self.send_ptr >= self.next_new:
                self.episode = None
            return upsn, False, ep
        if self.next_new < self.end and self.next_new - self.una < self.sc.window:
            upsn = self.next_new
            self.next_new += request_packet(self.sc, self.conn, self.owner(upsn), upsn)[1]
            self.send_ptr = self.next_new
            return upsn, False, -1
        return None

    def _transmit(self, t: int, upsn: int, ack_req: bool, episode: int) -> None:
        m = self.owner(upsn)
        pkt, pkt["span"] = request_packet(self.sc, self.conn, m, upsn)
        if ack_req:
            pkt["ack_req"] = 1
        pkt["episode"] = episode
        t_tx = self.sim.net.send(t, pkt, self.sim.deliver)
        if self.rate is not None:
            self.next_allowed = t_tx + self.rate.gap_ns(self.sim.net.frame_len(pkt), t_tx)
        if self.reliable and not self.timer_on:
            self.arm(t_tx)
        if not self.reliable and m.end <= upsn + 1:
            m.status, m.t_done = "completed", t_tx

    # -- timer ---------------------------------------------------------------------------
    def arm(self, t: int) -> None:
        self.timer_gen += 1
        self.timer_on = True
        self.sim.loop.at(t + self.sc.ack_timeout_ns, self.on_timeout, self.timer_gen)

    def outstanding(self) -> bool:
        return self.una < self.next_new or any(
            m.op == "read" and m.status == "pending" and m.first < self.next_new for m in self.msgs
        )

    def on_timeout(self, t: int, gen: int) -> None:
        if gen != self.timer_gen or self.failed:
            return
        self.timer_on = False
        if not self.outstanding():
            return
        self.retry_left -= 1
        if self.retry_left < 0:
            self.fail("retry_exceeded")
            return
        first = next((m for m in self.msgs if m.status == "pending"), None)
        if first is not None and first.op == "read" and first.first < self.next_new:
            self.reissue(t, first, "timeout")
        else:
            self.go_back(t, "timeout", self.una, None, -1)
        self.arm(t)

    def fail(self, status: str) -> None:
        self.failed = True
        for m in self.msgs:
            if m.status == "pending":
                m.status = status

    # -- responses -----------------------------------------------------------------------
    def on_packet(self, t: int, pkt: Packet) -> None:
        if pkt["opcode"] == 0x81:
            if self.rate is not None:
                self.rate.on_cnp(t)
            return
        if self.failed:
            return
        self.cause_row = pkt["_row"]
        if pkt["opcode"] in (0x0D, 0x0E, 0x0F, 0x10):
            self.on_read_response(t, pkt)
        else:
            self.on_ack(t, pkt)
        self.cause_row = -1

    def on_ack(self, t: int, pkt: Packet) -> None:
        kind = ack_kind(pkt["syndrome"])
        upsn = unwrap(pkt["psn"], self.una)
        if kind is AckKind.ACK:
            self.advance(t, upsn + 1)
        elif kind is AckKind.RNR_NAK:
            self.on_rnr(t, upsn, pkt)
        elif kind is AckKind.NAK:
            self.on_nak(t, upsn, pkt)

    def advance(self, t: int, new_una: int) -> None:
        """Cumulative acknowledgement up to new_una - 1."""
        if new_una <= self.una or new_una > self.next_new:
            return
        self.una = new_una
        self.send_ptr = max(self.send_ptr, self.una)
        self.urgent = deque(u for u in self.urgent if u[0] >= self.una)
        newest = self.owner(self.una - 1)
        for m in [*self.pending_before(newest), newest]:
            if m.status != "pending" or m.end > self.una:
                continue
            if m.op != "read":
                m.status, m.t_done = "completed", t
            elif m.resp_next < m.end and m.reissued_at != m.resp_next:
                self.reissue(t, m, "read_reissue")  # a later ACK: responses were lost
        self.progress(t)

    def progress(self, t: int) -> None:
        self.retry_left = self.sc.retry_cnt
        self.timer_gen += 1
        self.timer_on = False
        if self.outstanding():
            self.arm(t)
        self.wake(t)

    def on_nak(self, t: int, upsn: int, pkt: Packet) -> None:
        go_back_0 = self.sc.recovery == "go-back-0" and self.una <= upsn < self.next_new
        self.advance(t, self.owner(upsn).first if go_back_0 else upsn)  # G0: message redone
        if pkt["syndrome"] & 0x1F != NakCode.PSN_SEQUENCE_ERROR:
            self.fail("remote_error")
            return
        if upsn < self.una or upsn >= self.next_new:
            return
        self.recover(t, upsn, pkt["_row"])

    def on_rnr(self, t: int, upsn: int, pkt: Packet) -> None:
        self.advance(t, upsn)
        if self.sc.rnr_retry != 7:
            self.rnr_left -= 1
            if self.rnr_left < 0:
                self.fail("rnr_retry_exceeded")
                return
        self.blocked_until = t + int(RNR_TIMER_US[pkt["syndrome"] & 0x1F] * 1000)
        self.go_back(t, "rnr", upsn, upsn, pkt["_row"])

    # -- recovery ------------------------------------------------------------------------
    def new_episode(
        self, trigger: str, start: int, psn: int | None, mode: str, row: int
    ) -> Episode:
        role = ROLE_RESPONSE if trigger == "read_reissue" else ROLE_REQUEST
        ep = Episode(len(self.sim.episodes), self.conn.idx, role, trigger, start, psn, mode, row)
        self.sim.episodes.append(ep)
        return ep

    def recover(self, t: int, upsn: int, row: int) -> None:
        m = self.owner(upsn)
        sr = self.sc.recovery == "selective-repeat" and m.op in ("write", "write_imm", "read")
        if sr:
            last = self.last_sent()
            ep = self.new_episode("nak", upsn, upsn, "selective-repeat", row)
            ep.either_policy = self.either_policy(upsn)
            self.urgent = deque([(upsn, False, ep.idx)])
            if last != upsn:
                self.urgent.append((last, True, ep.idx))
            self.wake(t)
            return
        start = m.first if self.sc.recovery == "go-back-0" else upsn
        self.go_back(t, "nak", start, upsn, row)

    def last_sent(self) -> int:
        """First PSN of the newest packet sent (a READ request's own PSN)."""
        m = self.owner(self.next_new - 1)
        return m.first if m.op == "read" else self.next_new - 1

    def either_policy(self, start: int) -> bool:
        """Would go-back-N (every packet from `start` through the newest sent) and selective
        repeat (`start` and the newest) resend the same packets? Then no capture can tell."""
        resent: list[int] = []
        upsn = start
        while upsn < self.next_new and len(resent) < 3:
            resent.append(upsn)
            upsn += request_packet(self.sc, self.conn, self.owner(upsn), upsn)[1]
        return set(resent) == {start, self.last_sent()}

    def go_back(self, t: int, trigger: str, start: int, psn: int | None, row: int) -> None:
        if trigger != "rnr" and self.sc.recovery == "go-back-0":
            start = self.owner(start).first
        mode = "go-back-0" if psn is not None and start < psn else "go-back-n"
        if trigger == "timeout" and start < self.una:
            mode = "go-back-0"
        self.episode = self.new_episode(trigger, start, psn, mode, row)
        self.episode.either_policy = mode == "go-back-n" and self.either_policy(start)
        self.send_ptr = start
        self.urgent.clear()
        self.wake(max(t, self.blocked_until))

    def reissue(self, t: int, m: Message, trigger: str) -> None:
        """Re-issue a READ from its first missing response PSN (adjusted VA and length)."""
        m.reissued_at = m.resp_next
        row = self.cause_row if trigger == "read_reissue" else -1
        ep = self.new_episode(trigger, m.resp_next, None, "go-back-n", row)
        ep.role = ROLE_RESPONSE
        self.urgent.append((m.resp_next, False, ep.idx))
        self.wake(t)

    def on_read_response(self, t: int, pkt: Packet) -> None:
        upsn = unwrap(pkt["psn"], self.una)
        m = self.owner(upsn)
        for earlier in self.pending_before(m):
            if earlier.op == "read" and earlier.reissued_at != earlier.resp_next:
                self.reissue(t, earlier, "read_reissue")  # a later READ answered first
        if m.op != "read" or m.status != "pending" or upsn < m.resp_next:
            return
        if upsn > m.resp_next:
            if m.reissued_at != m.resp_next:
                self.reissue(t, m, "read_reissue")
            return
        m.resp_next += 1
        if m.resp_next == m.end:
            m.status, m.t_done = "completed", t
        if upsn >= self.una:
            self.advance(t, upsn + 1)
        else:
            self.progress(t)
