"""The discrete-event scenario run: hosts, connections, requesters and responders on one
fabric, the notification point that answers CE marks with CNPs, PFC, and a second
generation of connections on reused QP numbers once the first one's traffic is over.

Decisions are made packet by packet here (this is the test bed); the bulk path in
`bulk.py` skips all of it for fault-free traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.generate.faults import SlowPath
from rocetrace.generate.ledger import CnpCause, Ledger
from rocetrace.generate.model import Conn, Episode, Message
from rocetrace.generate.network import EventLoop, Network, Packet
from rocetrace.generate.pause_windows import pause_after_drop, storm
from rocetrace.generate.requester import Requester
from rocetrace.generate.responder import Responder
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.topology import encap_of, make_connections, make_messages
from rocetrace.generate.wire_table import ROLE_CNP, ROLE_REQUEST


@dataclass
class SimResult:
    rows: list[Packet]
    conns: list[Conn]
    messages: list[Message]
    episodes: list[Episode]
    hosts: int  # host count including the switch (last)
    end_ns: int
    ledger: Ledger = field(default_factory=Ledger)


class Duplex:
    """A QP that is requester and responder at once (both ends of a QP pair post requests):
    requests go to its responder; ACKs, NAKs, READ responses and CNPs to its requester."""

    def __init__(self, requester: Requester, responder: Responder) -> None:
        self.requester, self.responder = requester, responder

    def on_packet(self, t: int, pkt: Packet) -> None:
        if OPCODES[pkt["opcode"]].is_request:
            self.responder.on_packet(t, pkt)
        else:
            self.requester.on_packet(t, pkt)


Handler = Requester | Responder | Duplex


class Simulation:
    def __init__(self, sc: Scenario, seed: int) -> None:
        self.sc = sc
        self.rng = np.random.default_rng(seed)
        self.loop = EventLoop(int(sc.max_time_us * 1000))
        self.net = Network(sc, encap_of(sc), self.loop, self.rng)
        self.conns = make_connections(sc, self.rng)
        self.switch = sc.requesters + sc.responders
        self.episodes: list[Episode] = []
        self.handlers: dict[tuple[int, int], Handler] = {}
        self.requesters: list[Requester] = []
        self.messages: list[Message] = []
        self.last_cnp: dict[tuple[int, int], int] = {}
        self.ledger = Ledger()
        self.pfc_rng = np.random.default_rng([seed, 5])
        if sc.pfc_on_loss is not None:
            self.net.on_drop = lambda pkt: pause_after_drop(self, pkt)
        if sc.reorder_rate > 0:
            self.net.slow_path = SlowPath(sc, np.random.default_rng([seed, 4]))
        for c in self.conns:
            msgs = make_messages(sc, c, len(self.messages))
            self.messages += msgs
            self.requesters.append(Requester(self, c, msgs))

    def attach(self, req: Requester) -> None:
        """Connect a requester's QP and its responder's QP to the fabric."""
        c = req.conn
        self.plug((c.req_host, c.qp_a), req)
        self.plug((c.resp_host, c.qp_b), Responder(self, c))

    def plug(self, key: tuple[int, int], handler: Requester | Responder) -> None:
        """A QP already serving the other role for a connection of the same generation
        becomes a Duplex; one of an earlier generation (QP reuse) is replaced."""
        prior = self.handlers.get(key)
        pair = None
        if isinstance(prior, Requester) and isinstance(handler, Responder):
            pair = Duplex(prior, handler)
        elif isinstance(prior, Responder) and isinstance(handler, Requester):
            pair = Duplex(handler, prior)
        same = pair is not None and pair.requester.conn.generation == pair.responder.conn.generation
        self.handlers[key] = pair if same and pair is not None else handler

    def start(self, generation: int, t: int) -> None:
        """Attach one generation's connections and wake their requesters from t."""
        mine = [r for r in self.requesters if r.conn.generation == generation]
        for i, req in enumerate(mine):
            self.attach(req)
            req.wake(t + 7 * i)

    def deliver(self, t: int, pkt: Packet) -> None:
        """A packet reaches its destination NIC: CE marks first, then the QP."""
        if pkt.get("ecn") == 3 and pkt["opcode"] != 0x81:
            self.notify(t, pkt, cause="ce")
        handler = self.handlers.get((pkt["dst"], pkt["dest_qp"]))
        if handler is not None:
            handler.on_packet(t, pkt)

    def notify(self, t: int, pkt: Packet, cause: str) -> None:
        """Notification point: a CNP to the QP that sent pkt, at most one per interval."""
        conn = self.conns[pkt["conn"]]
        target = conn.qp_a if pkt["role"] == ROLE_REQUEST else conn.qp_b
        key = (pkt["dst"], target)
        last = self.last_cnp.get(key)
        if last is not None and t - last < self.sc.cnp_interval_us * 1000:
            return
        self.last_cnp[key] = t
        cnp = {
            "src": pkt["dst"], "dst": pkt["src"], "opcode": 0x81, "dest_qp": target, "psn": 0,
            "becn": 1, "dscp": self.sc.cnp_dscp, "pcp": self.sc.cnp_pcp, "ecn": 0,
            "udp_sport": conn.sport_b if pkt["role"] == ROLE_REQUEST else conn.sport_a,
            "conn": conn.idx, "role": ROLE_CNP,
        }  # fmt: skip
        self.net.send(t + self.sc.ack_delay_ns, cnp, self.deliver)
        self.ledger.cnp_causes.append(CnpCause(cnp["_row"], cause, pkt["_row"]))

    def run(self) -> SimResult:
        storm(self)
        self.start(0, 1000)
        self.loop.run(self.full)
        if self.sc.qp_reuse_gap_us is not None and not self.full():
            self.reuse_qps(self.last_rx() + int(self.sc.qp_reuse_gap_us * 1000))
        end = self.last_rx()
        self.record_delays()
        return SimResult(
            self.net.rows, self.conns, self.messages, self.episodes, self.switch + 1, end,
            self.ledger,
        )  # fmt: skip

    def full(self) -> bool:
        return len(self.net.rows) >= self.sc.max_packets

    def record_delays(self) -> None:
        """Each request that took the slower path (reordering) is an anomaly of the truth."""
        for row, late in self.net.delayed:
            r = self.net.rows[row]
            self.ledger.anomalies.append(
                {"kind": "reordered", "wire_id": row, "conn": r["conn"], "psn": r["psn"],
                 "delay_ns": late}
            )  # fmt: skip

    def last_rx(self) -> int:
        return max((r.get("t_rx", 0) for r in self.net.rows), default=0)

    def reuse_qps(self, t: int) -> None:
        """The first generation's traffic is over (its QPs torn down): new connections on the
        same QP numbers start at t."""
        self.start(1, t)
        self.loop.run(self.full)
        first = {c.idx: c for c in self.conns if c.generation == 0}
        sent: dict[int, int] = {}
        for i, r in enumerate(self.net.rows):
            sent.setdefault(r.get("conn", -1), i)
        for c in self.conns[len(first) :]:
            prev = first[c.idx - len(first)]
            self.ledger.anomalies.append({
                "kind": "qp_reuse", "conn": c.idx, "previous_conn": prev.idx,
                "requester_qp": c.qp_a, "responder_qp": c.qp_b, "start_psn": c.start_psn,
                "previous_start_psn": prev.start_psn, "first_wire_id": sent.get(c.idx),
            })  # fmt: skip
