"""Decode a capture into a Parquet or CSV file chunk by chunk, in bounded memory.

Each chunk of iter_capture is appended to the output as soon as it is decoded, so a capture
larger than memory converts with at most one chunk (plus one read block) resident.
"""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from rocetrace.capture.reader import CaptureInfo, iter_capture
from rocetrace.capture.source import Progress
from rocetrace.errors import OutputError

FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}
PREVIEW_ROWS = 10


class Sink(Protocol):
    def write(self, table: pa.Table) -> None: ...
    def close(self) -> None: ...


def arrow_table(df: pd.DataFrame) -> pa.Table:
    """The packet table as Arrow with chunk-independent types (dictionary indices int32)."""
    table = pa.Table.from_pandas(df, preserve_index=False)
    fields = []
    for f in table.schema:
        t = f.type
        if pa.types.is_dictionary(t):
            value = pa.string() if pa.types.is_null(t.value_type) else t.value_type
            t = pa.dictionary(pa.int32(), value)
        fields.append(pa.field(f.name, t))
    return table.cast(pa.schema(fields))


class ParquetSink:
    """Row groups appended per chunk; the schema is fixed by the first chunk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pq.ParquetWriter | None = None
        self.schema: pa.Schema | None = None

    def write(self, table: pa.Table) -> None:
        if self.writer is None:
            self.schema = table.schema
            # Dictionary pages only for the categorical columns: integers (PSNs, times)
            # rarely repeat, and snappy keeps writing as fast as decoding.
            dicts = [f.name for f in table.schema if pa.types.is_dictionary(f.type)]
            self.writer = pq.ParquetWriter(
                self.path, table.schema, compression="snappy", use_dictionary=dicts
            )
        self.writer.write_table(table.cast(self.schema))

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


class CsvSink:
    """CSV with the schema's column names as header; categoricals written as their text."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.writer: pacsv.CSVWriter | None = None

    def write(self, table: pa.Table) -> None:
        plain = table.cast(
            pa.schema(
                pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
                for f in table.schema
            )
        )
        if self.writer is None:
            self.writer = pacsv.CSVWriter(self.path, plain.schema)
        self.writer.write_table(plain)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def open_sink(path: Path) -> Sink:
    """A sink for the output path's extension; cannot-write is an OutputError."""
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise OutputError(f"{path}: output must end in .parquet or .csv")
    try:
        with open(path, "wb"):
            pass
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror})") from None
    return ParquetSink(path) if kind == "parquet" else CsvSink(path)


@dataclass
class DecodeResult:
    """The capture's info plus what a summary needs: opcode counts and the first frames."""

    info: CaptureInfo
    opcodes: Counter[str] = field(default_factory=Counter)
    preview: pd.DataFrame | None = None


def decode_capture(
    path: str | os.PathLike[str], output: Path | None = None, *, limit: int | None = None,
    roce_port: int = 4791, chunk_packets: int = 1_000_000, progress: Progress | None = None,
) -> DecodeResult:  # fmt: skip
    """Decode a capture; write the packet table to `output` (Parquet / CSV) chunk by chunk."""
    sink = open_sink(output) if output is not None else None
    result: DecodeResult | None = None
    # One writer thread: chunk i is written while chunk i+1 decodes (both release the GIL).
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending: Future[None] | None = None
        try:
            for cap in iter_capture(
                path, chunk_packets=chunk_packets, roce_port=roce_port, limit=limit,
                progress=progress,
            ):  # fmt: skip
                if result is None:
                    result = DecodeResult(cap.info, preview=cap.packets.head(PREVIEW_ROWS))
                counts = cap.packets["opcode_name"].value_counts()
                result.opcodes.update({str(k): int(v) for k, v in counts.items()})
                if sink is not None:
                    _wait(pending, output)
                    pending = pool.submit(sink.write, arrow_table(cap.packets))
            _wait(pending, output)
        finally:
            if sink is not None:
                sink.close()
    assert result is not None  # iter_capture yields at least one chunk
    return result


def _wait(pending: Future[None] | None, output: Path | None) -> None:
    """Let the previous chunk's write finish; a failed write is an OutputError."""
    if pending is None:
        return
    try:
        pending.result()
    except OSError as exc:
        raise OutputError(f"{output}: write failed ({exc})") from None
