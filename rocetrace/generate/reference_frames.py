"""The slow reference frame builder: every header through `Header.encode`, one frame at a time.

It makes the byte templates of the fast path and is what tests compare the fast path with.
Payload bytes are a fixed pattern (or a given byte string, e.g. a MAD).
"""

from __future__ import annotations

from collections.abc import Mapping

from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.grh import GRH
from rocetrace.dissectors.icrc import compute_icrc, compute_icrc_v1, icrc_bytes
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.pfc_header import PFC, PFC_DST_MAC, PFC_ETHERTYPE, PFC_OPCODE
from rocetrace.generate.encap import (
    DOT1Q,
    ETH_IPV4,
    ETH_IPV6,
    ETH_ROCE_V1,
    ETH_VLAN,
    ETHERNET,
    IPV4,
    IPV6,
    MIN_FRAME,
    ROCE_V2_PORT,
    TTL,
    UDP,
    VXLAN,
    VXLAN_PORT,
    Encap,
    roce_layout,
)
from rocetrace.generate.hosts import Hosts

# Which row column feeds which extended-header field (header name -> field -> column).
EXT_COLUMNS: dict[str, dict[str, str]] = {
    "RETH": {"va": "va", "r_key": "rkey", "dma_length": "dma_len"},
    "AETH": {"syndrome": "syndrome", "msn": "msn"},
    "DETH": {"q_key": "qkey", "src_qp": "src_qp"},
    "ImmDt": {"immdt": "imm"},
    "IETH": {"r_key": "rkey"},
    "AtomicETH": {"va": "va", "r_key": "rkey", "swap_add": "swap_add", "compare": "compare"},
    "AtomicAckETH": {"orig_rem_dt": "atomic_orig"},
}
BTH_COLUMNS = {"se": "se", "becn": "becn", "dest_qp": "dest_qp", "ack_req": "ack_req", "psn": "psn"}
PKEY = 0xFFFF


def default_payload(n: int) -> bytes:
    """The payload pattern of generated packets: byte i is i mod 256."""
    return bytes(i & 0xFF for i in range(n))


def _mac(hosts: Hosts, i: int, outer: bool = False) -> int:
    return int.from_bytes(bytes((hosts.outer_mac if outer else hosts.mac)[i]), "big")


def ipv4_checksum(header: bytes) -> int:
    total = sum(int.from_bytes(header[i : i + 2], "big") for i in range(0, len(header), 2))
    while total > 0xFFFF:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def _ipv4(row: Mapping[str, int], src: bytes, dst: bytes, length: int, proto: int = 17) -> bytes:
    fields = {
        "version": 4, "ihl": 5, "dscp": row["dscp"], "ecn": row["ecn"], "total_length": length,
        "identification": row["ip_id"], "flags": 2, "ttl": TTL, "protocol": proto,
        "src": int.from_bytes(src, "big"), "dst": int.from_bytes(dst, "big"),
    }  # fmt: skip
    header = IPV4.encode(fields)
    return IPV4.encode(fields, checksum=ipv4_checksum(header))


def _ip(encap: Encap, row: Mapping[str, int], hosts: Hosts, payload_len: int) -> bytes:
    src, dst = bytes(hosts.ip[row["src"]]), bytes(hosts.ip[row["dst"]])
    if encap.roce_v1:
        return GRH.encode(
            ip_ver=6, tclass=(row["dscp"] << 2) | row["ecn"], pay_len=payload_len,
            next_hdr=0x1B, hop_lmt=TTL, sgid=int.from_bytes(src, "big"),
            dgid=int.from_bytes(dst, "big"),
        )  # fmt: skip
    if encap.ip_version == 6:
        return IPV6.encode(
            version=6, dscp=row["dscp"], ecn=row["ecn"], payload_length=payload_len,
            next_header=17, hop_limit=TTL, src=int.from_bytes(src, "big"),
            dst=int.from_bytes(dst, "big"),
        )  # fmt: skip
    return _ipv4(row, src, dst, 20 + payload_len)


def _transport(row: Mapping[str, int], pad: int, payload: bytes) -> bytes:
    """BTH, extended headers and payload + pad (everything between UDP and ICRC)."""
    op = OPCODES[row["opcode"]]
    bth = {f: row[c] for f, c in BTH_COLUMNS.items()}
    parts = [BTH.encode(bth, opcode=row["opcode"], pad_count=pad, pkey=PKEY)]
    for h in op.headers:
        parts.append(h.encode({f: row[c] for f, c in EXT_COLUMNS.get(h.name, {}).items()}))
    return b"".join(parts) + payload + b"\x00" * pad


def _l2(row: Mapping[str, int], encap: Encap, hosts: Hosts, ethertype: int, outer: bool) -> bytes:
    eth = {"dst": _mac(hosts, row["dst"], outer), "src": _mac(hosts, row["src"], outer)}
    if encap.vlan_id is None or (encap.vxlan_vni is not None and not outer):
        return ETHERNET.encode(eth, ethertype=ethertype)
    tag = DOT1Q.encode(pcp=row["pcp"], vid=encap.vlan_id, ethertype=ethertype)
    return ETHERNET.encode(eth, ethertype=ETH_VLAN) + tag


def roce_frame(row: Mapping[str, int], encap: Encap, hosts: Hosts, payload: bytes) -> bytes:
    """One RoCE frame, ICRC included, padded to the Ethernet minimum."""
    layout = roce_layout(encap, row["opcode"], len(payload))
    transport = _transport(row, layout.pad, payload)
    if encap.roce_v1:
        l3 = _ip(encap, row, hosts, len(transport) + 4) + transport
        icrc = compute_icrc_v1(l3 + b"\x00" * 4)
        ethertype = ETH_ROCE_V1
    else:
        udp = UDP.encode(sport=row["udp_sport"], dport=ROCE_V2_PORT, length=8 + len(transport) + 4)
        l3 = _ip(encap, row, hosts, 8 + len(transport) + 4) + udp + transport
        icrc = compute_icrc(l3 + b"\x00" * 4)
        ethertype = ETH_IPV6 if encap.ip_version == 6 else ETH_IPV4
    inner = _l2(row, encap, hosts, ethertype, outer=False) + l3 + icrc_bytes(icrc)
    if encap.vxlan_vni is not None:
        inner = _vxlan_outer(row, encap, hosts, len(inner)) + inner
    return inner.ljust(MIN_FRAME, b"\x00")


def vxlan_sport(inner_sport: int) -> int:
    """Outer UDP source port of a VXLAN frame: entropy from the inner flow (RFC 7348).

    frames.py computes the same hash on arrays."""
    return 49152 | ((inner_sport * 2654435761) >> 16) & 0x3FFF


def _vxlan_outer(row: Mapping[str, int], encap: Encap, hosts: Hosts, inner_len: int) -> bytes:
    udp_len = 8 + 8 + inner_len
    src, dst = bytes(hosts.outer_ip[row["src"]]), bytes(hosts.outer_ip[row["dst"]])
    ip = _ipv4(row, src, dst, 20 + udp_len)
    sport = vxlan_sport(row["udp_sport"])
    udp = UDP.encode(sport=sport, dport=VXLAN_PORT, length=udp_len)
    vx = VXLAN.encode(flags=0x08, vni=encap.vxlan_vni or 0)
    return _l2(row, encap, hosts, ETH_IPV4, outer=True) + ip + udp + vx


def pfc_frame(row: Mapping[str, int], hosts: Hosts) -> bytes:
    """An 802.1Qbb PFC frame from host `src` (untagged, padded to 60 bytes)."""
    eth = ETHERNET.encode(
        dst=int.from_bytes(PFC_DST_MAC, "big"), src=_mac(hosts, row["src"]), ethertype=PFC_ETHERTYPE
    )
    quanta = {f"quanta_{p}": row[f"pfc_q{p}"] for p in range(8)}
    body = PFC.encode(quanta, opcode=PFC_OPCODE, class_enable=row["pfc_enable"])
    return (eth + body).ljust(MIN_FRAME, b"\x00")
