"""The merged table analysed partition by partition (a streamed merge): the registry's
capture scope on the whole merged table, its partition scope on each partition's rows (a
task: this process or a Dask worker), the same reduce step as every analysis
(rocetrace.analysis.pipeline). The packet table the Analysis keeps is the partitions'
rows joined, their flow and episode ids renumbered capture-wide as the reduce renumbers
the tables' (combine.flow_numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace import heap
from rocetrace.analysis.combine import flow_numbers
from rocetrace.analysis.pipeline import (
    PartitionResult,
    analyze_partition,
    reduce_partitions,
    shared_facts,
)
from rocetrace.analysis.result import Analysis
from rocetrace.analysis.shared import Shared
from rocetrace.scale.executor import Executor
from rocetrace.schema import PACKETS
from rocetrace.schema.conform import conform
from rocetrace.vantage.vantage_inputs import concat_tables


@dataclass(frozen=True)
class MergedPartJob:
    """One partition's merged rows (in merged order) and the capture's shared facts."""

    packets: pd.DataFrame
    shared: Shared


def analyze_merged_part(job: MergedPartJob) -> PartitionResult:
    """The partition scope on one partition of the merged table (merged frames are its
    capture order), keeping its packet rows with their flow ids."""
    frame = job.packets["frame"].to_numpy(np.int64)
    order = (np.zeros(len(frame), np.int64), frame)
    with heap.kept():  # a worker's next task reuses the memory (rocetrace.heap.kept)
        return analyze_partition(job.packets, job.shared, order, keep_packets=True)


class PartJobs(Sequence[MergedPartJob]):
    """The partitions' jobs, each cut from the merged table when it is taken: in this
    process one partition's copy exists at a time (Dask takes them all to ship them)."""

    def __init__(self, merged: pd.DataFrame, groups: list[np.ndarray], shared: Shared) -> None:
        self.merged, self.groups, self.shared = merged, groups, shared

    def __len__(self) -> int:
        return len(self.groups)

    @overload
    def __getitem__(self, i: int) -> MergedPartJob: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[MergedPartJob]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        rows = self.groups[i]
        return MergedPartJob(self.merged.iloc[rows].reset_index(drop=True), self.shared)


def analyze_by_partition(
    merged: pd.DataFrame,
    capture: Any,
    mads: pd.DataFrame | None,
    part: np.ndarray,
    ex: Executor,
    options: dict[str, Any],
) -> Analysis:
    """analyze_packets(merged, ...) with the partition scope run per partition (`part`:
    per merged row, its partition): the same Analysis."""
    shared = shared_facts(merged, capture, mads, options)
    by = pd.Series(np.arange(len(merged))).groupby(part).indices
    jobs = PartJobs(merged, [np.asarray(rows) for rows in by.values()], shared)
    parts = ex.map(analyze_merged_part, jobs)

    def rerun(i: int, given: Shared) -> PartitionResult:
        return ex.map(analyze_merged_part, [replace(jobs[i], shared=given)])[0]

    a = reduce_partitions(parts, shared, capture, options, packets=merged, kept=merged, rerun=rerun)
    a.packets = conform(_kept(parts, a.retransmissions), PACKETS)  # as finished() does
    return a


def _kept(parts: list[PartitionResult], episodes: pd.DataFrame) -> pd.DataFrame:
    """The partitions' packet rows in merged order, flow and episode ids capture-wide."""
    numbers = flow_numbers([p.tables["flows"] for p in parts])
    first = pd.Index(episodes["first_frame"].to_numpy(np.int64))
    rows = []
    for p, new_id in zip(parts, numbers, strict=True):
        assert p.packets is not None
        local = p.tables["retransmissions"]["first_frame"].to_numpy(np.int64)
        episode = first.get_indexer(local)
        rows.append(
            p.packets.assign(
                flow_id=_mapped(p.packets["flow_id"], new_id),
                episode=_mapped(p.packets["episode"], episode),
            )
        )
        p.packets = None  # held once: by `rows`
    out = concat_tables(rows)
    del rows
    by = np.argsort(out["frame"].to_numpy(np.int64), kind="stable")
    return out.take(by).reset_index(drop=True)


def _mapped(col: pd.Series, new_id: np.ndarray) -> pd.Series:
    """Ids (nullable) mapped through new_id, nulls kept, the column's dtype kept."""
    values = col.to_numpy(np.int64, na_value=-1)
    mapped = np.where(values >= 0, new_id[np.maximum(values, 0)] if len(new_id) else -1, -1)
    out = pd.arrays.ArrowExtensionArray(pa.array(mapped, mask=(values < 0) | (mapped < 0)))
    return pd.Series(out, index=col.index).astype(col.dtype)
