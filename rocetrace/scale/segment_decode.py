"""The decode task: one segment of a capture file (capture/split.py) decoded chunk by
chunk in bounded memory, its rows written to their partitions' shards (scale/shards.py),
and what the reduce step needs of it handed back: its CaptureInfo, CM MADs, clock totals,
latest timestamp and, for a file's first segment, the clock's head sample.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.analysis.prepared import prepare
from rocetrace.analysis.tolerances import SAMPLE, ClockTotals
from rocetrace.capture.files import merge_keys
from rocetrace.capture.mads import MadRows, mads_frame
from rocetrace.capture.packets import Coded, PacketColumns, to_arrow, to_pandas
from rocetrace.capture.reader import CaptureInfo, iter_packet_columns
from rocetrace.capture.split import Segment
from rocetrace.scale.keys import address_hashes, pairs_of, partition_of_pair
from rocetrace.scale.shards import ShardWriter

CHUNK = 1 << 18  # frames decoded at a time (~35 MB of packet table at snap length 128)


@dataclass(frozen=True)
class DecodeJob:
    """One segment to decode: which, into which shard folder, cut into how many partitions."""

    workdir: str
    segment: Segment
    index: int  # the segment's number in the capture
    file: int  # the file's number in the capture's input list
    first: bool  # the file's first segment (it measures the clock's head)
    partitions: int
    roce_port: int = 4791
    max_gzip_ratio: float = 200.0
    ordered: bool = False  # several files: write each row's merge key (order_ts)


@dataclass
class Decoded:
    """What a decode task hands back (small: no packet rows)."""

    job: DecodeJob
    info: CaptureInfo
    mads: pd.DataFrame
    totals: ClockTotals
    max_ts: int | None
    head: pd.DataFrame | None  # the clock's sample: ts_ns, src, dst (address hashes), wire_len
    rows: dict[int, int] = field(default_factory=dict)  # rows written per partition
    pair_rows: dict[int, int] = field(default_factory=dict)  # rows per IP pair hash

    @property
    def ended_at(self) -> int:
        """The first byte of the segment no record was read from (its end when verified)."""
        return self.job.segment.end - self.info.tail_bytes


def decode_segment(job: DecodeJob) -> Decoded:
    """Decode the segment into shards; runs in a Dask worker (or in the caller)."""
    writer = ShardWriter(Path(job.workdir), job.index)
    mads: list[MadRows] = []
    totals, carried, info = ClockTotals(), None, None
    heads: list[pd.DataFrame] = []
    pair_rows: dict[int, int] = {}
    max_ts: int | None = None
    try:
        for columns, seen in iter_packet_columns(
            job.segment.path, chunk_packets=CHUNK, roce_port=job.roce_port, mads=mads,
            max_gzip_ratio=job.max_gzip_ratio, span=job.segment.span, state=job.segment.state,
        ):  # fmt: skip
            info = seen
            if len(columns) == 0:
                continue
            table = to_arrow(columns)
            ts = table.column("ts_ns").to_numpy()
            totals = totals.join(ClockTotals.of(ts, table.column("wire_len").to_numpy()))
            max_ts = max(int(ts.max()), max_ts if max_ts is not None else int(ts.max()))
            if job.ordered:
                keys = merge_keys(ts, carried)
                carried = int(keys[-1])
                table = table.append_column("order_ts", pa.array(keys))
            if job.first and sum(map(len, heads)) < SAMPLE:
                heads.append(clock_head(columns))
            pairs = _pairs(columns)
            _count(pair_rows, pairs)
            writer.write(table, partition_of_pair(pairs, job.partitions))
    finally:
        writer.close()
    assert info is not None
    head = pd.concat(heads, ignore_index=True).iloc[:SAMPLE] if heads else None
    rows = dict(writer.rows)
    return Decoded(job, info, mads_frame(mads), totals, max_ts, head, rows, pair_rows)


def _pairs(columns: PacketColumns) -> np.ndarray:
    src, dst = columns.columns["src_ip"], columns.columns["dst_ip"]
    assert isinstance(src, Coded) and isinstance(dst, Coded)
    return pairs_of((src.codes, list(src.categories)), (dst.codes, list(dst.categories)))


def _count(rows: dict[int, int], pairs: np.ndarray) -> None:
    """Add a chunk's rows per IP pair (what balance.split_jobs sizes partition tasks by)."""
    found, counts = np.unique(pairs[pairs >= 0], return_counts=True)
    for pair, n in zip(found.tolist(), counts.tolist(), strict=True):
        rows[pair] = rows.get(pair, 0) + n


def clock_head(columns: PacketColumns) -> pd.DataFrame:
    """The clock's head sample of a file's first chunk (stages.clock_sample), sources and
    destinations as address hashes: the same in every file and worker."""
    packets = to_pandas(columns).iloc[:SAMPLE]
    pp = prepare(packets)
    hashes = np.append(address_hashes(list(pp.ips)), np.int64(-1))
    return pd.DataFrame(
        {
            "ts_ns": pp.ts,
            "src": hashes[pp.src],
            "dst": hashes[pp.dst],
            "wire_len": pp.wire_len.astype(np.int64),
            "frame": pp.frame,
        }
    )
