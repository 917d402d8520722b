"""Reading in windows (memory map, gzip blocks), gzip files cut short, and the packet table's
two faces (Arrow for decode, pandas for read_capture) made from the same columns."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_capture_chunks import _plain
from test_capture_formats import bth, frames_ts, roce_v2

from rocetrace.capture import iter_capture, read_capture, write_capture
from rocetrace.capture.export import decode_capture
from rocetrace.capture.packets import arrow_schema, to_arrow, to_pandas
from rocetrace.capture.reader import iter_packet_columns
from rocetrace.dissectors.atomic import ATOMIC_ETH
from rocetrace.schema import PACKET_COLUMN_NAMES

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    frames = [roce_v2(bth(psn=p), payload=b"\xab" * (p % 7) * 40) for p in range(30)]
    return write_capture(tmp_path / "x.pcap", frames_ts(30), frames)


@pytest.mark.parametrize("block", [64, 300, 1 << 20])
def test_mapped_windows_any_size(capture: Path, block: int) -> None:
    """Windows smaller than one record grow until it fits; every frame is read once."""
    whole = read_capture(capture).packets
    calls: list[tuple[int, int]] = []
    chunks = list(
        iter_capture(capture, block_bytes=block, progress=lambda d, t: calls.append((d, t)))
    )
    joined = pd.concat([_plain(c.packets) for c in chunks], ignore_index=True)
    pd.testing.assert_frame_equal(joined, _plain(whole), check_dtype=False)
    assert not chunks[-1].info.incomplete_tail and chunks[-1].info.packets == 30
    done = [d for d, _ in calls]
    assert done == sorted(done) and calls[-1] == (capture.stat().st_size,) * 2


def test_stopping_early_releases_the_file(capture: Path) -> None:
    for cap in iter_capture(capture, chunk_packets=3, block_bytes=200):
        assert len(cap.packets) <= 3
        break
    assert read_capture(capture).info.packets == 30


def test_gzip_cut_keeps_every_packet_before_the_cut(tmp_path: Path) -> None:
    """A gzip file cut mid-stream is an incomplete tail, not an error; blocks or whole."""
    plain = (SAMPLES / "clean.pcap").read_bytes()
    full = read_capture(SAMPLES / "clean.pcap").packets
    packed = gzip.compress(plain)
    for fraction in (0.3, 0.5, 0.77, 0.999):
        cut = tmp_path / f"cut{fraction}.pcap.gz"
        cut.write_bytes(packed[: int(len(packed) * fraction)])
        cap = read_capture(cut)
        n = len(cap.packets)
        assert 0 < n <= len(full) and cap.info.packets == n, fraction  # 0.999: the trailer
        assert cap.info.incomplete_tail and cap.info.anomaly_counts["truncated_record"] == 1
        pd.testing.assert_frame_equal(_plain(cap.packets), _plain(full.iloc[:n]))
        chunks = list(iter_capture(cut, chunk_packets=50, block_bytes=4096))
        assert sum(len(c.packets) for c in chunks) == n
        assert chunks[-1].info.incomplete_tail and chunks[-1].info.tail_bytes == cap.info.tail_bytes


def test_gzip_whole_and_concatenated_members(tmp_path: Path) -> None:
    plain = (SAMPLES / "clean.pcap").read_bytes()
    half = len(plain) // 2
    two = tmp_path / "two.pcap.gz"
    two.write_bytes(gzip.compress(plain[:half]) + gzip.compress(plain[half:]))
    cap = read_capture(two)
    assert not cap.info.incomplete_tail and "truncated_record" not in cap.info.anomaly_counts
    assert cap.info.packets == read_capture(SAMPLES / "clean.pcap").info.packets


def _atomic_frames() -> list[bytes]:
    atomic = bth(0x14) + ATOMIC_ETH.encode(va=7, r_key=8, swap_add=9, compare=10)
    return [roce_v2(atomic), roce_v2(bth(psn=3)), b"\x00" * 10]


@pytest.mark.parametrize("frames", [_atomic_frames(), [roce_v2()], []])
def test_arrow_and_pandas_faces_agree(tmp_path: Path, frames: list[bytes]) -> None:
    """Both faces hold the same values; the Arrow schema is the fixed one, whatever the
    chunk holds (all-null columns, atomics, no rows)."""
    path = write_capture(tmp_path / "x.pcap", frames_ts(len(frames)), frames)
    [(columns, _)] = list(iter_packet_columns(path))
    table = to_arrow(columns)
    assert table.schema.equals(arrow_schema()) and tuple(table.column_names) == PACKET_COLUMN_NAMES
    assert all(t.index_type == pa.int32() for t in table.schema.types if pa.types.is_dictionary(t))
    df = to_pandas(columns)
    for name in PACKET_COLUMN_NAMES:
        values = [None if pd.isna(v) else v for v in df[name].astype(object)]
        assert values == table.column(name).to_pylist(), name
    if len(frames) == 3:
        assert table.column("atomic_va").to_pylist()[:2] == [7, None]


def test_parquet_schema_is_the_same_whatever_the_chunk_holds(tmp_path: Path) -> None:
    """Chunks with and without addresses or atomics write the one schema (ParquetWriter
    refuses a table whose schema differs from the file's)."""
    frames = [b"\x00" * 10, b"\x00" * 10, *_atomic_frames()]
    path = write_capture(tmp_path / "x.pcap", frames_ts(len(frames)), frames)
    out = tmp_path / "x.parquet"
    decode_capture(path, out, chunk_packets=2)
    assert pq.read_schema(out).names == list(PACKET_COLUMN_NAMES)
    assert pq.ParquetFile(out).metadata.num_row_groups == 3
    table = pq.read_table(out)
    assert table.column("atomic_va").to_pylist()[2:4] == [7, None]
    assert table.column("src_ip").to_pylist()[:3] == [None, None, "10.0.0.1"]
