"""The registry: every analysis declares, once, the tables it reads and writes and where it
runs. The pipeline (pipeline.py) runs the stages of each scope in declaration order over a
workspace of named values; nothing else lists the analyses.

Scopes, in the order they run:
- `capture`: capture-wide facts every partition needs before it starts (the clock's
  tolerances, the PFC pause table, the CM connections, when the capture ends): computed
  once on the whole capture, broadcast to the partitions.
- `partition`: one partition of the capture (the connections of one or more IP pairs, in
  capture order); in memory the whole capture is one partition.
- `reduce`: the partitions' tables combined (combine.py), then the capture-wide analyses
  that read them (ECMP entropy, PFC runs, findings).

Adding an analysis is one `@stage` in stages.py (plus, for a new partition table, how its
rows are combined: `Combine`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

CAPTURE, PARTITION, REDUCE = "capture", "partition", "reduce"
CAPTURE_ORDER = "capture"  # a Combine order: the capture order of each row's frame
SCOPES = (CAPTURE, PARTITION, REDUCE)

# The names each scope starts with (its inputs), beside what earlier scopes wrote.
INPUTS: dict[str, tuple[str, ...]] = {
    CAPTURE: ("packets", "capture", "mads", "options"),
    PARTITION: ("packets", "shared", "streamed"),  # streamed: its packets are not kept
    REDUCE: ("parts", "shared", "capture", "packets", "options"),
}

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Combine:
    """How the reduce step joins one partition table: which columns hold flow ids (local
    to a partition, renumbered capture-wide) and how the joined rows are ordered:
    CAPTURE_ORDER (of the row's frame), "flow" (by flow id), or a tuple of columns and
    CAPTURE_ORDER (a stable sort; ties keep each partition's own order)."""

    flow_columns: tuple[str, ...] = ("flow_id",)
    order: str | tuple[str, ...] = CAPTURE_ORDER
    frame_column: str = "frame"


@dataclass(frozen=True)
class Stage:
    """One analysis: `run` takes the values named in `reads` (in that order) and returns
    those named in `writes` (a tuple when several)."""

    name: str
    scope: str
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    run: Callable[..., Any]
    progress: str | None = None  # the stage name shown while it runs, if any
    combine: dict[str, Combine] = field(default_factory=dict)  # partition tables it writes

    def __call__(self, ws: dict[str, Any]) -> None:
        out = self.run(*(ws[name] for name in self.reads))
        ws.update(zip(self.writes, out if len(self.writes) > 1 else (out,), strict=True))


REGISTRY: list[Stage] = []


def stage(
    scope: str,
    reads: tuple[str, ...],
    writes: tuple[str, ...],
    *,
    progress: str | None = None,
    combine: dict[str, Combine] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated function an analysis stage (appended to REGISTRY)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")

    def register(run: Callable[..., Any]) -> Callable[..., Any]:
        REGISTRY.append(
            Stage(run.__name__, scope, reads, writes, run, progress, dict(combine or {}))
        )
        return run

    return register


def stages(scope: str) -> Iterator[Stage]:
    return (s for s in REGISTRY if s.scope == scope)


def partition_tables() -> dict[str, Combine]:
    """Every table a partition hands to the reduce step, and how it is combined."""
    return {name: how for s in stages(PARTITION) for name, how in s.combine.items()}


def run_scope(scope: str, ws: dict[str, Any], progress: Progress | None = None) -> dict[str, Any]:
    """Run the stages of one scope over the workspace `ws` (updated in place)."""
    for s in stages(scope):
        if progress is not None and s.progress:
            progress(s.progress)
        s(ws)
    return ws


def check_registry() -> list[str]:
    """What is wrong with the declarations: a stage reading a name nothing wrote before
    it, a name written twice, a combined table no stage writes."""
    problems = []
    known: set[str] = set()
    for scope in SCOPES:
        known |= set(INPUTS[scope])
        for s in stages(scope):
            missing = [r for r in s.reads if r not in known]
            if missing:
                problems.append(f"{s.name} reads {missing} before any stage writes them")
            twice = [w for w in s.writes if w in known]
            if twice:
                problems.append(f"{s.name} writes {twice}, already written")
            problems += [
                f"{s.name} combines {t}, not written" for t in s.combine if t not in s.writes
            ]
            known |= set(s.writes)
    return problems
