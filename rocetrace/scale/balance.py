"""The order the partition tasks are handed to the executor: largest first. Dask runs
tasks of one `client.map` in submission order, so with more partitions than workers the
largest ones start first and the last to finish are small: no worker idles through a long
last task (the longest-processing-time rule). Sizes are rows, read from the shards'
Parquet footers (no rows are read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from rocetrace.scale.shards import shard_rows

T = TypeVar("T")
R = TypeVar("R")


def partition_sizes(workdir: Path, partitions: Sequence[int]) -> np.ndarray:
    """Rows of each partition of the shard folder (every segment's shard)."""
    return np.array([shard_rows(workdir, p) for p in partitions], dtype=np.int64)


def largest_first(sizes: np.ndarray) -> np.ndarray:
    """Indices by size, largest first (ties keep their order)."""
    return np.argsort(-np.asarray(sizes, dtype=np.int64), kind="stable")


def in_order_of(
    run: Callable[[list[T]], list[R]], items: Sequence[T], order: np.ndarray
) -> list[R]:
    """`run` (an executor's map) over the items taken in `order`; the results back in the
    items' own order."""
    done = dict(zip(order.tolist(), run([items[i] for i in order]), strict=True))
    return [done[i] for i in range(len(items))]
