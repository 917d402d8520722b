"""A NIC's settings as the episodes show them: its recovery policy and its ACK timer hold
for all its connections, so the rules that weigh an episode (episodes/) read them off
every connection of its host, not only its own.

A partition of the capture holds some connections only: it weighs its episodes with the
context it sees itself and hands that context to the reduce step, which joins every
partition's (`NicContext.joined`); a partition whose own context differs from the
capture's for its hosts is weighed again with the capture's (assumptions.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS

NO_MARGIN = (0, 1 << 62)  # timer_margin when no rule read the timer: any timeout will do


@dataclass(frozen=True)
class NicContext:
    """Per sending host (its address), what its episodes show."""

    timer_ns: int | None = None  # shortest silence before a timeout resend, None: none seen
    gb0_hosts: frozenset[str] = frozenset()  # hosts with a certain go-back-0
    hidden: tuple[tuple[str, int], ...] = ()  # per host, restarts inside a message
    modes: tuple[tuple[str, frozenset[str]], ...] = ()  # per "host/op class", certain modes
    # a partition's own: the timeouts lo < T <= hi under which its episodes weigh alike
    timer_margin: tuple[int, int] = NO_MARGIN
    # hosts with a selective repeat no go-back makes (episodes.shapes.repeat_of_own_psn)
    repeat_hosts: frozenset[str] = frozenset()
    # the longest silence since the last event that may have re-armed the timer before a
    # timeout (episodes.timers.timeout_silence: one whose silence since the progress is shorter
    # is no timeout of the same timer), None: none seen; a partition's own margin for it
    timer_floor_ns: int | None = None
    floor_margin: tuple[int, int] = NO_MARGIN
    # the shortest such silence (the timer is at least that long), 0 where a run held by
    # a pause shows the capture point does not see every pause; None: none seen; and a
    # partition's own margin for it (the slow answers read it)
    timer_lo_ns: int | None = None
    lo_margin: tuple[int, int] = NO_MARGIN

    def shortest_timer(self) -> int:
        """The shortest ACK timeout the capture's timeouts show; the IBTA minimum else."""
        return max(self.timer_ns or 0, MIN_ACK_TIMEOUT_NS)

    def least_timer(self) -> int:
        """The shortest ACK timeout the capture's timeouts allow; the IBTA minimum else."""
        return max(self.timer_lo_ns or 0, MIN_ACK_TIMEOUT_NS)

    def timer_floor(self) -> int:
        """The longest silence since a re-arm before a timeout; the IBTA minimum else."""
        return max(self.timer_floor_ns or 0, MIN_ACK_TIMEOUT_NS)

    def policy(self) -> dict[str, str]:
        """Per "host/op class", its one certain mode ("" when several)."""
        return {k: next(iter(m)) if len(m) == 1 else "" for k, m in self.modes}

    @classmethod
    def joined(cls, parts: Iterable[NicContext]) -> NicContext:
        """The context of all these connections together."""
        timers: list[int] = []
        floors: list[int] = []
        lows: list[int] = []
        gb0: set[str] = set()
        hidden: dict[str, int] = {}
        modes: dict[str, frozenset[str]] = {}
        repeat: set[str] = set()
        for p in parts:
            repeat |= p.repeat_hosts
            timers += [p.timer_ns] if p.timer_ns is not None else []
            floors += [p.timer_floor_ns] if p.timer_floor_ns is not None else []
            lows += [p.timer_lo_ns] if p.timer_lo_ns is not None else []
            gb0 |= p.gb0_hosts
            for host, n in p.hidden:
                hidden[host] = hidden.get(host, 0) + n
            for key, m in p.modes:
                modes[key] = modes.get(key, frozenset()) | m
        return cls(
            min(timers) if timers else None,
            frozenset(gb0),
            tuple(sorted(hidden.items())),
            tuple(sorted(modes.items())),
            repeat_hosts=frozenset(repeat),
            timer_floor_ns=max(floors) if floors else None,
            timer_lo_ns=min(lows) if lows else None,
        )

    def weighs_alike(self, capture: NicContext, hosts: frozenset[str]) -> bool:
        """Whether episodes sent by `hosts`, weighed with this (a partition's own) context,
        weigh as they would with the capture's: the same facts of those hosts, and the
        capture's timeout inside this context's timer margin (and its timer floor and
        least timeout inside their margins)."""
        lo, hi = self.timer_margin
        floor_lo, floor_hi = self.floor_margin
        least_lo, least_hi = self.lo_margin
        return (
            lo < capture.shortest_timer() <= hi
            and floor_lo < capture.timer_floor() <= floor_hi
            and least_lo < capture.least_timer() <= least_hi
            and self.about(hosts) == capture.about(hosts)
        )

    def about(self, hosts: frozenset[str]) -> tuple[object, ...]:
        """What the rules read of this context for episodes sent by `hosts`, but the timer
        (weighs_alike: a timeout matters only across a slow answer's reach)."""
        return (
            self.gb0_hosts & hosts,
            self.repeat_hosts & hosts,
            tuple((h, n) for h, n in self.hidden if h in hosts),
            tuple((k, self.policy()[k]) for k, _ in self.modes if k.split("/")[0] in hosts),
        )
