"""The partitioned analysis of a packet table held in memory: what streaming does with
shards, without the disk (tests compare it with the one-partition analysis)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.pipeline import analyze_partition, reduce_partitions, shared_facts
from rocetrace.analysis.result import Analysis
from rocetrace.scale.keys import LINK, partition_of


def table_partitions(packets: pd.DataFrame, n: int) -> np.ndarray:
    """Per row of a packet table, its partition (scale.keys)."""
    src, dst = packets["src_ip"].array, packets["dst_ip"].array
    return partition_of(
        (np.asarray(src.codes), list(src.categories)),
        (np.asarray(dst.codes), list(dst.categories)),
        n,
    )


def analyze_in_partitions(
    packets: pd.DataFrame,
    capture: Any = None,
    *,
    partitions: int = 4,
    mads: pd.DataFrame | None = None,
    link_speed_bps: float = 100e9,
    **options: Any,
) -> Analysis:
    """analyze_packets, the rows split into `partitions` by IP pair and joined by the
    reduce step (frames of no IP pair are read only capture-wide, as when streaming)."""
    options = {"link_speed_bps": link_speed_bps, **options}
    shared = shared_facts(packets, capture, mads, options)
    part = table_partitions(packets, partitions)
    groups = [np.flatnonzero(part == p) for p in range(partitions)]
    groups = [g for g in groups if len(g)] or [np.flatnonzero(part == LINK)]

    def run(i: int, given: Any = shared) -> Any:
        rows = groups[i]
        order = (np.zeros(len(rows), np.int64), rows.astype(np.int64))
        return analyze_partition(packets.take(rows).reset_index(drop=True), given, order)

    parts = [run(i) for i in range(len(groups))]
    return reduce_partitions(parts, shared, capture, options, packets=packets, rerun=run)
