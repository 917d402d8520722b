"""Where each packet-table column comes from: a header slot and a field of a declarative table.

The RoCE headers are the dissectors' tables; the link, IP and UDP headers the walker steps
over are declared here the same way, so every integer column is one (slot, Field) gather.
"""

from __future__ import annotations

import numpy as np

from rocetrace.dissectors.aeth import AETH
from rocetrace.dissectors.atomic import ATOMIC_ACK_ETH, ATOMIC_ETH
from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.cnp import CNP_PAYLOAD
from rocetrace.dissectors.deth import DETH, RDETH
from rocetrace.dissectors.header import Header
from rocetrace.dissectors.immdt import IETH, IMMDT
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.pfc_header import PFC
from rocetrace.dissectors.reth import FETH, RETH
from rocetrace.dissectors.xrceth import XRCETH

VLAN_TAG = Header("802.1Q", (("pcp", 3), ("dei", 1), ("vid", 12), ("ethertype", 16)))
IPV4 = Header(
    "IPv4",
    (
        ("version", 4), ("ihl", 4), ("dscp", 6), ("ecn", 2), ("total_length", 16),
        ("identification", 16), ("flags", 3), ("fragment_offset", 13), ("ttl", 8),
        ("protocol", 8), ("checksum", 16), ("src", 32), ("dst", 32),
    ),
)  # fmt: skip
IPV6 = Header(
    "IPv6",
    (
        ("version", 4), ("dscp", 6), ("ecn", 2), ("flow_label", 20), ("payload_length", 16),
        ("next_header", 8), ("hop_limit", 8), ("src", 128), ("dst", 128),
    ),
)  # fmt: skip
UDP = Header("UDP", (("sport", 16), ("dport", 16), ("length", 16), ("checksum", 16)))

# Extended headers the walker locates after the BTH, one offset slot each (wire order is
# the opcode table's business, not this list's).
EXT_HEADERS: tuple[Header, ...] = (
    RETH, AETH, DETH, RDETH, IMMDT, IETH, ATOMIC_ETH, ATOMIC_ACK_ETH, XRCETH, FETH, CNP_PAYLOAD,
)  # fmt: skip

# Offset slots of the walk matrix: fixed headers first, then one per extended header.
SMAC, DMAC, VLAN, IP4, IP6, UDP_SLOT, BTH_SLOT, PFC_SLOT = range(8)
EXT0 = 8
N_SLOTS = EXT0 + len(EXT_HEADERS)
SLOT_OF: dict[str, int] = {
    "vlan": VLAN, "ip4": IP4, "ip6": IP6, "udp": UDP_SLOT, "bth": BTH_SLOT, "pfc": PFC_SLOT,
    **{h.name: EXT0 + i for i, h in enumerate(EXT_HEADERS)},
}  # fmt: skip
_HEADER_OF_SLOT = {"vlan": VLAN_TAG, "ip4": IPV4, "ip6": IPV6, "udp": UDP, "bth": BTH, "pfc": PFC}

# column -> [(slot name, field name)]; several sources fill one column where each is present.
COLUMN_SOURCES: dict[str, list[tuple[str, str]]] = {
    "vlan_id": [("vlan", "vid")],
    "vlan_pcp": [("vlan", "pcp")],
    "ip_version": [("ip4", "version"), ("ip6", "version")],
    "dscp": [("ip4", "dscp"), ("ip6", "dscp")],
    "ecn": [("ip4", "ecn"), ("ip6", "ecn")],
    "ttl": [("ip4", "ttl"), ("ip6", "hop_limit")],
    "udp_sport": [("udp", "sport")],
    "udp_dport": [("udp", "dport")],
    **{n: [("bth", n)] for n in ("opcode", "se", "mig_req", "pad_count", "tver", "pkey")},
    **{n: [("bth", n)] for n in ("fecn", "becn", "dest_qp", "ack_req", "psn")},
    "reth_va": [("RETH", "va")],
    "reth_rkey": [("RETH", "r_key")],
    "reth_dma_length": [("RETH", "dma_length")],
    "aeth_syndrome": [("AETH", "syndrome")],
    "aeth_msn": [("AETH", "msn")],
    "deth_qkey": [("DETH", "q_key")],
    "deth_src_qp": [("DETH", "src_qp")],
    "immdt": [("ImmDt", "immdt")],
    "ieth_rkey": [("IETH", "r_key")],
    "atomic_va": [("AtomicETH", "va")],
    "atomic_rkey": [("AtomicETH", "r_key")],
    "atomic_swap_add": [("AtomicETH", "swap_add")],
    "atomic_compare": [("AtomicETH", "compare")],
    "atomic_ack_orig": [("AtomicAckETH", "orig_rem_dt")],
    "xrc_srqn": [("XRCETH", "xrc_srqn")],
    "pfc_opcode": [("pfc", "opcode")],
    "pfc_class_enable": [("pfc", "class_enable")],
    **{f"pfc_quanta_{p}": [("pfc", f"quanta_{p}")] for p in range(8)},
}


def header_of(slot: str) -> Header:
    """The declarative table of a slot name."""
    if slot in _HEADER_OF_SLOT:
        return _HEADER_OF_SLOT[slot]
    return EXT_HEADERS[SLOT_OF[slot] - EXT0]


def opcode_layout() -> tuple[np.ndarray, np.ndarray]:
    """From THE opcode table: per opcode byte, each extended header's offset after the BTH
    (-1 absent) and their total length (-1 for an unknown opcode)."""
    offsets = np.full((256, len(EXT_HEADERS)), -1, dtype=np.int32)
    total = np.full(256, -1, dtype=np.int32)
    for code, op in OPCODES.items():
        at = 0
        for h in op.headers:
            offsets[code, EXT_HEADERS.index(h)] = at
            at += h.size
        total[code] = at
    return offsets, total
