"""The partition task: one partition's rows read from every segment's shard, numbered and
put in capture order, and analysed by the registry's partition stages
(rocetrace.analysis.pipeline.analyze_partition) with the capture's shared facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

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
    workdir: Path, partition: int, manifest: Manifest, columns: list[str] | None = None
) -> tuple[pd.DataFrame, tuple[np.ndarray, np.ndarray]]:
    """The partition's packet table in capture order (capture frames) and each row's
    capture-order keys (combine.py)."""
    wanted = None if columns is None else [*columns, *(["order_ts"] if manifest.ordered else [])]
    table, segment = read_shards(workdir, partition, wanted)
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
        Path(job.workdir), job.partition, job.manifest, ANALYSIS_COLUMNS
    )
    if job.pairs is not None:
        rows = np.flatnonzero(np.isin(table_pairs(packets), np.array(job.pairs, np.int64)))
        packets = packets.take(rows).reset_index(drop=True)
        order = (order[0][rows], order[1][rows])
    return analyze_partition(packets, job.shared, order)


def table_pairs(packets: pd.DataFrame) -> np.ndarray:
    """Per row of a packet table, the hash of its IP pair (scale.keys)."""
    src, dst = packets["src_ip"].array, packets["dst_ip"].array
    return pairs_of(
        (np.asarray(src.codes), list(src.categories)),
        (np.asarray(dst.codes), list(dst.categories)),
    )
