"""The partition task: one partition's rows read from every segment's shard, numbered and
put in capture order, and analysed by the registry's partition stages
(rocetrace.analysis.pipeline.analyze_partition) with the capture's shared facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace import heap
from rocetrace.analysis.pipeline import PartitionResult, analyze_partition
from rocetrace.analysis.shared import Shared
from rocetrace.capture.files import capture_order
from rocetrace.capture.packets import arrow_to_pandas
from rocetrace.scale.keys import pairs_of
from rocetrace.scale.manifest import Manifest
from rocetrace.scale.shards import read_shards

# The packet table's columns the partition stages read (prepared.py, stages.bad_icrc), and
# cap_len: the report sample's rows need every column the schema declares never null.
ANALYSIS_COLUMNS = [
    "frame", "ts_ns", "cap_len", "wire_len", "src_ip", "dst_ip", "dest_qp", "psn", "opcode",
    "encap", "anomaly", "aeth_syndrome", "payload_len", "udp_sport", "ecn", "dscp", "vlan_pcp",
    "reth_dma_length", "deth_src_qp", "icrc_status",
]  # fmt: skip
RANK_SHIFT = 40  # capture-order sequence: rank << 40 | frame in the file


@dataclass(frozen=True)
class PartitionJob:
    """A partition to analyse; `pairs`: only the rows of these IP pair hashes (a partition
    too large for one task is cut by IP pair, balance.split_pairs), None: every row."""

    workdir: str
    partition: int
    manifest: Manifest
    shared: Shared
    pairs: tuple[int, ...] | None = None


def load_partition(
    workdir: Path,
    partition: int,
    manifest: Manifest,
    columns: list[str] | None = None,
    pairs: tuple[int, ...] | None = None,
) -> tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray]]:
    """The partition's packet table in capture order (capture frames) and each row's
    capture-order keys (combine.py); only the rows of the IP pair hashes `pairs` when
    given, kept as Arrow reads them, before any row is converted or ordered."""
    wanted = None if columns is None else [*columns, *(["order_ts"] if manifest.ordered else [])]
    table, segment = read_shards(workdir, partition, wanted)
    if pairs is not None:
        keep = np.isin(arrow_pairs(table), np.array(pairs, np.int64))
        table, segment = table.filter(pa.array(keep)), segment[keep]
    packets = arrow_to_pandas(table)
    del table
    local = packets["frame"].to_numpy(np.int64)
    seg = manifest.segment_table()
    frame = local + seg["frame_offset"][segment]
    packets["frame"] = frame.astype(np.uint32)
    if not manifest.ordered:
        return packets, (np.zeros(len(frame), np.int64), frame)
    file_frame = local + seg["file_offset"][segment]
    rank = seg["rank"][segment]
    order_ts = np.maximum(packets.pop("order_ts").to_numpy(np.int64), seg["key_floor"][segment])
    by = capture_order(order_ts, rank, file_frame)
    packets = packets.take(by).reset_index(drop=True)
    return packets, (order_ts[by], (rank[by] << RANK_SHIFT) | file_frame[by])


def analyze_shard(job: PartitionJob) -> PartitionResult:
    """Analyse one partition of the shard folder; runs in a Dask worker (or the caller)."""
    packets, order = load_partition(
        Path(job.workdir), job.partition, job.manifest, ANALYSIS_COLUMNS, job.pairs
    )
    with heap.kept():
        return analyze_partition(packets, job.shared, order)


def arrow_pairs(table: pa.Table) -> np.ndarray:
    """Per row of an Arrow packet table, the hash of its IP pair (scale.keys), batch by
    batch: each shard's (and row group's) address columns have their own dictionary."""
    batches = table.select(["src_ip", "dst_ip"]).to_batches()
    parts = [pairs_of(_coded(b.column(0)), _coded(b.column(1))) for b in batches]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _coded(column: pa.DictionaryArray) -> tuple[np.ndarray, list[str]]:
    """A dictionary column as codes (-1 null) and category texts."""
    codes = column.indices.fill_null(-1).to_numpy(zero_copy_only=False)
    return codes.astype(np.int64, copy=False), column.dictionary.to_pylist()
