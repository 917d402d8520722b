"""The shard folder: a capture's packet table cut by partition into Parquet files.

    WORKDIR/manifest.json          what the folder holds (scale/manifest.py)
    WORKDIR/shards/p00007/s00003.parquet   partition 7's rows of segment 3, in file order
    WORKDIR/shards/link/s00003.parquet     segment 3's frames of no IP pair (PFC, ...)
    WORKDIR/mads.parquet, clock.parquet    the CM MADs and the clock's head sample

Every shard holds the whole packet table's columns (rocetrace/schema.py; `frame` numbered
within its segment, the manifest holds each segment's offset), plus `order_ts` (each file's
running maximum of timestamps, for merging several files by time) when there are several
files. Any Parquet reader opens them (pandas, DuckDB, Spark).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from rocetrace.capture.packets import arrow_schema, dictionary_columns
from rocetrace.scale.keys import LINK

SHARDS = "shards"
_SHARD = re.compile(r"s(\d+)\.parquet$")


def partition_dir(workdir: Path, partition: int) -> Path:
    name = "link" if partition == LINK else f"p{partition:05d}"
    return workdir / SHARDS / name


def shard_path(workdir: Path, partition: int, segment: int) -> Path:
    return partition_dir(workdir, partition) / f"s{segment:05d}.parquet"


def shard_files(workdir: Path, partition: int) -> list[tuple[int, Path]]:
    """(segment, path) of one partition's shards, by segment."""
    folder = partition_dir(workdir, partition)
    paths = folder.glob("s*.parquet") if folder.is_dir() else []
    found = [(_SHARD.search(p.name), p) for p in paths]
    return sorted((int(m.group(1)), p) for m, p in found if m)


def shard_rows(workdir: Path, partition: int) -> int:
    """Rows of a partition in every segment's shard, from the Parquet footers."""
    files = shard_files(workdir, partition)
    return sum(pq.ParquetFile(path).metadata.num_rows for _, path in files)


def partitions_in(workdir: Path) -> list[int]:
    """The partitions with rows in the folder."""
    folder = workdir / SHARDS
    names = [p.name for p in folder.glob("p*")] if folder.is_dir() else []
    return sorted(int(n[1:]) for n in names if n[1:].isdigit())


@dataclass
class ShardWriter:
    """Writes one segment's chunks into its partitions' shards (one Parquet file each)."""

    workdir: Path
    segment: int
    writers: dict[int, pq.ParquetWriter] = field(default_factory=dict)
    rows: dict[int, int] = field(default_factory=dict)

    def write(self, table: pa.Table, partition: np.ndarray) -> None:
        """Rows of one chunk, each to its partition (sorted once, written as slices)."""
        order = np.argsort(partition, kind="stable")
        keys = partition[order]
        table = reordered(table, order)
        cuts = np.flatnonzero(np.diff(keys)) + 1
        for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(keys)], strict=True):
            if hi > lo:
                self._writer(int(keys[lo]), table.schema).write_table(table.slice(lo, hi - lo))
                self.rows[int(keys[lo])] = self.rows.get(int(keys[lo]), 0) + int(hi - lo)

    def _writer(self, partition: int, schema: pa.Schema) -> pq.ParquetWriter:
        if partition not in self.writers:
            path = shard_path(self.workdir, partition, self.segment)
            path.parent.mkdir(parents=True, exist_ok=True)
            self.writers[partition] = pq.ParquetWriter(
                path, schema, compression="lz4", use_dictionary=dictionary_columns(schema),
                write_statistics=["frame", "ts_ns"],
            )  # fmt: skip
        return self.writers[partition]

    def close(self) -> None:
        for w in self.writers.values():
            w.close()
        self.writers.clear()


def reordered(table: pa.Table, order: np.ndarray) -> pa.Table:
    """table.take(order), but a column null throughout is made anew, not taken: in a RoCE
    capture a third of the packet table's columns are (VLAN, VXLAN, IPv6, ...), and taking
    them was 40% of the take's time."""
    rows = pa.array(order)
    columns = [c.take(rows) if _taken(c) else pa.nulls(len(order), c.type) for c in table.columns]
    return pa.table(columns, schema=table.schema)


def _taken(column: pa.ChunkedArray) -> bool:
    """Whether a column must be taken: it holds a value, or categories (a categorical
    keeps its dictionary even where every row is null)."""
    return column.null_count < len(column) or pa.types.is_dictionary(column.type)


def read_shards(
    workdir: Path, partition: int, columns: list[str] | None
) -> tuple[pa.Table, np.ndarray]:
    """A partition's rows of every segment and each row's segment."""
    tables, segments = [], []
    for seg, path in shard_files(workdir, partition):
        t = pq.read_table(path, columns=columns)
        tables.append(t)
        segments.append(np.full(t.num_rows, seg, np.int64))
    if not tables:
        schema = arrow_schema().append(pa.field("order_ts", pa.int64()))
        names = columns if columns is not None else schema.names
        empty = pa.schema([schema.field(c) for c in names]).empty_table()
        return empty, np.zeros(0, np.int64)
    return pa.concat_tables(tables), np.concatenate(segments)
