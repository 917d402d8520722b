"""Decode a capture into a Parquet or CSV file chunk by chunk, in bounded memory.

Each chunk is appended to the output as an Arrow table as soon as it is decoded, so a
capture larger than memory converts with at most two chunks (plus one window) resident.
pandas is never imported: the summary's counts come from the categorical codes.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np
import pyarrow as pa

from rocetrace.capture.gunzip import MAX_GZIP_RATIO
from rocetrace.capture.packets import (
    Coded,
    PacketColumns,
    arrow_schema,
    dictionary_columns,
    to_arrow,
)
from rocetrace.capture.reader import CaptureInfo, iter_packet_columns
from rocetrace.capture.source import Progress
from rocetrace.capture.table import OPCODE_NAMES
from rocetrace.errors import OutputError
from rocetrace.output import atomic_path, check_outputs
from rocetrace.schema import PACKET_COLUMNS
from rocetrace.schema.column import pandas_metadata

if TYPE_CHECKING:
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
PREVIEW_ROWS = 10
CHUNK_PACKETS = 1_000_000
# Bytes per window: a chunk is written while the next decodes, small enough that the last
# write (not overlapped) is short and the arrays reuse heap memory instead of fresh pages.
BLOCK_BYTES = 16 << 20
# Parquet min/max statistics only where readers prune row groups by them (frame and time
# ranges, one QP's PSNs): on every column they cost a quarter of the writing's CPU.
STATISTICS_COLUMNS = ("frame", "ts_ns", "dest_qp", "psn")
# Values a Parquet column writer takes per batch (default 1024): a window's row group in one
# batch costs ~5% less writing CPU; pages stay under ~1 MB (8-byte values of ~120k rows).
WRITE_BATCH_ROWS = 1 << 17


class Sink(Protocol):
    def write(self, table: pa.Table) -> None: ...
    def close(self) -> None: ...


class ParquetSink:
    """Row groups appended per chunk, all in the packet table's one Arrow schema."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pq.ParquetWriter | None = None

    def write(self, table: pa.Table) -> None:
        if self.writer is None:
            import pyarrow.parquet as pq

            # snappy keeps writing as fast as decoding
            dicts = dictionary_columns(table.schema)
            # The pandas metadata makes plain pandas.read_parquet give the declared dtypes.
            meta = pandas_metadata(PACKET_COLUMNS, arrow_schema())
            schema = arrow_schema().with_metadata({"pandas": meta})
            self.writer = pq.ParquetWriter(
                self.path, schema, compression="snappy", use_dictionary=dicts,
                write_statistics=list(STATISTICS_COLUMNS), write_batch_size=WRITE_BATCH_ROWS,
            )  # fmt: skip
        self.writer.write_table(table)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class CsvSink:
    """CSV with the schema's column names as header; categoricals written as their text."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pacsv.CSVWriter | None = None

    def write(self, table: pa.Table) -> None:
        plain = table.cast(_plain_schema())
        if self.writer is None:
            import pyarrow.csv as pacsv

            self.writer = pacsv.CSVWriter(self.path, plain.schema)
        self.writer.write_table(plain)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def _plain_schema() -> pa.Schema:
    """The packet table's schema with categoricals as their values (CSV has no dictionary)."""
    return pa.schema(
        pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
        for f in arrow_schema()
    )


SINKS: dict[str, type[ParquetSink] | type[CsvSink]] = {"parquet": ParquetSink, "csv": CsvSink}
# Imported while the first chunk decodes (pyarrow.parquet: ~25 ms, it loads pyarrow.fs).
WRITER_MODULES = {"parquet": "pyarrow.parquet", "csv": "pyarrow.csv"}


def sink_kind(path: Path) -> str:
    """The output format of the path's extension; any other is an OutputError."""
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise OutputError(f"{path}: output must end in .parquet or .csv")
    return kind


@dataclass
class DecodeResult:
    """The capture's info plus what a summary needs: opcode counts and the first frames."""

    info: CaptureInfo
    opcodes: Counter[str] = field(default_factory=Counter)
    preview: pa.Table | None = None


Chunk = tuple[PacketColumns, CaptureInfo]
Chunks = Iterator[Chunk]


def decode_capture(
    path: str | os.PathLike[str], output: Path | None = None, *, limit: int | None = None,
    roce_port: int = 4791, chunk_packets: int = CHUNK_PACKETS, progress: Progress | None = None,
    max_gzip_ratio: float = MAX_GZIP_RATIO,
) -> DecodeResult:  # fmt: skip
    """Decode a capture; write the packet table to `output` (Parquet / CSV) chunk by chunk.

    The output is refused when it is the capture itself, and created only once the capture's
    first chunk decoded: as a temporary file renamed into place at the end, so a failure or
    an interrupt leaves no partial table (rocetrace.output).
    """
    kind = None
    if output is not None:
        check_outputs([path], [output])
        kind = sink_kind(output)
    chunks = iter_packet_columns(
        path, chunk_packets=chunk_packets, roce_port=roce_port, limit=limit,
        progress=progress, block_bytes=BLOCK_BYTES, max_gzip_ratio=max_gzip_ratio,
    )  # fmt: skip
    with closing(chunks):
        if kind is None or output is None:
            return _summarise(chunks)
        # One writer thread: chunk i is written while chunk i+1 decodes (both release the
        # GIL); it imports its writer while the first chunk decodes.
        with ThreadPoolExecutor(max_workers=1) as pool:
            prepared = pool.submit(_import, WRITER_MODULES[kind])
            first = next(chunks)  # the capture is known good before the output exists
            with atomic_path(output) as tmp:
                sink = SINKS[kind](tmp)
                return _write_all(sink, pool, prepared, first, chunks, output)


def _summarise(chunks: Chunks) -> DecodeResult:
    """Decode without an output: the opcode counts and the first frames."""
    result: DecodeResult | None = None
    for packets, info in chunks:
        result = _add_chunk(result, packets, info)
    assert result is not None  # iter_packet_columns yields at least one chunk
    return result


def _add_chunk(
    result: DecodeResult | None, packets: PacketColumns, info: CaptureInfo
) -> DecodeResult:
    if result is None:
        result = DecodeResult(info, preview=to_arrow(packets).slice(0, PREVIEW_ROWS))
    result.opcodes.update(opcode_counts(packets))
    return result


def _write_all(
    sink: Sink, pool: ThreadPoolExecutor, pending: Future[None], first: Chunk, chunks: Chunks,
    output: Path,
) -> DecodeResult:  # fmt: skip
    """Every chunk to the sink, each write overlapping the next chunk's decoding. On any
    error the writer thread is let finish before the sink is closed (closing under a
    running write broke the file and hid the first error behind pyarrow's)."""
    result = None
    try:
        for packets, info in itertools.chain([first], chunks):
            result = _add_chunk(result, packets, info)
            _wait(pending, output)
            pending = pool.submit(_write, sink, packets)
        _wait(pending, output)
        _close(sink, output)
    except BaseException:
        _settle(pending)
        with contextlib.suppress(Exception):
            sink.close()
        raise
    assert result is not None
    return result


def opcode_counts(packets: PacketColumns) -> dict[str, int]:
    """Frames per opcode name, from the categorical's codes."""
    coded = packets.columns["opcode_name"]
    assert isinstance(coded, Coded)
    codes = coded.codes[coded.codes >= 0]
    counts = np.bincount(codes, minlength=len(OPCODE_NAMES))
    return {OPCODE_NAMES[i]: int(counts[i]) for i in np.flatnonzero(counts)}


def _import(module: str) -> None:
    importlib.import_module(module)


def _write(sink: Sink, packets: PacketColumns) -> None:
    sink.write(to_arrow(packets))


def _wait(pending: Future[None] | None, output: Path | None) -> None:
    """Let the previous chunk's write finish; a failed write is an OutputError."""
    if pending is None:
        return
    try:
        pending.result()
    except OSError as exc:
        raise OutputError(f"{output}: write failed ({exc})") from None


def _close(sink: Sink, output: Path) -> None:
    """Finish the file (Parquet writes its footer here: a full disk shows now)."""
    try:
        sink.close()
    except OSError as exc:
        raise OutputError(f"{output}: write failed ({exc})") from None


def _settle(pending: Future[None]) -> None:
    """Wait for a write in flight, whatever its outcome: the error being raised wins."""
    with contextlib.suppress(BaseException):
        pending.exception()
