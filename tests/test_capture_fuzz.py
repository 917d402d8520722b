"""Damaged captures: the C decoder reads untrusted bytes, so every mutation of a valid
capture must decode (or fail with one of rocetrace.errors' typed errors), and every frame
before the damage must decode exactly as it did undamaged.

Mutations: bit flips, truncation at every byte, random words over record / block lengths
(huge caplen included), and frames whose own lengths lie: IPv6 extension header chains,
VXLAN in VXLAN, IP / UDP / IPv6 lengths pointing beyond the frame.
"""

from __future__ import annotations

import struct
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from test_capture_encaps import _roce_v1
from test_capture_formats import _block, bth, frames_ts, roce_v2

from rocetrace.capture import iter_capture, read_capture, write_capture
from rocetrace.dissectors.aeth import AETH
from rocetrace.dissectors.pfc_header import PFC
from rocetrace.dissectors.reth import RETH
from rocetrace.errors import RocetraceError
from rocetrace.schema import ANOMALIES, PACKET_COLUMN_NAMES

FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
GID = bytes.fromhex("fe800000000000000200000000000001")
ANOMALY = PACKET_COLUMN_NAMES.index("anomaly")
Decoded = tuple[list[tuple[object, ...]], list[tuple[object, ...]]]


def vxlan(inner: bytes, depth: int = 1) -> bytes:
    """`inner` wrapped in `depth` VXLAN tunnels (the decoder follows only the first)."""
    for _ in range(depth):
        inner = bytes(
            Ether(src="0a:00:00:00:00:01")
            / IP(src="192.168.0.1", dst="192.168.0.2")
            / UDP(dport=4789)
            / Raw(struct.pack(">II", 0x08000000, 42 << 8) + inner)
        )
    return inner


@cache
def base_frames() -> tuple[bytes, ...]:
    """One frame of every path through the walk."""
    write_only = bth(0x0A, psn=2) + RETH.encode(va=0x1000, r_key=7, dma_length=8)
    pfc = Ether(dst="01:80:c2:00:00:01", type=0x8808) / Raw(
        PFC.encode(opcode=0x0101, class_enable=8, quanta_3=0xFFFF)
    )
    return (
        roce_v2(bth(psn=1)),
        roce_v2(write_only, vlans=(5, 6)),
        roce_v2(bth(0x11, psn=3) + AETH.encode(syndrome=0x60, msn=1), ipv6=True),
        vxlan(roce_v2(bth(psn=4))),
        vxlan(roce_v2(bth(psn=5)), depth=2),
        _roce_v1(GID, GID, bth(0x0A, psn=6) + bytes(16)),
        bytes(pfc),
        roce_v2(bth(psn=7), payload=bytes(100)),
    )


def capture_bytes(tmp_path: Path, fmt: str, order: str, frames: tuple[bytes, ...]) -> bytes:
    """The frames as a pcap / pcapng file (pcapng: the last frame again as an SPB)."""
    path = write_capture(
        tmp_path / "base", frames_ts(len(frames)), list(frames), fmt=fmt,  # type: ignore[arg-type]
        byteorder=order, snaplen=120 if order == ">" else 65535,  # type: ignore[arg-type]
    )  # fmt: skip
    blob = path.read_bytes()
    if fmt == "pcapng":
        blob += _block(3, struct.pack(order + "I", len(frames[-1])) + frames[-1], order)
    return blob


def record_ends(blob: bytes, fmt: str, order: str) -> list[int]:
    """Where each packet record (pcap record, pcapng EPB / SPB) of an intact file ends."""
    ends, pos = [], 24 if fmt == "pcap" else 0
    while pos + 16 <= len(blob):
        if fmt == "pcap":
            pos += 16 + struct.unpack_from(order + "I", blob, pos + 8)[0]
            ends.append(pos)
            continue
        btype, blen = struct.unpack_from(order + "II", blob, pos)
        pos += blen
        if btype in (3, 6):
            ends.append(pos)
    return ends


def _plain(value: object) -> object:
    """None for every kind of null (NaN, pd.NA), else the value."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return None
    return value


def rows(df: pd.DataFrame) -> list[tuple[object, ...]]:
    """Rows as plain values (categoricals compared by value, nulls as None)."""
    columns = [[_plain(v) for v in df[c].tolist()] for c in df.columns]
    return list(zip(*columns, strict=True))


def decode_all(path: Path, chunked: bool = True) -> Decoded | None:
    """read_capture's rows and iter_capture's (tiny chunks and blocks; the same rows unless
    chunked is False), or None for a typed error; anything else (or a crash) fails."""
    try:
        whole = rows(read_capture(path).packets)
    except RocetraceError:
        return None
    if not chunked:
        return whole, whole
    chunks = [c.packets for c in iter_capture(path, chunk_packets=3, block_bytes=64)]
    return whole, rows(pd.concat(chunks, ignore_index=True))


def check_damage(
    tmp_path: Path, fmt: str, order: str, blob: bytes, damaged: bytes, at: int,
    clean: Decoded | None = None, chunked: bool = True,
) -> None:  # fmt: skip
    """Decoding `damaged` (first changed byte at `at`) works, both ways alike, and keeps every
    frame whose record ends before `at`."""
    if clean is None:
        clean = decode_bytes(tmp_path / "clean", blob)
        assert clean is not None
    got = decode_bytes(tmp_path / "damaged", damaged, chunked)
    intact = sum(1 for end in record_ends(blob, fmt, order) if end <= at)
    if got is None:
        assert intact == 0, "a typed error although whole frames came before the damage"
        return
    whole, chunked = got
    assert whole == chunked
    assert whole[:intact] == clean[0][:intact]
    assert {r[ANOMALY] for r in whole} <= {None, *ANOMALIES}


def decode_bytes(path: Path, blob: bytes, chunked: bool = True) -> Decoded | None:
    path.write_bytes(blob)
    return decode_all(path, chunked)


formats = st.sampled_from([("pcap", "<"), ("pcap", ">"), ("pcapng", "<"), ("pcapng", ">")])
WORDS = st.one_of(
    st.sampled_from([0, 1, 3, 12, 13, 0xFFFF, 1 << 28, (1 << 28) + 4, 0x7FFFFFFF, 0xFFFFFFFF]),
    st.integers(0, 0xFFFFFFFF),
)


@FUZZ
@given(fmt=formats, data=st.data())
def test_bit_flips(tmp_path: Path, fmt: tuple[str, str], data: st.DataObject) -> None:
    blob = capture_bytes(tmp_path, *fmt, base_frames())
    damaged = bytearray(blob)
    flips = data.draw(st.lists(st.integers(0, len(blob) * 8 - 1), min_size=1, max_size=8))
    for bit in flips:
        damaged[bit // 8] ^= 1 << (bit % 8)
    check_damage(tmp_path, *fmt, blob, bytes(damaged), min(flips) // 8)


@FUZZ
@given(fmt=formats, data=st.data())
def test_random_words_over_lengths(
    tmp_path: Path, fmt: tuple[str, str], data: st.DataObject
) -> None:
    """A random 32-bit word over a record's caplen / wire length, a block's total length,
    an EPB's interface or caplen, or anywhere."""
    blob = capture_bytes(tmp_path, *fmt, base_frames())
    if fmt[0] == "pcap":
        starts = [24, *record_ends(blob, *fmt)[:-1]]
    else:
        starts = _block_starts(blob, fmt[1])
    start = data.draw(st.sampled_from(starts))
    field = data.draw(st.sampled_from([4, 8, 12, 20, 24]) | st.integers(0, 40))
    at = min(start + field, len(blob) - 4)
    word = data.draw(WORDS).to_bytes(4, "little" if data.draw(st.booleans()) else "big")
    damaged = blob[:at] + word + blob[at + 4 :]
    check_damage(tmp_path, *fmt, blob, damaged, at)


def _block_starts(blob: bytes, order: str) -> list[int]:
    starts, pos = [], 0
    while pos + 12 <= len(blob):
        starts.append(pos)
        pos += struct.unpack_from(order + "I", blob, pos + 4)[0]
    return starts


@pytest.mark.parametrize(("fmt", "order"), [("pcap", "<"), ("pcapng", ">")])
def test_truncation_at_every_byte(tmp_path: Path, fmt: str, order: str) -> None:
    blob = capture_bytes(tmp_path, fmt, order, base_frames()[:2])
    clean = decode_bytes(tmp_path / "clean", blob)
    for cut in range(len(blob)):  # iter_capture too at every 16th cut (it is slower)
        check_damage(tmp_path, fmt, order, blob, blob[:cut], cut, clean, chunked=cut % 16 == 0)


def _ipv6_chain(lengths: list[int], kinds: list[int], cut: int) -> bytes:
    """Ethernet / IPv6 / a chain of extension headers (hop-by-hop, routing, fragment,
    destination options, repeated at will) / UDP 4791 / BTH, cut to `cut` bytes."""
    ext = b""
    for k, (kind, length) in enumerate(zip(kinds, lengths, strict=True)):
        nxt = kinds[k + 1] if k + 1 < len(kinds) else 17
        size = 8 if kind == 44 else 8 * (length + 1)
        ext += bytes([nxt, length]) + bytes(size - 2)
    udp = struct.pack(">HHHH", 49152, 4791, 8 + 12 + 4, 0) + bth(psn=9) + bytes(4)
    first = kinds[0] if kinds else 17
    ip6 = struct.pack(">IHBB", 6 << 28, len(ext) + len(udp), first, 64) + GID + GID
    frame = bytes.fromhex("020000000002020000000001") + b"\x86\xdd" + ip6 + ext + udp
    return frame[:cut]


@FUZZ
@given(
    lengths=st.lists(st.integers(0, 255), max_size=40),
    kinds=st.lists(st.sampled_from([0, 43, 44, 60]), max_size=40),
    cut=st.integers(0, 12000),
)
def test_ipv6_extension_header_chains(
    tmp_path: Path, lengths: list[int], kinds: list[int], cut: int
) -> None:
    k = min(len(lengths), len(kinds))
    frames = (roce_v2(bth(psn=1)), _ipv6_chain(lengths[:k], kinds[:k], cut), roce_v2(bth(psn=2)))
    path = tmp_path / "x.pcap"
    path.write_bytes(capture_bytes(tmp_path, "pcap", "<", frames))
    got = decode_all(path)
    assert got is not None and got[0] == got[1] and len(got[0]) == 3
    df = read_capture(path).packets
    assert df["psn"].tolist()[::2] == [1, 2]


@FUZZ
@given(depth=st.integers(1, 6), cut=st.integers(0, 600))
def test_vxlan_in_vxlan(tmp_path: Path, depth: int, cut: int) -> None:
    """Only the outermost tunnel is followed; a frame inside a second one is not RoCE."""
    frames = (vxlan(roce_v2(bth(psn=3)), depth)[:cut], roce_v2(bth(psn=4)))
    path = tmp_path / "x.pcap"
    path.write_bytes(capture_bytes(tmp_path, "pcap", "<", frames))
    got = decode_all(path)
    assert got is not None and got[0] == got[1]
    df = read_capture(path).packets
    assert df["psn"].tolist()[1] == 4
    if depth > 1:
        assert pd.isna(df["psn"].tolist()[0])


# (frame index in base_frames, byte offset of a 16-bit length field in that frame)
LENGTH_FIELDS = [
    (0, 14 + 2),  # IPv4 total length
    (0, 14 + 20 + 4),  # UDP length
    (1, 22 + 2),  # IPv4 total length behind two VLAN tags
    (2, 14 + 4),  # IPv6 payload length
    (2, 14 + 40 + 4),  # UDP length after IPv6
    (3, 14 + 20 + 4),  # the VXLAN UDP length
    (3, 50 + 14 + 2),  # the inner IPv4 total length
    (5, 14 + 4),  # RoCEv1 GRH payload length
    (0, 14 + 0),  # IPv4 version / IHL byte pair
]


@FUZZ
@given(field=st.sampled_from(LENGTH_FIELDS), value=st.integers(0, 0xFFFF))
def test_lengths_pointing_beyond_the_frame(
    tmp_path: Path, field: tuple[int, int], value: int
) -> None:
    """A lying length changes its own frame's columns only; the anomaly, if any, is named."""
    index, at = field
    frames = list(base_frames())
    frames[index] = frames[index][:at] + value.to_bytes(2, "big") + frames[index][at + 2 :]
    path = tmp_path / "x.pcap"
    path.write_bytes(capture_bytes(tmp_path, "pcap", "<", tuple(frames)))
    clean_path = tmp_path / "clean.pcap"
    clean_path.write_bytes(capture_bytes(tmp_path, "pcap", "<", base_frames()))
    got, clean = decode_all(path), decode_all(clean_path)
    assert got is not None and clean is not None and got[0] == got[1]
    assert [r for i, r in enumerate(got[0]) if i != index] == [
        r for i, r in enumerate(clean[0]) if i != index
    ]
    anomaly = read_capture(path).packets["anomaly"].tolist()[index]
    assert pd.isna(anomaly) or anomaly in ANOMALIES


def test_huge_caplen_is_corrupt_not_a_crash(tmp_path: Path) -> None:
    """A caplen no snap length allows is a corrupt record (issue 18: not an incomplete tail);
    a plausible one running past the end of the file, with nothing after it, is the tail."""
    blob = capture_bytes(tmp_path, "pcap", "<", base_frames()[:2])
    second = record_ends(blob, "pcap", "<")[0]
    for caplen in (0xFFFFFFFF, 1 << 28, (1 << 28) + 1, len(blob)):
        path = tmp_path / "x.pcap"
        path.write_bytes(blob[: second + 8] + struct.pack("<I", caplen) + blob[second + 12 :])
        cap = read_capture(path)
        assert cap.info.packets == 1
        assert cap.info.incomplete_tail == (caplen == len(blob))
        assert cap.info.corrupt_records == (caplen != len(blob))


@FUZZ
@given(
    tsresol=st.integers(0, 255),
    tsoffset=st.integers(0, (1 << 64) - 1),
    units=st.integers(0, (1 << 64) - 1),
    order=st.sampled_from(["<", ">"]),
)
def test_any_timestamp_resolution_and_offset(
    tmp_path: Path, tsresol: int, tsoffset: int, units: int, order: str
) -> None:
    """if_tsresol / if_tsoffset / EPB timestamps of any value give some ts_ns, never a crash
    (the arithmetic wraps, as in 64-bit tools)."""
    shb = _block(0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1), order)
    options = struct.pack(order + "HH", 9, 1) + bytes([tsresol, 0, 0, 0])
    options += struct.pack(order + "HHQ", 14, 8, tsoffset) + bytes(4)
    idb = _block(1, struct.pack(order + "HHI", 1, 0, 65535) + options, order)
    frame = base_frames()[0]
    head = struct.pack(order + "IIIII", 0, units >> 32, units & 0xFFFFFFFF, len(frame), len(frame))
    path = tmp_path / "x.pcapng"
    path.write_bytes(shb + idb + _block(6, head + frame, order))
    df = read_capture(path).packets
    assert df["psn"].tolist() == [1] and df["ts_ns"].dtype == "int64"
