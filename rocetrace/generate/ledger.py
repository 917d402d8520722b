"""What the simulation did besides sending packets, kept as facts for the truth: pause
windows it applied, why each CNP was sent, and the protocol misbehaviours it injected.
Packets are named by wire id (their index in the list of everything sent)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NIC, SWITCH_EGRESS = "nic", "switch_egress"


@dataclass
class PauseWindow:
    """A PFC pause the model applied: from start_ns to end_ns (simulation time) the port
    sent nothing of `priority`. port NIC: host `host`'s NIC toward the switch; SWITCH_EGRESS:
    the switch's port toward `host`. `sender` sent the pause frames (`frames`: wire ids)."""

    port: str
    host: int
    priority: int
    start_ns: int
    end_ns: int
    sender: int
    frames: list[int] = field(default_factory=list)


@dataclass
class CnpCause:
    """CNP `wire_id` was sent because packet `packet` arrived CE-marked ("ce") or out of
    sequence ("oos")."""

    wire_id: int
    cause: str
    packet: int


@dataclass
class Ledger:
    pauses: list[PauseWindow] = field(default_factory=list)
    cnp_causes: list[CnpCause] = field(default_factory=list)
    anomalies: list[dict[str, Any]] = field(default_factory=list)
