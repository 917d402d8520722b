"""Link, network and overlay headers around the BTH, and where each one sits in a frame.

The tables use the same declarative `Header` as the RoCE dissectors, so the template path and
the reference path encode every field from one description.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.grh import GRH
from rocetrace.dissectors.header import Header
from rocetrace.dissectors.opcodes import OPCODES

ETHERNET = Header("Ethernet", (("dst", 48), ("src", 48), ("ethertype", 16)))
DOT1Q = Header("Dot1Q", (("pcp", 3), ("dei", 1), ("vid", 12), ("ethertype", 16)))
IPV4 = Header(
    "IPv4",
    (
        ("version", 4),
        ("ihl", 4),
        ("dscp", 6),
        ("ecn", 2),
        ("total_length", 16),
        ("identification", 16),
        ("flags", 3),
        ("frag_offset", 13),
        ("ttl", 8),
        ("protocol", 8),
        ("checksum", 16),
        ("src", 32),
        ("dst", 32),
    ),
)
IPV6 = Header(
    "IPv6",
    (
        ("version", 4),
        ("dscp", 6),
        ("ecn", 2),
        ("flow_label", 20),
        ("payload_length", 16),
        ("next_header", 8),
        ("hop_limit", 8),
        ("src", 128),
        ("dst", 128),
    ),
)
UDP = Header("UDP", (("sport", 16), ("dport", 16), ("length", 16), ("checksum", 16)))
VXLAN = Header("VXLAN", (("flags", 8), ("resv24", 24), ("vni", 24), ("resv8", 8)))

ETH_IPV4, ETH_IPV6, ETH_VLAN, ETH_ROCE_V1 = 0x0800, 0x86DD, 0x8100, 0x8915
ROCE_V2_PORT, VXLAN_PORT = 4791, 4789
MIN_FRAME = 60  # Ethernet minimum without the FCS
ICRC_LEN = 4
TTL = 64


@dataclass(frozen=True)
class Encap:
    """How every RoCE frame of a scenario is wrapped."""

    ip_version: int = 4
    vlan_id: int | None = None
    roce_v1: bool = False
    vxlan_vni: int | None = None

    @property
    def l2_len(self) -> int:
        return 14 + (4 if self.vlan_id is not None else 0)

    @property
    def ip_len(self) -> int:
        return 40 if (self.ip_version == 6 or self.roce_v1) else 20

    @property
    def outer_len(self) -> int:
        """Bytes before the inner Ethernet header of a VXLAN frame (0 without overlay)."""
        return self.l2_len + 20 + 8 + 8 if self.vxlan_vni is not None else 0


@dataclass(frozen=True)
class Layout:
    """Byte offsets of one frame shape (an opcode and payload length under an Encap)."""

    ip_off: int  # start of the ICRC-covered part: inner IP header or GRH
    udp_off: int  # -1 for RoCEv1
    bth_off: int
    ext_offs: tuple[int, ...]
    payload_off: int
    pad: int
    icrc_off: int
    frame_len: int  # including Ethernet trailer padding


def roce_layout(encap: Encap, opcode: int, payload_len: int) -> Layout:
    """Offsets for a RoCE frame; the pad brings the payload to a multiple of 4."""
    inner_l2 = 14 if encap.vxlan_vni is not None else encap.l2_len
    ip_off = encap.outer_len + inner_l2
    udp_off = -1 if encap.roce_v1 else ip_off + encap.ip_len
    bth_off = ip_off + encap.ip_len + (0 if encap.roce_v1 else 8)
    offs, off = [], bth_off + BTH.size
    for h in OPCODES[opcode].headers:
        offs.append(off)
        off += h.size
    pad = (-payload_len) % 4
    icrc_off = off + payload_len + pad
    end = icrc_off + ICRC_LEN
    return Layout(ip_off, udp_off, bth_off, tuple(offs), off, pad, icrc_off, max(end, MIN_FRAME))


def icrc_mask(encap: Encap, layout: Layout) -> np.ndarray:
    """OR-mask over [ip_off, payload_off): the variant fields the ICRC sees as all ones."""
    n = layout.payload_off - layout.ip_off
    mask = np.zeros(n, dtype=np.uint8)
    if encap.ip_len == 40:  # IPv6 or GRH: traffic class, flow label, hop limit
        mask[0], mask[1:4], mask[7] = 0x0F, 0xFF, 0xFF
    else:  # IPv4: TOS, TTL, header checksum
        mask[1], mask[8], mask[10:12] = 0xFF, 0xFF, 0xFF
    if layout.udp_off >= 0:
        mask[layout.udp_off - layout.ip_off + 6 : layout.udp_off - layout.ip_off + 8] = 0xFF
    mask[layout.bth_off - layout.ip_off + 4] = 0xFF
    return mask


def grh_fields(encap: Encap, payload_length: int) -> dict[str, int]:
    """Constant GRH fields of a RoCEv1 frame (GIDs are patched per packet)."""
    return {"ip_ver": 6, "pay_len": payload_length, "next_hdr": 0x1B, "hop_lmt": TTL}


GRH_SIZE = GRH.size
