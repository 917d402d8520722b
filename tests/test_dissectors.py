"""Header tables, AETH and PFC helpers, and the ICRC against real captures and scapy."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.utils import rdpcap

from rocetrace.dissectors import aeth, atomic, bth, cnp, deth, grh, immdt, pfc_header, reth, xrceth
from rocetrace.dissectors.header import Header, NeedData
from rocetrace.dissectors.icrc import compute_icrc, compute_icrc_v1, icrc_bytes, stored_icrc

# Sizes in bytes from the spec (IBTA 9.2-9.5, annex A17, 802.1Qbb), not from the tables.
SPEC_SIZES: dict[Header, int] = {
    bth.BTH: 12,
    reth.RETH: 16,
    reth.FETH: 4,
    aeth.AETH: 4,
    deth.DETH: 8,
    deth.RDETH: 4,
    immdt.IMMDT: 4,
    immdt.IETH: 4,
    xrceth.XRCETH: 4,
    atomic.ATOMIC_ETH: 28,
    atomic.ATOMIC_ACK_ETH: 8,
    cnp.CNP_PAYLOAD: 16,
    grh.GRH: 40,
    pfc_header.PFC: 20,
}
HEADERS = list(SPEC_SIZES)


@pytest.mark.parametrize("header", HEADERS, ids=lambda h: h.name)
def test_header_sizes_match_the_spec(header: Header) -> None:
    assert header.size == SPEC_SIZES[header]


@st.composite
def header_values(draw: st.DrawFn) -> tuple[Header, dict[str, int]]:
    header = draw(st.sampled_from(HEADERS))
    values = {f.name: draw(st.integers(0, f.mask)) for f in header.fields if not f.reserved}
    return header, values


@given(header_values())
def test_encode_decode_round_trip(case: tuple[Header, dict[str, int]]) -> None:
    header, values = case
    data = header.encode(values)
    assert len(data) == header.size
    assert header.decode(b"\xaa" + data, offset=1) == values


@given(st.sampled_from(HEADERS), st.data())
def test_fast_path_geometry_extracts_the_same_values(header: Header, data: st.DataObject) -> None:
    """byte_offset/byte_span/shift/mask (what vectorized gathers use) agree with decode."""
    raw = data.draw(st.binary(min_size=header.size, max_size=header.size))
    decoded = header.decode(raw)
    for f in header.fields:
        if f.reserved:
            continue
        word = int.from_bytes(raw[f.byte_offset : f.byte_offset + f.byte_span], "big")
        assert (word >> f.shift) & f.mask == decoded[f.name], f.name


def test_bth_bits_are_where_the_spec_puts_them() -> None:
    # OpCode 0x0C | SE 1 M 1 PadCnt 2 TVer 5 | P_Key | FECN 1 BECN 1 resv | QP | A 1 resv | PSN
    data = bytes.fromhex("0c e5 beef c0 123456 80 abcdef".replace(" ", ""))
    assert bth.BTH.decode(data) == {
        "opcode": 0x0C,
        "se": 1,
        "mig_req": 1,
        "pad_count": 2,
        "tver": 5,
        "pkey": 0xBEEF,
        "fecn": 1,
        "becn": 1,
        "dest_qp": 0x123456,
        "ack_req": 1,
        "psn": 0xABCDEF,
    }
    only_becn = bytearray(12)
    only_becn[4] = 0x40
    assert bth.BTH.decode(bytes(only_becn))["becn"] == 1
    assert bth.BTH.decode(bytes(only_becn))["fecn"] == 0


def test_extended_headers_by_hand() -> None:
    reth_bytes = struct.pack(">QII", 0x1122334455667788, 0xDEADBEEF, 4096)
    assert reth.RETH.decode(reth_bytes) == {
        "va": 0x1122334455667788,
        "r_key": 0xDEADBEEF,
        "dma_length": 4096,
    }
    assert aeth.AETH.decode(bytes.fromhex("60000102")) == {"syndrome": 0x60, "msn": 0x102}
    assert deth.DETH.decode(bytes.fromhex("1111111100000023")) == {
        "q_key": 0x11111111,
        "src_qp": 0x23,
    }
    assert xrceth.XRCETH.decode(bytes.fromhex("ff00beef")) == {"xrc_srqn": 0xBEEF}
    swap = struct.pack(">QIQQ", 0x1000, 7, 5, 9)
    assert atomic.ATOMIC_ETH.decode(swap) == {"va": 0x1000, "r_key": 7, "swap_add": 5, "compare": 9}
    # FETH: bits 31-6 reserved, 5-4 selectivity level, 3-0 placement type (rxe_hdr.h)
    assert reth.FETH.decode(bytes.fromhex("00000021")) == {
        "selectivity_level": 2,
        "placement_type": 1,
    }


def test_encode_rejects_bad_values_and_decode_short_data() -> None:
    with pytest.raises(ValueError):
        bth.BTH.encode(psn=1 << 24)
    with pytest.raises(KeyError):
        bth.BTH.encode(nope=1)
    with pytest.raises(NeedData):
        reth.RETH.decode(bytes(15))


def test_aeth_syndrome_helpers() -> None:
    assert aeth.ack_kind(0x1F) is aeth.AckKind.ACK  # ACK, 31 credits
    assert aeth.ack_kind(0x2E) is aeth.AckKind.RNR_NAK  # RNR NAK, timer 14
    assert aeth.ack_kind(0x60) is aeth.AckKind.NAK  # NAK PSN sequence error
    assert aeth.syndrome(aeth.AckKind.NAK, aeth.NakCode.REMOTE_ACCESS_ERROR) == 0x62
    assert aeth.syndrome(aeth.AckKind.RNR_NAK, 14) == 0x2E
    assert aeth.syndrome(aeth.AckKind.ACK, 0x1F) == 0x1F
    # IBTA RNR timer table: code 0 is 655.36 ms, 1 is 0.01 ms, 14 is 1.28 ms, 31 is 491.52 ms
    assert len(aeth.RNR_TIMER_US) == 32
    assert aeth.RNR_TIMER_US[0] == 655360.0
    assert aeth.RNR_TIMER_US[1] == 10.0
    assert aeth.RNR_TIMER_US[14] == 1280.0
    assert aeth.RNR_TIMER_US[31] == 491520.0


def test_pfc_pause_time() -> None:
    assert pfc_header.pause_seconds(0xFFFF, 100e9) == pytest.approx(335.5e-6, rel=1e-3)
    assert pfc_header.pause_seconds(0, 100e9) == 0.0
    assert pfc_header.pause_seconds(1, 10e9) == pytest.approx(51.2e-9)


def _roce_ip_packets(paths: list[Path]) -> list[bytes]:
    """IP header through ICRC of every RoCEv2 packet (Ethernet padding cut off)."""
    packets = []
    for path in paths:
        for pkt in rdpcap(str(path)):
            if UDP not in pkt or pkt[UDP].dport != 4791:
                continue
            if IP in pkt:
                packets.append(bytes(pkt[IP])[: pkt[IP].len])
            elif IPv6 in pkt:
                packets.append(bytes(pkt[IPv6])[: 40 + pkt[IPv6].plen])
    return packets


def test_icrc_matches_every_real_capture(real_captures: list[Path]) -> None:
    packets = _roce_ip_packets(real_captures)
    assert len(packets) > 200
    bad = [i for i, p in enumerate(packets) if compute_icrc(p) != stored_icrc(p)]
    assert not bad, f"{len(bad)} ICRC mismatches, first at RoCE packet {bad[0]}"


def test_icrc_detects_a_flipped_bit(real_captures: list[Path]) -> None:
    packet = bytearray(_roce_ip_packets(real_captures)[0])
    packet[-6] ^= 0x01  # a payload / header bit covered by the CRC
    assert compute_icrc(bytes(packet)) != stored_icrc(bytes(packet))


@pytest.mark.parametrize(
    "ip_layer",
    [
        IPv6(src="2001:db8::1", dst="2001:db8::2", tc=0x6A, fl=0x12345, hlim=7),
        IP(src="10.0.0.1", dst="10.0.0.2", tos=0x6A, ttl=3),
    ],
    ids=["ipv6", "ipv4"],
)
def test_icrc_agrees_with_scapy_contrib(ip_layer: IP | IPv6) -> None:
    """scapy.contrib.roce computes the ICRC with code independent of ours."""
    from scapy.contrib import roce as contrib

    pkt = ip_layer / UDP(sport=5000, dport=4791) / contrib.BTH(opcode=4, dqpn=0x42, psn=9)
    wire = bytes(pkt / b"payload!")
    assert compute_icrc(wire) == stored_icrc(wire)


def test_icrc_ignores_exactly_the_variant_fields() -> None:
    base = IPv6(src="2001:db8::1", dst="2001:db8::2") / UDP(sport=1, dport=4791)
    transport = bth.BTH.encode(opcode=4, dest_qp=5, psn=6) + b"data"
    wire = bytes(base / transport) + bytes(4)
    variant = bytearray(wire)
    variant[0:4] = b"\x6f\xff\xff\xff"  # traffic class, flow label
    variant[7] = 1  # hop limit
    variant[40 + 6 : 40 + 8] = b"\x12\x34"  # UDP checksum
    variant[48 + 4] = 0xC0  # FECN, BECN
    assert compute_icrc(bytes(variant)) == compute_icrc(wire)
    invariant = bytearray(wire)
    invariant[48 + 11] ^= 1  # PSN
    assert compute_icrc(bytes(invariant)) != compute_icrc(wire)


def test_icrc_v1_masks_the_grh_like_ipv6() -> None:
    grh_bytes = grh.GRH.encode(ip_ver=6, pay_len=20, next_hdr=0x1B, hop_lmt=64, sgid=1, dgid=2)
    wire = grh_bytes + bth.BTH.encode(opcode=4, dest_qp=5, psn=6) + b"data" + bytes(4)
    changed = bytearray(wire)
    changed[1] = 0xAB  # traffic class / flow label
    changed[7] = 1  # hop limit
    changed[40 + 4] = 0x80  # FECN
    assert compute_icrc_v1(bytes(changed)) == compute_icrc_v1(wire)
    changed[40 + 11] ^= 1
    assert compute_icrc_v1(bytes(changed)) != compute_icrc_v1(wire)
    assert icrc_bytes(0x11223344) == b"\x44\x33\x22\x11"
