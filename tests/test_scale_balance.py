"""The partition tasks are handed out largest first (scale/balance.py), and their results
come back in partition order, so the reduce step sees what it saw before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rocetrace.scale.balance import in_order_of, largest_first, partition_sizes, split_pairs
from rocetrace.scale.shards import shard_path


def test_largest_first_keeps_ties_in_order() -> None:
    assert largest_first(np.array([3, 9, 3, 1, 9])).tolist() == [1, 4, 0, 2, 3]


def test_results_come_back_in_item_order() -> None:
    seen: list[list[str]] = []

    def run(items: list[str]) -> list[str]:
        seen.append(items)
        return [s.upper() for s in items]

    out = in_order_of(run, ["a", "b", "c"], largest_first(np.array([1, 5, 2])))
    assert seen == [["b", "c", "a"]]
    assert out == ["A", "B", "C"]


def test_partition_sizes_count_every_segment(tmp_path: Path) -> None:
    for partition, segment, rows in ((0, 0, 5), (0, 1, 7), (2, 1, 3)):
        path = shard_path(tmp_path, partition, segment)
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table({"frame": np.arange(rows, dtype=np.uint32)}), path)
    assert partition_sizes(tmp_path, [0, 1, 2]).tolist() == [12, 0, 3]


def test_split_pairs_keeps_whole_pairs_within_the_limit() -> None:
    rows = {11: 5, 12: 5, 13: 5, 14: 1}
    groups = split_pairs(rows, 6)
    assert len(groups) == 3 and sorted(p for g in groups for p in g) == sorted(rows)
    assert max(sum(rows[p] for p in g) for g in groups) == 6
    assert split_pairs({11: 5, 12: 1}, 6) == [(11, 12)]
    assert split_pairs({11: 50}, 6) == [(11,)]
