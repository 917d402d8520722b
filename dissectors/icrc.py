"""Invariant CRC (IBTA Annex A17.3.3): CRC32 over the packet with the variant fields masked.

Masked to all ones: 8 leading bytes (the LRH stand-in); IPv4 TOS, TTL and checksum; IPv6
traffic class, flow label and hop limit; the UDP checksum; BTH byte 4 (FECN/BECN/resv).
The result is stored little-endian in the last 4 bytes of the frame.
"""

from __future__ import annotations

import zlib

import numpy as np

ICRC_LEN = 4
UDP_HEADER_LEN = 8
GRH_LEN = 40
_LEADING_ONES = b"\xff" * 8


def _mask_ipv4(ip: bytearray) -> None:
    ip[1] = 0xFF  # TOS
    ip[8] = 0xFF  # TTL
    ip[10:12] = b"\xff\xff"  # header checksum


def _mask_ipv6(ip: bytearray) -> None:
    ip[0] |= 0x0F  # traffic class (low nibble of byte 0) ...
    ip[1:4] = b"\xff\xff\xff"  # ... rest of traffic class and flow label
    ip[7] = 0xFF  # hop limit


def compute_icrc(ip_packet: bytes) -> int:
    """ICRC of a RoCEv2 packet given from its IP header through the ICRC (inclusive).

    The trailing 4 ICRC bytes are excluded from the CRC; the IP version is read from the
    first nibble.
    """
    data = bytearray(ip_packet[:-ICRC_LEN])
    version = data[0] >> 4
    if version == 4:
        ip_len = (data[0] & 0x0F) * 4
        _mask_ipv4(data)
    elif version == 6:
        ip_len = 40
        _mask_ipv6(data)
    else:
        raise ValueError(f"not an IP packet (version {version})")
    udp = ip_len
    data[udp + 6 : udp + 8] = b"\xff\xff"  # UDP checksum
    data[udp + UDP_HEADER_LEN + 4] = 0xFF  # BTH byte 4: FECN, BECN, reserved
    return zlib.crc32(_LEADING_ONES + bytes(data)) & 0xFFFFFFFF


def compute_icrc_v1(grh_packet: bytes) -> int:
    """ICRC of a RoCEv1 packet given from its GRH through the ICRC (inclusive).

    Same rule as RoCEv2 without the UDP header: the GRH is masked like an IPv6 header.
    """
    data = bytearray(grh_packet[:-ICRC_LEN])
    _mask_ipv6(data)
    data[GRH_LEN + 4] = 0xFF  # BTH byte 4
    return zlib.crc32(_LEADING_ONES + bytes(data)) & 0xFFFFFFFF


def stored_icrc(ip_packet: bytes) -> int:
    """The ICRC as carried on the wire (little-endian in the last 4 bytes)."""
    return int.from_bytes(ip_packet[-ICRC_LEN:], "little")


def icrc_bytes(value: int) -> bytes:
    return value.to_bytes(ICRC_LEN, "little")


def crc32_table() -> np.ndarray:
    """The reflected CRC32 (IEEE 802.3) lookup table, for table-driven fast kernels."""
    table = np.zeros(256, dtype=np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        table[i] = c
    return table
