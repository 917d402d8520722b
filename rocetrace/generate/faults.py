"""Network faults decided packet by packet: losses (each `Loss` rule keeps its own counters
so rules compose) and the slower path some request packets take (packet spraying)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rocetrace.dissectors.aeth import AckKind, ack_kind
from rocetrace.dissectors.opcodes import OPCODES, Operation
from rocetrace.generate.scenario import Loss, Scenario
from rocetrace.generate.wire_table import (
    DELIVERED,
    LOST_AFTER_MIRROR,
    LOST_BEFORE_MIRROR,
    ROCE,
    ROLE_REQUEST,
    ROLE_RESPONSE,
)


def packet_kind(pkt: Mapping[str, Any]) -> str:
    """data | ack | nak | read_response | other (CNPs, PFC): what loss rules select on."""
    op = OPCODES.get(pkt.get("opcode", -1))
    if op is None or op.operation is Operation.CNP:
        return "other"
    if op.operation is Operation.READ_RESPONSE:
        return "read_response"
    if op.operation in (Operation.ACK, Operation.ATOMIC_ACK):
        return "ack" if ack_kind(pkt["syndrome"]) is AckKind.ACK else "nak"
    return "data"


class LossModel:
    """Decides, packet by packet, whether the network drops it and where."""

    def __init__(self, rules: tuple[Loss, ...], rng: np.random.Generator) -> None:
        self.rules = rules
        self.rng = rng
        self.seen = [0] * len(rules)
        self.psn_hits: list[dict[int, int]] = [{} for _ in rules]

    def _matches(self, rule: Loss, pkt: Mapping[str, Any]) -> bool:
        role = pkt.get("role")
        if rule.direction == "request" and role != ROLE_REQUEST:
            return False
        if rule.direction == "response" and role != ROLE_RESPONSE:
            return False
        if role not in (ROLE_REQUEST, ROLE_RESPONSE):
            return False
        if rule.conn is not None and pkt.get("conn") != rule.conn:
            return False
        if rule.first_only and pkt.get("episode", -1) >= 0:
            return False
        if rule.spare_ack_req and pkt.get("ack_req"):
            return False
        return rule.kind == "any" or packet_kind(pkt) == rule.kind

    def _drops(self, i: int, rule: Loss, pkt: Mapping[str, Any]) -> bool:
        self.seen[i] += 1
        drop = False
        if rule.psns and pkt["psn"] in rule.psns:
            hits = self.psn_hits[i].get(pkt["psn"], 0)
            self.psn_hits[i][pkt["psn"]] = hits + 1
            drop = hits < rule.times
        if rule.every and self.seen[i] % rule.every == 0:
            drop = True
        if rule.rate and self.rng.random() < rule.rate:
            drop = True
        return drop

    def decide(self, pkt: Mapping[str, Any]) -> int:
        """DELIVERED, LOST_AFTER_MIRROR or LOST_BEFORE_MIRROR."""
        fate = DELIVERED
        for i, rule in enumerate(self.rules):
            if self._matches(rule, pkt) and self._drops(i, rule, pkt) and fate == DELIVERED:
                fate = LOST_BEFORE_MIRROR if rule.before_mirror else LOST_AFTER_MIRROR
        return fate


class SlowPath:
    """Packet spraying / adaptive routing: each request packet takes, with probability
    `reorder_rate`, a path through the switch that is longer by a delay drawn from
    `reorder_delay_ns`, so later packets may overtake it."""

    def __init__(self, sc: Scenario, rng: np.random.Generator) -> None:
        self.rate, self.delay_ns, self.rng = sc.reorder_rate, sc.reorder_delay_ns, rng

    def delay(self, pkt: Mapping[str, Any]) -> int:
        """Extra ns this packet spends in the switch (0: the usual path)."""
        if pkt.get("role") != ROLE_REQUEST or pkt.get("kind", ROCE) != ROCE:
            return 0
        if self.rng.random() >= self.rate:
            return 0
        return int(self.rng.integers(self.delay_ns[0], self.delay_ns[1] + 1))
