"""Facts a partition assumes and the reduce step checks: the MTU a READ with none of its own
falls back on (the largest of the capture's flows) and the NIC context of the episodes
(nic_context.py). A partition runs with its own values; once every partition ran, those
whose values differ from the capture's where they read them run again with the capture's.
In memory the whole capture is one partition: its own values are the capture's.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocetrace.analysis.nic_context import NicContext


@dataclass(frozen=True)
class Assumed:
    """What one partition's analysis assumed of the capture, and where it reads it."""

    mtu: int  # the largest MTU of its flows (its READ fallback, unless given the capture's)
    unsized_reads: bool  # some READ took the fallback
    nic: NicContext  # what its episodes showed
    hosts: frozenset[str]  # the hosts its episodes were sent by
    given: bool = False  # it ran with the capture's values already


def capture_values(parts: list[Assumed]) -> tuple[int, NicContext]:
    """The capture's MTU fallback and NIC context."""
    return max((p.mtu for p in parts), default=0), NicContext.joined(p.nic for p in parts)


def stale(part: Assumed, mtu: int, nic: NicContext) -> bool:
    """Whether the partition's results rest on a value the capture's differs from."""
    if part.given:
        return False
    if part.unsized_reads and part.mtu != mtu:
        return True
    return bool(part.hosts) and not part.nic.weighs_alike(nic, part.hosts)
