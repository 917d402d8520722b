"""`rocetrace decode`: a capture file to the packet table (Parquet / CSV), or a summary."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from rocetrace import collector
from rocetrace.commands.options import gzip_ratio_option

if TYPE_CHECKING:
    import pyarrow as pa

    from rocetrace.capture.export import DecodeResult

PREVIEW_COLUMNS = ["frame", "ts_ns", "src_ip", "dst_ip", "opcode_name", "dest_qp", "psn", "anomaly"]


@click.command()
@click.argument("capture", type=click.Path(path_type=Path, dir_okay=True))
@click.option(
    "-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
    help="Write the packet table here: .parquet (Arrow types kept) or .csv (header = column "
    "names). Without it, print a summary and the first frames.",
)  # fmt: skip
@click.option("--limit", type=click.IntRange(min=1), help="Decode only the first N frames.")
@click.option(
    "--roce-port", type=click.IntRange(0, 65535), default=4791, show_default=True,
    help="UDP destination port of RoCEv2.",
)  # fmt: skip
@click.option(
    "--chunk-packets", type=click.IntRange(min=1), default=1_000_000, show_default=True,
    help="Frames decoded (and held in memory) at a time.",
)  # fmt: skip
@gzip_ratio_option
def decode(
    capture: Path, output: Path | None, limit: int | None, roce_port: int, chunk_packets: int,
    max_gzip_ratio: float,
) -> None:  # fmt: skip
    """Decode every frame of CAPTURE into the packet table, one row per frame.

    \b
    CAPTURE is pcap or pcapng (gzip-compressed too), a file or '-' for stdin; link types
    Ethernet, Linux SLL/SLL2 and raw IP; RoCEv2 (also inside VXLAN), RoCEv1 and PFC frames
    are decoded, every other frame stays in the table with its RoCE columns empty, so frame
    numbers match Wireshark.
    The output is written chunk by chunk: files larger than memory are fine.
    Columns, dtypes and meanings: docs/packet-table.md.

    \b
    Examples:
      rocetrace decode x.pcap                     summary + first frames
      rocetrace decode x.pcap.gz -o pk.parquet    packet table for pandas/polars/duckdb
      rocetrace decode x.pcapng -o pk.csv --limit 1000
    """
    from rocetrace.capture.export import decode_capture  # numpy, pyarrow, the kernels

    collector.resume()  # the imports are done (rocetrace/collector.py)

    with _progress() as progress:
        result = decode_capture(
            capture, output, limit=limit, roce_port=roce_port,
            chunk_packets=chunk_packets, progress=progress, max_gzip_ratio=max_gzip_ratio,
        )  # fmt: skip
    click.echo(summary(result, output))


@contextmanager
def _progress() -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on stderr, only when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("decoding", total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def summary(result: DecodeResult, output: Path | None) -> str:
    """A few lines: what the file was, what was in it, where the table went."""
    i = result.info
    lines = [
        f"{i.path}: {i.format}{' (gzip)' if i.compressed else ''}, link types "
        f"{i.link_types}, {i.packets} frames ({i.roce_packets} RoCE, "
        f"{i.truncated_packets} cut by snap length {i.snaplen}, {i.malformed_packets} malformed)",
    ]
    if i.corrupt_records:
        from rocetrace.capture.damage import damage_facts, describe

        regions = describe(damage_facts(i)["corrupt_regions"])
        lines.append(
            f"corrupt records: {i.corrupt_records}, {i.skipped_bytes:,} bytes skipped at "
            f"{regions}; decoding resumed after each"
        )
    if i.incomplete_tail:
        lines.append(f"incomplete last record: {i.tail_bytes} bytes ignored")
    if i.anomaly_counts:
        lines.append(
            "anomalies: " + ", ".join(f"{k}={v}" for k, v in sorted(i.anomaly_counts.items()))
        )
    top = ", ".join(f"{k}={v}" for k, v in result.opcodes.most_common(8) if v)
    if top:
        lines.append(f"opcodes: {top}")
    if output is not None:
        lines.append(f"wrote {output}")
    elif result.preview is not None and len(result.preview):
        lines.append(preview_text(result.preview.select(PREVIEW_COLUMNS)))
    return "\n".join(lines)


def preview_text(table: pa.Table) -> str:
    """A few rows as right-aligned text columns, nulls as '-' (no pandas in this process)."""
    columns = [
        [name, *("-" if v is None else str(v) for v in table.column(name).to_pylist())]
        for name in table.column_names
    ]
    widths = [max(map(len, col)) for col in columns]
    rows = zip(*columns, strict=True)
    return "\n".join(
        "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows
    )
