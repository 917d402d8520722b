"""Who talks to whom: the connections of a run (QP numbers, starting PSNs, UDP source
ports, QP reuse), each connection's messages, and the frames' encapsulation."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rocetrace.generate.encap import Encap
from rocetrace.generate.model import Conn, Message, packets_for
from rocetrace.generate.scenario import Scenario
from rocetrace.psn import PSN_MOD

QP_A_BASE, QP_B_BASE = 0x0011C0, 0x0022C0
VA_BASE = 0x7F0000000000
SPORT_BASE = 49152


def udp_sport(qp: int, sc: Scenario) -> int:
    """RoCEv2 source port: a hash of the QP number (entropy for ECMP), unless collided."""
    return SPORT_BASE if sc.udp_sport_collision else SPORT_BASE | ((qp * 2654435761) >> 7) & 0x3FFF


def encap_of(sc: Scenario) -> Encap:
    """How the scenario wraps every RoCE frame."""
    return Encap(sc.ip_version, sc.vlan, sc.roce_v1, sc.vxlan_vni)


def make_connections(sc: Scenario, rng: np.random.Generator) -> list[Conn]:
    """Every connection of the run: `qps` per (requester, responder) host pair, then (QP
    reuse) a second generation on the same QP numbers, or (both ends post requests) the
    responders' own requests on the same QP pairs."""
    conns = first_generation(sc, rng)
    if sc.qp_reuse_gap_us is not None:
        conns += reused(conns, rng)
    if sc.responder_ops:
        conns += reversed_pairs(conns, rng)
    return conns


def reversed_pairs(conns: list[Conn], rng: np.random.Generator) -> list[Conn]:
    """The responder's requests on each QP pair: its QP sends to the requester's QP, in its
    own PSN space (from a random starting PSN), with its own UDP source port."""
    return [
        Conn(len(conns) + k, c.resp_host, c.req_host, c.qp_b, c.qp_a,
             int(rng.integers(0, PSN_MOD)), c.sport_b, c.sport_a, c.transport, reverse_of=c.idx)
        for k, c in enumerate(conns)
    ]  # fmt: skip


def reused(conns: list[Conn], rng: np.random.Generator) -> list[Conn]:
    """A new connection per connection, on the same hosts and QP numbers, from a new random
    starting PSN (as a CM reconnect would pick)."""
    return [
        replace(c, idx=len(conns) + k, start_psn=int(rng.integers(0, PSN_MOD)), generation=1)
        for k, c in enumerate(conns)
    ]


def first_generation(sc: Scenario, rng: np.random.Generator) -> list[Conn]:
    """`qps` connections per (requester, responder) host pair; start PSNs drawn in order."""
    conns: list[Conn] = []
    for r in range(sc.requesters):
        for s in range(sc.responders):
            for _ in range(sc.qps):
                i = len(conns)
                qa, qb = QP_A_BASE + i, QP_B_BASE + i
                start = sc.start_psn if sc.start_psn is not None else int(rng.integers(0, PSN_MOD))
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
    """The connection's work requests: `messages` of them, cycling `ops` (the responder's own
    requests cycle `responder_ops`)."""
    msgs, psn, va = [], conn.start_psn, VA_BASE + conn.idx * (1 << 32)
    ops = sc.responder_ops if conn.reverse_of is not None else sc.ops
    for k in range(sc.messages):
        op = ops[k % len(ops)]
        length = 8 if op in ("cmp_swap", "fetch_add") else sc.message_size
        if conn.transport == "UD":
            length = min(length, sc.mtu)
        n = packets_for(sc, op, length)
        msgs.append(Message(first_idx + k, conn.idx, op, length, psn, n, va, resp_next=psn))
        psn, va = psn + n, va + length
    return msgs
