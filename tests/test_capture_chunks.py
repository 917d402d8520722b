"""Chunked reading equals one-shot reading; the table's schema and memory; real captures."""

from __future__ import annotations

import sys
from pathlib import Path

import dpkt
import pandas as pd
import pytest
from test_capture_formats import bth, frames_ts, roce_v2

from rocetrace.capture import iter_capture, read_capture, write_capture
from rocetrace.dissectors.icrc import compute_icrc
from rocetrace.schema import PACKET_COLUMN_NAMES, PACKET_DTYPES

REPO = Path(__file__).resolve().parent.parent


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as objects, so tables whose category lists differ compare by value."""
    return df.astype(
        {c: object for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)}
    )


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_chunks_equal_one_shot(tmp_path: Path, fmt: str) -> None:
    frames = [roce_v2(bth(psn=p, qp=p % 3), vlans=(p,) if p % 5 == 0 else ()) for p in range(57)]
    path = write_capture(tmp_path / f"x.{fmt}", frames_ts(57), frames, fmt=fmt)  # type: ignore[arg-type]
    whole = read_capture(path).packets
    chunks = list(iter_capture(path, chunk_packets=10, block_bytes=1000))
    assert len(chunks) >= 6 and all(len(c.packets) <= 10 for c in chunks)
    joined = pd.concat([_plain(c.packets) for c in chunks], ignore_index=True)
    pd.testing.assert_frame_equal(joined, _plain(whole), check_dtype=False)
    assert chunks[-1].info.packets == 57 == len(whole)


def test_schema_columns_and_dtypes(tmp_path: Path) -> None:
    df = read_capture(write_capture(tmp_path / "x.pcap", frames_ts(2), [roce_v2()] * 2)).packets
    assert tuple(df.columns) == PACKET_COLUMN_NAMES
    for name, dtype in PACKET_DTYPES.items():
        assert df[name].dtype == dtype, name


def test_memory_per_packet(tmp_path: Path) -> None:
    """The issue's budget: <= 150 bytes per packet on the benchmark's kind of capture."""
    sys.path.insert(0, str(REPO))
    try:
        from benchmarks.bulk_capture import bulk_capture
    finally:
        sys.path.remove(str(REPO))
    bulk_capture(tmp_path / "b.pcap", 50_000)
    df = read_capture(tmp_path / "b.pcap").packets
    per_packet = df.memory_usage(deep=True).sum() / len(df)
    assert per_packet <= 150, per_packet
    assert df["opcode"].notna().all() and (df["icrc_status"] != "bad").all()


def test_real_captures_every_icrc_ok(real_captures: list[Path]) -> None:
    """Every RoCE frame of the real captures: ICRC ok, and the kernel's stored value is
    the one dissectors.icrc.compute_icrc computes on the same bytes (read by dpkt)."""
    for path in real_captures:
        df = read_capture(path).packets
        roce = df[df["encap"].isin(["roce_v2", "roce_v1", "vxlan+roce_v2"])]
        assert len(roce) and (roce["icrc_status"] == "ok").all(), path.name
        with open(path, "rb") as fh:
            frames = [bytes(b) for _, b in dpkt.pcap.Reader(fh)]
        for frame_no, icrc in zip(roce["frame"], roce["icrc"], strict=True):
            ip = dpkt.ethernet.Ethernet(frames[frame_no - 1]).data
            assert compute_icrc(bytes(ip)[: ip.len]) == icrc, (path.name, frame_no)
