"""Capture formats the reader must open: pcap (both byte orders, us / ns), pcapng (several
interfaces, if_tsresol, EPB + SPB, both byte orders), gzip detected by magic."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Packet, Raw

from rocetrace.capture import iter_capture, read_capture, write_capture
from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.icrc import compute_icrc, icrc_bytes
from rocetrace.dissectors.reth import RETH

TS0 = 1_700_000_000_123_456_789


def bth(opcode: int = 0x04, qp: int = 0x12, psn: int = 5, **kw: int) -> bytes:
    return BTH.encode(opcode=opcode, dest_qp=qp, psn=psn, pkey=0xFFFF, **kw)


def seal(pkt: Packet) -> bytes:
    """Frame bytes with a correct ICRC in the last 4 bytes of the IP packet."""
    raw = bytearray(bytes(pkt))
    ip_layer = pkt.getlayer(IP) or pkt.getlayer(IPv6)
    ip_at = len(raw) - len(bytes(ip_layer))
    ip_bytes = bytes(raw[ip_at:])
    raw[-4:] = icrc_bytes(compute_icrc(ip_bytes))
    return bytes(raw)


def roce_v2(transport: bytes | None = None, *, payload: bytes = b"\xab" * 8, ipv6: bool = False,
            vlans: tuple[int, ...] = (), tos: int = 0x6A, sport: int = 49152) -> bytes:  # fmt: skip
    """Ethernet [/ 802.1Q...] / IP / UDP 4791 / BTH (+ext) / payload / ICRC, sealed."""
    l2: Packet = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    for i, vid in enumerate(vlans):
        l2 = l2 / Dot1Q(vlan=vid, prio=3 if i == 0 else 0)
    ip = (
        IPv6(src="fd00::1", dst="fd00::2", tc=tos, hlim=7)
        if ipv6
        else IP(src="10.0.0.1", dst="10.0.0.2", tos=tos, ttl=9)
    )
    body = (transport if transport is not None else bth()) + payload + bytes(4)
    return seal(l2 / ip / UDP(sport=sport, dport=4791) / Raw(body))


def frames_ts(n: int) -> np.ndarray:
    return TS0 + np.arange(n, dtype=np.int64) * 1_000_123


@pytest.mark.parametrize("nanosecond", [True, False])
@pytest.mark.parametrize("order", ["<", ">"])
def test_pcap_byte_orders_and_resolutions(tmp_path: Path, nanosecond: bool, order: str) -> None:
    frames = [roce_v2(bth(psn=p)) for p in range(5)]
    path = write_capture(
        tmp_path / "x.pcap", frames_ts(5), frames, nanosecond=nanosecond, byteorder=order
    )  # type: ignore[arg-type]
    cap = read_capture(path)
    df = cap.packets
    expected = frames_ts(5) if nanosecond else frames_ts(5) // 1000 * 1000
    assert df["ts_ns"].tolist() == expected.tolist()
    assert df["psn"].tolist() == [0, 1, 2, 3, 4]
    assert df["frame"].tolist() == [1, 2, 3, 4, 5]
    assert cap.info.ts_resolution_ns == (1 if nanosecond else 1000)
    assert cap.info.format == "pcap" and cap.info.packets == 5 and cap.info.roce_packets == 5
    assert (df["icrc_status"] == "ok").all()


def _block(btype: int, body: bytes, order: str) -> bytes:
    body += bytes(-len(body) % 4)
    n = len(body) + 12
    return struct.pack(order + "II", btype, n) + body + struct.pack(order + "I", n)


def _pcapng(
    order: str,
    interfaces: list[tuple[int, int | None]],
    packets: list[tuple[int, int, bytes]],
    spb: bytes | None = None,
) -> bytes:
    """SHB, one IDB per (link type, if_tsresol), EPB (interface, units, frame), optional SPB."""
    out = _block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1), order)
    for lt, res in interfaces:
        opts = b"" if res is None else struct.pack(order + "HH", 9, 1) + bytes([res, 0, 0, 0])
        out += _block(1, struct.pack(order + "HHI", lt, 0, 65535) + opts + bytes(4), order)
    for ifid, units, frame in packets:
        head = struct.pack(
            order + "IIIII", ifid, units >> 32, units & 0xFFFFFFFF, len(frame), len(frame)
        )
        out += _block(6, head + frame, order)
    if spb is not None:
        out += _block(3, struct.pack(order + "I", len(spb)) + spb, order)
    return out


@pytest.mark.parametrize("order", ["<", ">"])
def test_pcapng_interfaces_with_their_own_resolution_and_link_type(
    tmp_path: Path, order: str
) -> None:
    eth = roce_v2(bth(psn=1))
    raw_ip = eth[14:]  # the same packet on a raw-IP interface
    packets = [
        (0, 1_700_000_000_000_001, eth),
        (1, 1_700_000_000_000_000_002, raw_ip),
        (2, 3 << 20, eth),
    ]
    blob = _pcapng(order, [(1, None), (101, 9), (1, 0x80 | 20)], packets, spb=eth)
    path = tmp_path / "x.pcapng"
    path.write_bytes(blob)
    cap = read_capture(path)
    df = cap.packets
    # The SPB has no timestamp: tshark 4.0 shows none and takes it as 0 (the epoch).
    assert df["ts_ns"].tolist() == [
        1_700_000_000_000_001_000, 1_700_000_000_000_000_002, 3_000_000_000, 0,
    ]  # fmt: skip
    assert df["psn"].tolist() == [1, 1, 1, 1]
    assert df["src_mac"].isna().tolist() == [False, True, False, False]
    assert df["src_ip"].astype(str).tolist() == ["10.0.0.1"] * 4
    assert cap.info.format == "pcapng" and cap.info.link_types == [1, 101]
    assert cap.info.ts_resolution_ns == 1
    assert (df["icrc_status"] == "ok").all()


def test_pcapng_from_writer_and_gzip_detected_by_magic(tmp_path: Path) -> None:
    frames = [roce_v2(bth(qp=q)) for q in (7, 8, 9)]
    plain = write_capture(tmp_path / "x.pcapng", frames_ts(3), frames, fmt="pcapng")
    hidden = tmp_path / "no_gz_suffix.pcap"
    hidden.write_bytes(gzip.compress(plain.read_bytes()))
    cap = read_capture(hidden)
    assert cap.info.compressed and cap.info.format == "pcapng"
    assert cap.packets["dest_qp"].tolist() == [7, 8, 9]
    assert cap.packets["ts_ns"].tolist() == frames_ts(3).tolist()


def test_gzip_pcap_streams_in_chunks(tmp_path: Path) -> None:
    frames = [roce_v2(bth(psn=p)) for p in range(40)]
    path = write_capture(tmp_path / "x.pcap.gz", frames_ts(40), frames)
    chunks = list(iter_capture(path, chunk_packets=6, block_bytes=700))
    assert max(len(c.packets) for c in chunks) <= 6
    assert [p for c in chunks for p in c.packets["psn"].tolist()] == list(range(40))
    assert [f for c in chunks for f in c.packets["frame"].tolist()] == list(range(1, 41))
    assert chunks[-1].info.packets == 40 and chunks[-1].info.compressed


def test_icrc_kernel_agrees_with_reference(tmp_path: Path) -> None:
    """IPv4 and IPv6 frames sealed by dissectors.icrc.compute_icrc check ok; one flipped
    payload bit makes the check fail."""
    write_only = bth(0x0A) + RETH.encode(va=1, r_key=2, dma_length=3)
    frames = [roce_v2(write_only, ipv6=v6) for v6 in (False, True)]
    broken = bytearray(frames[0])
    broken[-6] ^= 1
    path = write_capture(tmp_path / "x.pcap", frames_ts(3), [*frames, bytes(broken)])
    df = read_capture(path).packets
    assert df["icrc"].tolist() == [int.from_bytes(f[-4:], "little") for f in (*frames, broken)]
    assert df["icrc_status"].tolist() == ["ok", "ok", "bad"]
    assert df["anomaly"].tolist()[2] == "bad_icrc"
    assert df["reth_dma_length"].tolist() == [3, 3, 3]
