"""The discrete-event scenario run: hosts, connections, requesters and responders on one
fabric, the notification point that answers CE marks with CNPs, and PFC storms.

Decisions are made packet by packet here (this is the test bed); the bulk path in
`bulk.py` skips all of it for fault-free traffic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rocetrace.generate.encap import Encap
from rocetrace.generate.ledger import CnpCause, Ledger
from rocetrace.generate.model import Conn, Episode, Message, packets_for
from rocetrace.generate.network import EventLoop, Network, Packet
from rocetrace.generate.pfc import pause_after_drop, storm
from rocetrace.generate.requester import Requester
from rocetrace.generate.responder import Responder
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.table import ROLE_CNP, ROLE_REQUEST

QP_A_BASE, QP_B_BASE = 0x0011C0, 0x0022C0
VA_BASE = 0x7F0000000000
SPORT_BASE = 49152


def udp_sport(qp: int, sc: Scenario) -> int:
    """RoCEv2 source port: a hash of the QP number (entropy for ECMP), unless collided."""
    return SPORT_BASE if sc.udp_sport_collision else SPORT_BASE | ((qp * 2654435761) >> 7) & 0x3FFF


def encap_of(sc: Scenario) -> Encap:
    return Encap(sc.ip_version, sc.vlan, sc.roce_v1, sc.vxlan_vni)


def make_connections(sc: Scenario, rng: np.random.Generator) -> list[Conn]:
    conns: list[Conn] = []
    for r in range(sc.requesters):
        for s in range(sc.responders):
            for _ in range(sc.qps):
                i = len(conns)
                qa, qb = QP_A_BASE + i, QP_B_BASE + i
                start = sc.start_psn if sc.start_psn is not None else int(rng.integers(0, 1 << 24))
                conns.append(
                    Conn(
                        i,
                        r,
                        sc.requesters + s,
                        qa,
                        qb,
                        start,
                        udp_sport(qa, sc),
                        udp_sport(qb, sc),
                        sc.transport,
                    )
                )
    return conns


def make_messages(sc: Scenario, conn: Conn, first_idx: int) -> list[Message]:
    msgs, psn, va = [], conn.start_psn, VA_BASE + conn.idx * (1 << 32)
    for k in range(sc.messages):
        op = sc.ops[k % len(sc.ops)]
        length = 8 if op in ("cmp_swap", "fetch_add") else sc.message_size
        if conn.transport == "UD":
            length = min(length, sc.mtu)
        n = packets_for(sc, op, length)
        msgs.append(Message(first_idx + k, conn.idx, op, length, psn, n, va, resp_next=psn))
        psn, va = psn + n, va + length
    return msgs


@dataclass
class SimResult:
    rows: list[Packet]
    conns: list[Conn]
    messages: list[Message]
    episodes: list[Episode]
    hosts: int  # host count including the switch (last)
    end_ns: int
    ledger: Ledger = field(default_factory=Ledger)


class Simulation:
    def __init__(self, sc: Scenario, seed: int) -> None:
        self.sc = sc
        self.rng = np.random.default_rng(seed)
        self.loop = EventLoop(int(sc.max_time_us * 1000))
        self.net = Network(sc, encap_of(sc), self.loop, self.rng)
        self.conns = make_connections(sc, self.rng)
        self.switch = sc.requesters + sc.responders
        self.episodes: list[Episode] = []
        self.handlers: dict[tuple[int, int], Requester | Responder] = {}
        self.requesters: list[Requester] = []
        self.messages: list[Message] = []
        self.last_cnp: dict[tuple[int, int], int] = {}
        self.ledger = Ledger()
        self.pfc_rng = np.random.default_rng([seed, 5])
        if sc.pfc_on_loss is not None:
            self.net.on_drop = lambda pkt: pause_after_drop(self, pkt)
        for c in self.conns:
            msgs = make_messages(sc, c, len(self.messages))
            self.messages += msgs
            req = Requester(self, c, msgs)
            self.requesters.append(req)
            self.handlers[(c.req_host, c.qp_a)] = req
            self.handlers[(c.resp_host, c.qp_b)] = Responder(self, c)

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
        for i, req in enumerate(self.requesters):
            req.wake(1000 + 7 * i)
        self.loop.run(lambda: len(self.net.rows) >= self.sc.max_packets)
        end = max((r.get("t_rx", 0) for r in self.net.rows), default=0)
        return SimResult(
            self.net.rows, self.conns, self.messages, self.episodes, self.switch + 1, end,
            self.ledger,
        )  # fmt: skip
