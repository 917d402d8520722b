"""Progress of a long analysis on stderr: one bar per stage (decode, partitions, reduce),
shown only on a terminal and never with --quiet."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


class Stages:
    """Bars for the stages of a streamed analysis; all no-ops when not shown."""

    def __init__(self, bar: Any = None) -> None:
        self.bar = bar
        self.current: Any = None

    def start(self, name: str, total: int | None) -> Callable[[], None]:
        """A new stage of `total` steps; returns the tick that advances it."""
        if self.bar is None:
            return lambda: None
        if self.current is not None:
            self.bar.update(self.current, completed=self.bar.tasks[self.current].total)
        task = self.bar.add_task(name, total=total)
        self.current = task
        return lambda: self.bar.advance(task)

    def note(self, name: str) -> None:
        """A stage with no steps to count (the reduce step's analyses)."""
        self.start(name, None)


@contextmanager
def stage_bars(quiet: bool = False) -> Iterator[Stages]:
    """Rich progress bars on stderr when it is a terminal and not `quiet`."""
    if quiet or not sys.stderr.isatty():
        yield Stages()
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:12}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())  # fmt: skip
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        yield Stages(bar)
