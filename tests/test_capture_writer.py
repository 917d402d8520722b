"""The pcap/pcapng writer round-trips through dpkt's readers (an independent implementation)."""

from __future__ import annotations

import gzip
from pathlib import Path

import dpkt
import numpy as np
import pytest

from rocetrace.capture import write_capture

TS0 = 1_700_000_000_123_456_789


def _frames(n: int) -> list[bytes]:
    return [bytes((i + k) % 256 for k in range(20 + i * 7 % 90)) for i in range(n)]


def _read_dpkt(path: Path) -> list[tuple[float, bytes]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        reader = dpkt.pcapng.Reader(fh) if ".pcapng" in path.name else dpkt.pcap.Reader(fh)
        return [(float(t), bytes(b)) for t, b in reader]


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("nanosecond", [True, False])
@pytest.mark.parametrize("order", ["<", ">"])
def test_round_trip_list_form(tmp_path: Path, fmt: str, nanosecond: bool, order: str) -> None:
    frames = _frames(30)
    ts = TS0 + np.arange(30, dtype=np.int64) * 1_000_003
    path = write_capture(
        tmp_path / f"x.{fmt}",
        ts,
        frames,
        fmt=fmt,
        nanosecond=nanosecond,
        byteorder=order,  # type: ignore[arg-type]
    )
    got = _read_dpkt(path)
    assert [b for _, b in got] == frames
    assert got[7][0] == pytest.approx(ts[7] / 1e9, abs=2e-6)


def test_array_form_snaplen_and_gzip(tmp_path: Path) -> None:
    frames = _frames(40)
    buf = np.frombuffer(b"".join(frames), dtype=np.uint8)
    lengths = np.array([len(f) for f in frames], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ts = TS0 + np.arange(40, dtype=np.int64)
    path = write_capture(tmp_path / "x.pcap.gz", ts, (buf, offsets, lengths), snaplen=64)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    got = _read_dpkt(path)
    assert [b for _, b in got] == [f[:64] for f in frames]
    with gzip.open(path, "rb") as fh:
        records = list(dpkt.pcap.Reader(fh))
    assert len(records) == 40


def test_wire_lens_are_recorded(tmp_path: Path) -> None:
    frames = [b"a" * 60, b"b" * 80]
    path = write_capture(
        tmp_path / "x.pcap", np.array([1, 2]), frames, wire_lens=np.array([1000, 80])
    )
    raw = path.read_bytes()
    # first record header: ts_sec, ts_frac, incl_len=60, orig_len=1000
    assert np.frombuffer(raw[24:40], "<u4").tolist() == [0, 1, 60, 1000]


def test_length_mismatch_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_capture(tmp_path / "x.pcap", np.array([1, 2, 3]), [b"a"])
