"""Issue 18, defect 2: one corrupt record mid-file no longer ends the decode. The reader says
where (byte offset, frames before), resynchronises on the next chain of plausible records
(pcap headers; pcapng blocks), counts what it skipped and raises the warning finding
`corrupt_records` (so `--fail-on warning` fails); a file merely cut short stays an
incomplete tail."""

from __future__ import annotations

import gzip
import json
import struct
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
from test_capture_formats import _block, _pcapng, bth, frames_ts, roce_v2
from test_capture_fuzz import rows

from rocetrace import analyze
from rocetrace.capture import iter_capture, read_capture, write_capture
from rocetrace.cli import main

FRAMES = 2000
BAD = 5  # the record whose header lies


@cache
def _frames(n: int) -> list[bytes]:
    return [roce_v2(bth(psn=k), payload=bytes(8 + k % 50)) for k in range(n)]


def _pcap(tmp_path: Path, n: int = FRAMES) -> tuple[bytes, list[int]]:
    """A pcap of n RoCE frames (PSN k in frame k + 1) and where each record starts."""
    blob = write_capture(tmp_path / "clean.pcap", frames_ts(n), _frames(n)).read_bytes()
    starts, pos = [], 24
    while pos < len(blob):
        starts.append(pos)
        pos += 16 + struct.unpack_from("<I", blob, pos + 8)[0]
    return blob, starts


def _with_word(blob: bytes, at: int, word: int, order: str = "<") -> bytes:
    return blob[:at] + struct.pack(order + "I", word) + blob[at + 4 :]


def _psns(path: Path) -> list[int]:
    return [int(p) for p in read_capture(path).packets["psn"]]


@pytest.mark.parametrize("caplen", [1 << 28, 0xFFFFFFFF, 300_000])
def test_a_lying_caplen_in_record_5_of_2000_loses_one_record(tmp_path: Path, caplen: int) -> None:
    blob, starts = _pcap(tmp_path)
    path = tmp_path / "x.pcap"
    path.write_bytes(_with_word(blob, starts[BAD - 1] + 8, caplen))
    cap = read_capture(path)
    assert _psns(path) == [k for k in range(FRAMES) if k != BAD - 1]
    info = cap.info
    assert info.packets == FRAMES - 1 and not info.incomplete_tail
    assert info.corrupt_records == 1
    assert info.corrupt_regions == [(starts[BAD - 1], BAD - 1, starts[BAD] - starts[BAD - 1])]
    chunks = [c.packets for c in iter_capture(path, chunk_packets=700, block_bytes=30000)]
    assert rows(pd.concat(chunks, ignore_index=True)) == rows(cap.packets)


def test_the_finding_is_a_warning_with_the_offset_and_fails_the_gate(tmp_path: Path) -> None:
    blob, starts = _pcap(tmp_path)
    path = tmp_path / "x.pcap"
    path.write_bytes(_with_word(blob, starts[BAD - 1] + 8, 1 << 28))
    summary = analyze(path).summary()
    found = {f["code"]: f for f in summary["findings"]}
    assert "incomplete_tail" not in found
    assert found["corrupt_records"]["severity"] == "warning"
    assert f"byte {starts[BAD - 1]:,} after frame {BAD - 1}" in found["corrupt_records"]["message"]
    assert summary["capture"]["corrupt_records"] == 1
    assert summary["capture"]["corrupt_regions"][0]["offset"] == starts[BAD - 1]
    args = ["analyze", str(path), "--json", str(tmp_path / "s.json"), "--fail-on", "warning"]
    assert main(args) == 1
    assert json.loads((tmp_path / "s.json").read_text())["capture"]["packets"] == FRAMES - 1


def test_gzip_compressed_damage_is_skipped_the_same_way(tmp_path: Path) -> None:
    blob, starts = _pcap(tmp_path)
    path = tmp_path / "x.pcap.gz"
    path.write_bytes(gzip.compress(_with_word(blob, starts[BAD - 1] + 8, 1 << 28)))
    assert _psns(path) == [k for k in range(FRAMES) if k != BAD - 1]
    chunks = [c.packets for c in iter_capture(path, chunk_packets=700, block_bytes=30000)]
    assert len(pd.concat(chunks)) == FRAMES - 1


def test_a_zeroed_stretch_mid_file_is_skipped(tmp_path: Path) -> None:
    """A 4 KiB block of zeros over records (a damaged disk block)."""
    blob, starts = _pcap(tmp_path)
    at = starts[100] + 40
    path = tmp_path / "x.pcap"
    path.write_bytes(blob[:at] + bytes(4096) + blob[at + 4096 :])
    cap = read_capture(path)
    psns = cap.packets["psn"].tolist()  # frame 101's bytes are zeros from its 40th on: no BTH
    lost = [k for k, s in enumerate(starts) if at < s < at + 4096]
    assert psns == [*range(100), pd.NA, *range(lost[-1] + 1, FRAMES)]
    assert cap.info.corrupt_regions == [
        (starts[lost[0]], 101, starts[lost[-1] + 1] - starts[lost[0]])
    ]
    assert not cap.info.incomplete_tail


def test_a_plausible_caplen_past_the_end_with_records_after_is_damage(tmp_path: Path) -> None:
    """Record 5 claims more than the file holds: the old reader called the rest a tail."""
    blob, starts = _pcap(tmp_path, 300)
    path = tmp_path / "x.pcap"
    path.write_bytes(_with_word(blob, starts[BAD - 1] + 8, 200_000))
    cap = read_capture(path)
    assert cap.info.packets == 299 and cap.info.corrupt_records == 1
    assert not cap.info.incomplete_tail


def test_every_cut_of_the_last_records_is_an_incomplete_tail(tmp_path: Path) -> None:
    blob, starts = _pcap(tmp_path, 40)
    path = tmp_path / "x.pcap"
    for cut in range(starts[-3] + 1, len(blob)):
        path.write_bytes(blob[:cut])
        info = read_capture(path).info
        whole = sum(1 for s, e in zip(starts, [*starts[1:], len(blob)], strict=True) if e <= cut)
        assert info.packets == whole and info.corrupt_records == 0, cut
        assert info.incomplete_tail == (cut not in starts), cut


ORDERS = ["<", ">"]


def _ng(order: str, n: int = 60) -> tuple[bytes, list[int]]:
    """A pcapng of n frames (PSN k) and where each of its blocks starts."""
    blob = _pcapng(order, [(1, 9)], [(0, 10 * k, roce_v2(bth(psn=k))) for k in range(n)])
    starts, pos = [], 0
    while pos < len(blob):
        starts.append(pos)
        pos += struct.unpack_from(order + "I", blob, pos + 4)[0]
    return blob, starts


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("length", [0x7FFFFFFE, 13, 4096, 8])  # huge, not x4, plausible, tiny
def test_a_bad_pcapng_block_length_loses_one_block(tmp_path: Path, order: str, length: int) -> None:
    blob, starts = _ng(order)
    epb = starts[2 + BAD - 1]  # after the SHB and the IDB
    path = tmp_path / "x.pcapng"
    path.write_bytes(_with_word(blob, epb + 4, length, order))
    cap = read_capture(path)
    assert _psns(path) == [k for k in range(60) if k != BAD - 1]
    assert cap.info.corrupt_records == 1 and cap.info.corrupt_regions[0][:2] == (epb, BAD - 1)
    assert not cap.info.incomplete_tail


@pytest.mark.parametrize("order", ORDERS)
def test_a_second_section_with_a_bad_byte_order_magic_is_skipped(
    tmp_path: Path, order: str
) -> None:
    first, _ = _ng(order, 10)
    second, _ = _ng(order, 10)
    third, _ = _ng(order, 10)
    bad = second[:8] + b"\x00\x00\x00\x00" + second[12:]  # its SHB's magic wiped
    path = tmp_path / "x.pcapng"
    path.write_bytes(first + bad + third)
    cap = read_capture(path)
    assert _psns(path) == list(range(10)) * 3  # only the second SHB is lost: its frames
    assert cap.info.corrupt_regions == [(len(first), 10, 28)]  # go on the first SHB


def test_a_pcapng_cut_in_its_last_block_is_an_incomplete_tail(tmp_path: Path) -> None:
    blob, starts = _ng("<", 20)
    path = tmp_path / "x.pcapng"
    for cut in range(starts[-2] + 1, len(blob)):
        path.write_bytes(blob[:cut] if cut != starts[-1] else blob[:cut] + _block(1, b"", "<")[:5])
        info = read_capture(path).info
        assert info.corrupt_records == 0 and info.incomplete_tail, cut


@pytest.mark.parametrize("cut", [299, 673])
def test_zeros_inside_a_cut_record_do_not_pass_for_records(tmp_path: Path, cut: int) -> None:
    """Found by the fuzz gate: a GID's zeros read as two empty records after the cut record,
    so the cut looked like damage. Deciding tail or damage takes a whole chain of records."""
    from test_capture_fuzz import base_frames, capture_bytes

    path = tmp_path / "x.pcap"
    path.write_bytes(capture_bytes(tmp_path, "pcap", ">", base_frames())[:cut])
    info = read_capture(path).info
    assert info.incomplete_tail and info.corrupt_records == 0
