"""The template path (patched byte arrays, vectorized ICRC) gives the same bytes as the
reference path (`Header.encode` per header) and as the dissectors' Scapy layers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.generate.encap import Encap
from rocetrace.generate.frames import build_frames
from rocetrace.generate.hosts import Hosts, make_hosts
from rocetrace.generate.reference_frames import EXT_COLUMNS, default_payload, pfc_frame, roce_frame
from rocetrace.generate.wire_table import PFC, PacketTable

# Every RC/UC/UD opcode the generator emits, plus CNP.
OPS = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C,
       0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x24, 0x2A, 0x64, 0x65, 0x81]  # fmt: skip
ENCAPS = [
    Encap(),
    Encap(vlan_id=100),
    Encap(ip_version=6),
    Encap(roce_v1=True),
    Encap(vxlan_vni=5001),
    Encap(vxlan_vni=7, vlan_id=3, ip_version=6),
]


def sample_rows(n: int = 60, seed: int = 0) -> list[dict[str, int]]:
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        op = OPS[i % len(OPS)]
        carries_payload = not any(h.name in ("AETH", "AtomicETH") for h in OPCODES[op].headers)
        rows.append({
            "src": i % 3, "dst": (i + 1) % 3, "opcode": op, "dest_qp": int(rng.integers(1 << 24)),
            "psn": int(rng.integers(1 << 24)), "ack_req": i % 2, "se": (i // 2) % 2,
            "becn": i % 5 == 0, "payload_len": int(rng.choice([0, 1, 2, 3, 256, 1021]))
            if carries_payload and op != 0x81 else 0,
            "va": int(rng.integers(1 << 62)), "rkey": int(rng.integers(1 << 32)), "dma_len": 4096,
            "syndrome": int(rng.integers(256)), "msn": int(rng.integers(1 << 24)),
            "imm": int(rng.integers(1 << 32)), "qkey": 0x11111111, "src_qp": 7,
            "swap_add": int(rng.integers(1 << 63)), "compare": int(rng.integers(1 << 63)),
            "atomic_orig": 5, "ecn": i % 4, "dscp": int(rng.integers(64)), "pcp": i % 8,
            "udp_sport": int(rng.integers(49152, 65536)), "ip_id": i,
        })  # fmt: skip
    return rows


def hosts_for(encap: Encap) -> Hosts:
    return make_hosts(3, 6 if (encap.ip_version == 6 or encap.roce_v1) else 4)


@pytest.mark.parametrize("encap", ENCAPS, ids=str)
def test_template_path_equals_reference_path(encap: Encap) -> None:
    rows, hosts = sample_rows(), hosts_for(encap)
    frames = build_frames(PacketTable.from_rows(rows), encap, hosts)
    for i, row in enumerate(rows):
        full = {k: int(v[0]) for k, v in PacketTable.from_rows([row]).cols.items()}
        assert frames.frame(i) == roce_frame(
            full, encap, hosts, default_payload(row["payload_len"])
        ), i


def _scapy(row: dict[str, Any], encap: Encap, hosts: Hosts) -> bytes:
    from scapy.layers.inet import IP
    from scapy.layers.l2 import Ether

    from rocetrace.dissectors.scapy_factory import roce_packet

    headers = {
        h.name: {f: row[c] for f, c in EXT_COLUMNS.get(h.name, {}).items()}
        for h in OPCODES[row["opcode"]].headers
        if h.name in EXT_COLUMNS
    }
    pkt = roce_packet(
        row["opcode"], payload=default_payload(row["payload_len"]), headers=headers,
        src_ip=hosts.ip_str(row["src"]), dst_ip=hosts.ip_str(row["dst"]), sport=row["udp_sport"],
        tos=row["dscp"] << 2 | row["ecn"],
        vlan=None if encap.vlan_id is None else row["pcp"] << 12 | encap.vlan_id,
        se=row["se"], becn=row["becn"], dest_qp=row["dest_qp"], ack_req=row["ack_req"],
        psn=row["psn"], pkey=0xFFFF,
    )  # fmt: skip
    pkt[Ether].src, pkt[Ether].dst = hosts.mac_str(row["src"]), hosts.mac_str(row["dst"])
    if IP in pkt:
        pkt[IP].id, pkt[IP].flags, pkt[IP].ttl = row["ip_id"], "DF", 64
    else:
        pkt["IPv6"].hlim = 64
    return bytes(pkt).ljust(60, b"\x00")


@pytest.mark.parametrize("encap", ENCAPS[:3], ids=str)
def test_template_path_equals_scapy_layers(encap: Encap) -> None:
    rows = [r for r in sample_rows(40, seed=1) if r["opcode"] != 0x81]
    hosts = hosts_for(encap)
    frames = build_frames(PacketTable.from_rows(rows), encap, hosts)
    for i, row in enumerate(rows):
        assert frames.frame(i) == _scapy(row, encap, hosts), (i, hex(row["opcode"]))


def test_pfc_frame_equals_scapy_factory() -> None:
    from rocetrace.dissectors.scapy_factory import pfc_frame as scapy_pfc

    hosts = make_hosts(2)
    row = {"kind": PFC, "src": 1, "pfc_enable": 0b1000, **{f"pfc_q{p}": 0 for p in range(8)}}
    row["pfc_q3"] = 0xFFFF
    ours = build_frames(PacketTable.from_rows([row]), Encap(), hosts).frame(0)
    assert ours == pfc_frame(
        {k: int(v[0]) for k, v in PacketTable.from_rows([row]).cols.items()}, hosts
    )
    assert ours == bytes(scapy_pfc({3: 0xFFFF}, src_mac=hosts.mac_str(1)))


def test_snaplen_builds_only_captured_bytes() -> None:
    rows, hosts = sample_rows(20), make_hosts(3)
    full = build_frames(PacketTable.from_rows(rows), Encap(), hosts)
    cut = build_frames(PacketTable.from_rows(rows), Encap(), hosts, snaplen=64)
    assert (cut.wire == full.lengths).all() and (cut.lengths == np.minimum(full.lengths, 64)).all()
    assert all(cut.frame(i) == full.frame(i)[:64] for i in range(len(rows)))
