"""Freed memory handed back to the system where the analysis leaves much of it free in the
middle of glibc's heap.

NumPy's arrays of a million elements come from the heap, not from mappings of their own,
once the first large one is freed (glibc then raises its mmap threshold to that size), so
the temporaries of a step stay resident as holes between arrays that live on, and later
arrays too large for those holes grow the heap instead. `malloc_trim` gives back the
holes' pages (they stay the heap's: reused, they are faulted in again). Nothing where the C
library has no malloc_trim (musl, macOS, Windows).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

_kept: list[bool] = []  # inside `kept()`: give_back does nothing


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] | None = getattr(ctypes.CDLL(None), "malloc_trim", None)
    except (OSError, TypeError):  # no C library of the process to look it up in
        return None
    return trim


def give_back() -> None:
    """Return the free pages of the C heap to the system (~1-2 ms at 1M frames)."""
    if _kept:
        return
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@contextmanager
def kept() -> Iterator[None]:
    """Freed memory stays in the heap for the while. A process that analyses partition
    after partition (a Dask worker, or the caller streaming) reuses it for the next one;
    handed back, it is faulted in again page by page: the trims cost ~20% of a 10M
    capture's partition tasks (kernel time 0.3 -> 0.7 s over 8 tasks, in one process) and
    more where two workers fault at once, for a peak that is the task's anyway."""
    _kept.append(True)
    try:
        yield
    finally:
        _kept.pop()
