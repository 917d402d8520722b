"""Issue 18, defect 7: malformed frames never make PSN-based findings. A frame without a whole
BTH, with an unknown opcode, a bad IPv4 header, a UDP length beyond its IP packet or in IP
fragments is a named anomaly, stays in the packet table, and is in no flow or PSN stream;
the JSON summary counts anomalies per reason."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from test_capture_formats import bth, frames_ts, roce_v2

from rocetrace import analyze
from rocetrace.capture import read_capture, write_capture

FLOW = 20
AT = 10  # the flow's frame a malformed one replaces


def _frame(l3: Packet, udp_payload: bytes) -> bytes:
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    return bytes(eth / l3 / UDP(sport=49152, dport=4791) / Raw(udp_payload))


def _ipv4(**kw: object) -> Packet:
    return IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6A, **kw)


def _with_byte(frame: bytes, at: int, value: int) -> bytes:
    return frame[:at] + bytes([value]) + frame[at + 1 :]


def _with_u16(frame: bytes, at: int, value: int) -> bytes:
    return frame[:at] + struct.pack(">H", value) + frame[at + 2 :]


GOOD = roce_v2(bth(psn=AT), payload=bytes(32))
MALFORMED = {
    "11-byte UDP payload (no PSN)": (_frame(_ipv4(), bth(psn=AT)[:11]), "short_udp"),
    "11-byte UDP payload, Ethernet padding": (
        _frame(_ipv4(), bth(psn=AT)[:11]).ljust(60, b"\0"),
        "short_udp",
    ),
    "unknown opcode": (roce_v2(bth(0x1F, psn=AT)), "unknown_opcode"),
    "IPv4 IHL 4": (_with_byte(GOOD, 14, 0x44), "bad_ip_header"),
    "IPv4 total length below IHL": (_with_u16(GOOD, 16, 12), "bad_ip_header"),
    "UDP length beyond the IP length": (_with_u16(GOOD, 38, 200), "bad_udp_length"),
    "UDP length below 8": (_with_u16(GOOD, 38, 4), "bad_udp_length"),
    "IPv4 first fragment (MF)": (_frame(_ipv4(flags="MF"), bth(psn=AT) + bytes(36)), "ip_fragment"),
    "IPv6 first fragment": (
        bytes(
            Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
            / IPv6(src="fd00::1", dst="fd00::2", tc=0x6A)
            / IPv6ExtHdrFragment(m=1, offset=0, nh=17)
            / UDP(dport=4791)
            / Raw(bth(psn=AT) + bytes(36))
        ),
        "ip_fragment",
    ),
}


def _capture(tmp_path: Path, malformed: bytes) -> Path:
    """The flow (over IPv6 when the malformed frame is IPv6) with frame AT replaced."""
    ipv6 = malformed[12:14] == b"\x86\xdd"
    frames = [roce_v2(bth(psn=k), payload=bytes(32), ipv6=ipv6) for k in range(FLOW)]
    frames[AT] = malformed
    return write_capture(tmp_path / "x.pcap", frames_ts(FLOW), frames)


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_frame_is_named_and_makes_no_psn_finding(tmp_path: Path, case: str) -> None:
    frame, anomaly = MALFORMED[case]
    path = _capture(tmp_path, frame)
    assert read_capture(path).packets["anomaly"].tolist()[AT] == anomaly
    summary = analyze(path).summary()
    codes = {f["code"] for f in summary["findings"]}
    psn_codes = {
        "timeout_retransmission",
        "capture_gap",
        "psn_sequence_error",
        "go_back_0_livelock",
    }
    assert not codes & psn_codes, summary["findings"]
    assert summary["retransmissions"] == []
    assert "PSN -1" not in str(summary["findings"])
    assert summary["capture"]["anomalies"] == {anomaly: 1}
    assert summary["capture"]["malformed_packets"] == 1
    assert [f["packets"] for f in summary["flows"] if f["dest_qp"] == 0x12] == [FLOW - 1]
    assert "malformed_frames" in codes


def test_a_gap_away_from_malformed_frames_is_still_a_capture_drop(tmp_path: Path) -> None:
    """The malformed frame explains only the gap it sits in, not one elsewhere in the flow."""
    frames = [roce_v2(bth(psn=k), payload=bytes(32)) for k in range(FLOW)]
    frames[AT] = roce_v2(bth(0x1F, psn=AT))
    del frames[15]  # PSN 15 never captured
    path = write_capture(tmp_path / "x.pcap", frames_ts(len(frames)), frames)
    gaps = [f for f in analyze(path).summary()["findings"] if f["code"] == "capture_gap"]
    assert len(gaps) == 1 and gaps[0]["message"].startswith("1 PSN missing")


def test_a_snap_length_cut_is_not_malformed(tmp_path: Path) -> None:
    frames = [roce_v2(bth(psn=k), payload=bytes(200)) for k in range(5)]
    path = write_capture(tmp_path / "x.pcap", frames_ts(5), frames, snaplen=128)
    summary = analyze(path).summary()
    assert summary["capture"]["anomalies"] == {} and summary["capture"]["malformed_packets"] == 0
    assert not [f for f in summary["findings"] if f["code"] == "malformed_frames"]
