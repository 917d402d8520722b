"""rocetrace.heap: freed memory handed back after the analysis' largest steps, except where
a process analyses partition after partition and reuses it (heap.kept)."""

from __future__ import annotations

import pytest

from rocetrace import heap
from rocetrace.scale import partition


@pytest.fixture
def trims(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    monkeypatch.setattr(heap, "_malloc_trim", lambda: calls.append)
    return calls


def test_give_back_trims_outside_kept(trims: list[int]) -> None:
    heap.give_back()
    with heap.kept():
        heap.give_back()
        with heap.kept():
            heap.give_back()
        heap.give_back()
    heap.give_back()
    assert trims == [0, 0]


def test_a_partition_task_keeps_its_heap(trims: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(partition, "load_partition", lambda *a: (None, None))
    monkeypatch.setattr(partition, "analyze_partition", lambda *a: heap.give_back())
    job = partition.PartitionJob("work", 0, None, None)  # type: ignore[arg-type]
    partition.analyze_shard(job)
    assert trims == []
    heap.give_back()
    assert trims == [0]
