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


def split_pairs(pair_rows: dict[int, int], limit: int) -> list[tuple[int, ...]]:
    """A partition's IP pairs cut into groups of about `limit` rows or fewer, as even as
    the pairs allow (largest pair first into the smallest group); one group when the
    partition is within the limit. Every group holds whole pairs, so whole connections."""
    total = sum(pair_rows.values())
    groups = max(1, min(len(pair_rows), -(-total // max(limit, 1))))
    if groups == 1:
        return [tuple(sorted(pair_rows))]
    members: list[list[int]] = [[] for _ in range(groups)]
    load = np.zeros(groups, np.int64)
    for pair in sorted(pair_rows, key=lambda p: (-pair_rows[p], p)):  # pairs, not packets
        g = int(np.argmin(load))
        members[g].append(pair)
        load[g] += pair_rows[pair]
    return [tuple(sorted(m)) for m in members]


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
