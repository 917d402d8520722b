"""Bad input never raises a traceback: typed errors for unusable files, named anomalies for
odd frames, an incomplete tail for a cut-off file."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from test_capture_formats import _pcapng, bth, frames_ts, roce_v2

from rocetrace.capture import read_capture, write_capture
from rocetrace.dissectors.reth import RETH
from rocetrace.errors import CaptureNotFound, NotACapture, UnsupportedLinkType


def test_snap_length_cuts(tmp_path: Path) -> None:
    """Cut in the payload, inside RETH, inside the BTH: decode as far as the bytes go."""
    write = roce_v2(
        bth(0x06, psn=1) + RETH.encode(va=5, r_key=6, dma_length=4096), payload=bytes(64)
    )
    frames = [write, write[:66], write[:50]]  # RETH is bytes 54..70, BTH 42..54
    wire = [len(write)] * 3
    path = write_capture(tmp_path / "x.pcap", frames_ts(3), frames, wire_lens=wire)
    cap = read_capture(path)
    df = cap.packets
    assert df["icrc_status"].tolist() == ["ok", "uncheckable", "uncheckable"]
    assert df["anomaly"].tolist()[1:] == ["truncated_ext_header", "truncated_bth"]
    assert df["reth_va"].tolist()[:2] == [5, 5] and df["reth_dma_length"].isna().tolist()[1]
    assert df["opcode"].tolist() == [6, 6, 6] and df["psn"].isna().tolist() == [False, False, True]
    assert df["payload_len"].isna().tolist() == [False, False, True]
    assert df["payload_len"].tolist()[:2] == [64, 64]
    assert df["wire_len"].tolist() == wire and df["cap_len"].tolist() == [len(write), 66, 50]
    assert cap.info.truncated_packets == 2 and cap.info.malformed_packets == 0


def test_snap_cut_payload_only_has_no_anomaly(tmp_path: Path) -> None:
    write = roce_v2(bth(0x07), payload=bytes(200))
    path = write_capture(tmp_path / "x.pcap", frames_ts(1), [write], snaplen=128)
    row = read_capture(path).packets.iloc[0]
    assert row.icrc_status == "uncheckable" and row.payload_len == 200
    assert row.anomaly != row.anomaly  # NaN: no anomaly


def test_unknown_opcode_short_udp_and_counts(tmp_path: Path) -> None:
    unknown = roce_v2(bth(0x1F))
    short = bytes(Ether() / IP() / UDP(dport=4791) / Raw(bth()[:8]))
    cap = read_capture(write_capture(tmp_path / "x.pcap", frames_ts(2), [unknown, short]))
    df = cap.packets
    assert df["opcode_name"].tolist()[0] == "UNKNOWN" and df["opcode"].tolist()[0] == 0x1F
    assert df["anomaly"].tolist() == ["unknown_opcode", "short_udp"]
    assert cap.info.anomaly_counts == {"unknown_opcode": 1, "short_udp": 1}
    assert cap.info.malformed_packets == 2


def test_truncated_last_record_keeps_the_rest(tmp_path: Path) -> None:
    path = write_capture(tmp_path / "x.pcap", frames_ts(4), [roce_v2(bth(psn=p)) for p in range(4)])
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    cap = read_capture(path)
    assert cap.info.packets == 3 and cap.info.incomplete_tail
    assert cap.info.tail_bytes == 16 + len(roce_v2()) - 10
    assert cap.packets["psn"].tolist() == [0, 1, 2]
    path.write_bytes(data[: -len(roce_v2()) - 16 + 5])  # cut inside the record header
    assert read_capture(path).info.incomplete_tail


@pytest.mark.parametrize(
    ("content", "error"),
    [(b"", NotACapture), (b"hello world, not a capture at all", NotACapture),
     (b"\x1f\x8b\x08\x00garbage", NotACapture)],
)  # fmt: skip
def test_not_a_capture(tmp_path: Path, content: bytes, error: type[Exception]) -> None:
    path = tmp_path / "x.pcap"
    path.write_bytes(content)
    with pytest.raises(error):
        read_capture(path)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(CaptureNotFound):
        read_capture(tmp_path / "nope.pcap")
    with pytest.raises(NotACapture):
        read_capture(tmp_path)


def test_unsupported_link_type(tmp_path: Path) -> None:
    path = write_capture(tmp_path / "x.pcap", frames_ts(1), [roce_v2()], linktype=197)
    with pytest.raises(UnsupportedLinkType):
        read_capture(path)
    only_bad = tmp_path / "bad.pcapng"
    only_bad.write_bytes(_pcapng("<", [(197, None)], [(0, 1, roce_v2())]))
    with pytest.raises(UnsupportedLinkType):
        read_capture(only_bad)


def test_pcapng_unsupported_interface_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "x.pcapng"
    path.write_bytes(
        _pcapng("<", [(1, None), (197, None)], [(0, 1, roce_v2()), (1, 2, b"\x00" * 30)])
    )
    cap = read_capture(path)
    assert cap.packets["anomaly"].tolist()[1] == "unsupported_link_type"
    assert cap.info.anomaly_counts == {"unsupported_link_type": 1} and cap.info.packets == 2


def test_header_only_and_corrupt_record(tmp_path: Path) -> None:
    path = write_capture(tmp_path / "x.pcap", frames_ts(0), [])
    cap = read_capture(path)
    assert len(cap.packets) == 0 and cap.info.packets == 0 and not cap.info.incomplete_tail
    assert list(cap.packets.columns)[:3] == ["frame", "ts_ns", "cap_len"]
    good = write_capture(tmp_path / "y.pcap", frames_ts(1), [roce_v2()]).read_bytes()
    (tmp_path / "y.pcap").write_bytes(good + struct.pack("<IIII", 0, 0, 0x7FFFFFFF, 10) + bytes(8))
    cap = read_capture(tmp_path / "y.pcap")
    assert cap.info.packets == 1 and cap.info.corrupt_records == 1 and cap.info.skipped_bytes == 24
    assert not cap.info.incomplete_tail


def test_limit_and_progress(tmp_path: Path) -> None:
    path = write_capture(
        tmp_path / "x.pcap", frames_ts(10), [roce_v2(bth(psn=p)) for p in range(10)]
    )
    calls: list[tuple[int, int]] = []
    cap = read_capture(path, limit=4, progress=lambda done, total: calls.append((done, total)))
    assert cap.packets["psn"].tolist() == [0, 1, 2, 3] and not cap.info.incomplete_tail
    assert calls and calls[-1][1] == path.stat().st_size
