"""Factories for common RoCE packets built with the Scapy layers, ICRC included.

The extended headers come from the opcode table, so `roce_packet(0x10)` (RC READ RESPONSE
ONLY) has its AETH without the caller having to remember it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Packet, Padding, Raw

from rocetrace.dissectors.cnp import CNP_OPCODE
from rocetrace.dissectors.mad import CM_MESSAGES, GSI_Q_KEY, GSI_QP, MAD_SIZE, CmAttr
from rocetrace.dissectors.opcodes import lookup
from rocetrace.dissectors.pfc_header import PFC_DST_MAC, PFC_ETHERTYPE
from rocetrace.dissectors.scapy_layers import BTH, GRH, LAYERS, MAD, PFC, ROCE_V2_UDP_PORT

ETHERNET_MIN_FRAME = 60  # without FCS
CNP_DSCP = 48
_MAC_A, _MAC_B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"


def roce_packet(
    opcode: int,
    *,
    payload: bytes = b"",
    headers: Mapping[str, Mapping[str, int]] | None = None,
    src_ip: str = "192.0.2.1",
    dst_ip: str = "192.0.2.2",
    sport: int = 49152,
    tos: int = 0,
    vlan: int | None = None,
    roce_version: int = 2,
    **bth_fields: int,
) -> Packet:
    """Ether/[802.1Q]/IP or IPv6/UDP/BTH/extended headers/payload/pad; ICRC computed at build.

    `headers` maps a header name of the opcode table ("RETH", "AETH", ...) to its field
    values; `bth_fields` are BTH fields by spec name (dest_qp, psn, ack_req, ...). An IPv6
    `src_ip`/`dst_ip` selects IPv6; `roce_version=1` gives Ether/GRH/BTH (GIDs from the IPs).
    """
    pad = -len(payload) % 4
    bth_fields.setdefault("pad_count", pad)
    transport: Packet = BTH(opcode=opcode, **bth_fields)
    for layer in extended_headers(opcode, headers or {}):
        transport = transport / layer
    transport = transport / Raw(payload + b"\x00" * pad)
    ether = Ether(src=_MAC_A, dst=_MAC_B)
    if vlan is not None:
        ether = ether / Dot1Q(vlan=vlan & 0xFFF, prio=vlan >> 12)
    if roce_version == 1:
        return ether / _grh(src_ip, dst_ip, tos) / transport
    ip: Packet = (
        IPv6(src=src_ip, dst=dst_ip, tc=tos)
        if ":" in src_ip
        else IP(src=src_ip, dst=dst_ip, tos=tos)
    )
    return ether / ip / UDP(sport=sport, dport=ROCE_V2_UDP_PORT, chksum=0) / transport


def extended_headers(opcode: int, values: Mapping[str, Mapping[str, int]]) -> list[Packet]:
    """The opcode's extended header layers in wire order (none for an unknown opcode)."""
    entry = lookup(opcode)
    carried = entry.headers if entry else ()
    unknown = set(values) - {h.name for h in carried}
    if unknown:
        raise KeyError(f"opcode {opcode:#04x} carries no {sorted(unknown)}")
    return [LAYERS[h](**values.get(h.name, {})) for h in carried]


def _grh(src: str, dst: str, tclass: int) -> Packet:
    """A GRH whose GIDs are the IPv6 (or IPv4-mapped) forms of the given addresses."""
    import ipaddress

    def gid(addr: str) -> int:
        ip = ipaddress.ip_address(addr)
        return int(ip if ip.version == 6 else ipaddress.IPv6Address(f"::ffff:{addr}"))

    return GRH(tclass=tclass, sgid=gid(src), dgid=gid(dst))


def cnp(dest_qp: int, *, becn: int = 1, tos: int = CNP_DSCP << 2, **kw: Any) -> Packet:
    """A Congestion Notification Packet to `dest_qp` (the QP whose traffic was marked).

    BECN set and DSCP 48 by default, as NICs send them (and as scapy.contrib.roce's cnp).
    """
    return roce_packet(CNP_OPCODE, dest_qp=dest_qp, becn=becn, tos=tos, **kw)


UD_SEND_ONLY = 0x64


def cm_mad(
    kind: str | int,
    *,
    transaction_id: int = 1,
    psn: int = 0,
    private_data: bytes = b"",
    src_ip: str = "192.0.2.1",
    dst_ip: str = "192.0.2.2",
    **message_fields: int,
) -> Packet:
    """A CM MAD as RDMA CM sends it: UD SEND ONLY to QP1 from QP1, Q_Key 0x80010000.

    `kind` is a CM attribute name ("REQ", "REP", "RTU", "DREQ", "DREP", "REJ", "MRA") or
    ID; `message_fields` are that message's fields by spec name (local_comm_id, local_qpn,
    starting_psn, ...). Returned dissected, so `pkt[CM_REQ].local_qpn` works.
    """
    attr = CmAttr[kind] if isinstance(kind, str) else CmAttr(kind)
    if attr not in CM_MESSAGES:
        raise ValueError(f"no table for CM attribute {attr.name}")
    message = LAYERS[CM_MESSAGES[attr]](**message_fields)
    body = MAD(transaction_id=transaction_id, attribute_id=attr) / message / Raw(private_data)
    mad_bytes = bytes(body).ljust(MAD_SIZE, b"\x00")
    if len(mad_bytes) > MAD_SIZE:
        raise ValueError(f"private data makes the MAD {len(mad_bytes)} bytes, not {MAD_SIZE}")
    deth = {"q_key": GSI_Q_KEY, "src_qp": GSI_QP}
    pkt = roce_packet(
        UD_SEND_ONLY, payload=mad_bytes, headers={"DETH": deth}, dest_qp=GSI_QP, psn=psn,
        src_ip=src_ip, dst_ip=dst_ip,
    )  # fmt: skip
    return Ether(bytes(pkt))


def pfc_frame(quanta: Mapping[int, int], src_mac: str = _MAC_A) -> Packet:
    """A PFC pause frame: {priority: quanta}; the class-enable bits follow the keys."""
    enable = sum(1 << p for p in quanta)
    fields = {f"quanta_{p}": q for p, q in quanta.items()}
    frame = Ether(src=src_mac, dst=":".join(f"{b:02x}" for b in PFC_DST_MAC), type=PFC_ETHERTYPE)
    frame = frame / PFC(class_enable=enable, **fields)
    return frame / Padding(b"\x00" * (ETHERNET_MIN_FRAME - len(frame)))


def finalize_icrc(pkt: Packet) -> Packet:
    """The packet re-dissected with its ICRC recomputed, e.g. after editing a field."""
    fresh = pkt.copy()
    fresh[BTH].icrc = None
    return Ether(bytes(fresh))
