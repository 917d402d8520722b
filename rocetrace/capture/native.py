"""The C kernels of the capture path (rocetrace.capture._kernels, built at install time):
loaded, told the schema's category codes and the walk's slot rows, and run on two threads
when a window has many frames."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from itertools import pairwise
from typing import TypeVar

from rocetrace._source_hash import check_build_is_current
from rocetrace.capture import layers
from rocetrace.schema import ANOMALIES, ENCAPS, ICRC_STATUSES

try:
    import rocetrace.capture._kernels as _kernels
except ImportError as exc:
    raise ImportError(
        f"rocetrace's C decoder rocetrace.capture._kernels does not load ({exc}); it is "
        "compiled when rocetrace is installed: rebuild it with `python3 -m pip install -e .` "
        "in the rocetrace checkout (needs gcc and the Python headers)"
    ) from exc


check_build_is_current("rocetrace.capture._kernels", _kernels.SOURCE_HASH)

__all__ = ["THREADS", "frame_ranges", "kernels", "over_frames"]

kernels = _kernels
PARALLEL_FRAMES = 1 << 16  # below this, a second thread costs more than it saves
T = TypeVar("T")


def threads_allowed() -> int:
    """The threads a process may use, as OMP_NUM_THREADS says (Arrow reads it too): Dask
    sets it to 1 in each worker it spawns, so that N one-thread workers on N cores do not
    each start a second thread for the walk and fight over the cores."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return os.cpu_count() or 1


THREADS = min(2, os.cpu_count() or 1, threads_allowed())


def _codes() -> dict[str, int]:
    """What the C kernels write and where: anomaly codes (0 none), encap and ICRC status
    codes, slot rows; named as in _kernels.CODE_NAMES."""
    slots = {
        "slot_smac": layers.SMAC, "slot_dmac": layers.DMAC, "slot_vlan": layers.VLAN,
        "slot_ip4": layers.IP4, "slot_ip6": layers.IP6, "slot_udp": layers.UDP_SLOT,
        "slot_bth": layers.BTH_SLOT, "slot_pfc": layers.PFC_SLOT, "slot_ext0": layers.EXT0,
        "n_slots": layers.N_SLOTS,
    }  # fmt: skip
    return {
        **{name: 1 + i for i, name in enumerate(ANOMALIES)},
        **{name: i for i, name in enumerate(ENCAPS)},
        **{f"icrc_{name}": i for i, name in enumerate(ICRC_STATUSES)},
        **slots,
    }


_kernels.configure(tuple(_codes()[name] for name in _kernels.CODE_NAMES))


def frame_ranges(n: int) -> list[tuple[int, int]]:
    """[start, stop) ranges covering n frames, one per thread for large n; the cuts are
    multiples of 8 because the gather writes validity bitmaps 8 frames per byte."""
    if n < PARALLEL_FRAMES or THREADS < 2:
        return [(0, n)]
    cuts = [(n * k // THREADS) & ~7 for k in range(THREADS)] + [n]
    return list(pairwise(cuts))


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(THREADS - 1, thread_name_prefix="rocetrace-kernels")


def over_frames(n: int, task: Callable[[int, int], T]) -> list[T]:
    """task(start, stop) over frame_ranges(n); the kernels release the GIL, so the ranges
    run in parallel (the first in this thread). Waits for every range before raising."""
    ranges = frame_ranges(n)
    futures: list[Future[T]] = [_pool().submit(task, *r) for r in ranges[1:]]
    try:
        first = task(*ranges[0])
    finally:
        rest = [f.exception() for f in futures]
    failed = next((e for e in rest if e is not None), None)
    if failed is not None:
        raise failed
    return [first, *(f.result() for f in futures)]
