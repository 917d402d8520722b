"""Link types, VLAN tags, IP variants and encapsulations decode to the right values."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pandas as pd
from scapy.layers.inet import IP, UDP, IPOption_NOP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from test_capture_formats import bth, frames_ts, roce_v2, seal

from rocetrace.capture import read_capture, write_capture
from rocetrace.dissectors.aeth import AETH
from rocetrace.dissectors.deth import DETH
from rocetrace.dissectors.icrc import icrc_bytes
from rocetrace.dissectors.immdt import IMMDT
from rocetrace.dissectors.pfc_header import PFC


def decode(tmp_path: Path, frames: list[bytes], linktype: int = 1) -> pd.DataFrame:
    path = write_capture(tmp_path / "x.pcap", frames_ts(len(frames)), frames, linktype=linktype)
    return read_capture(path).packets


def test_ipv4_fields_vlan_and_qinq(tmp_path: Path) -> None:
    df = decode(tmp_path, [roce_v2(), roce_v2(vlans=(100,)), roce_v2(vlans=(200, 300))])
    assert df["vlan_id"].tolist()[1:] == [100, 200]
    assert df["vlan_id"].isna().tolist() == [True, False, False]
    assert df["vlan_pcp"].tolist()[1:] == [3, 3]
    row = df.iloc[2]
    assert (row.src_ip, row.dst_ip, row.src_mac) == ("10.0.0.1", "10.0.0.2", "02:00:00:00:00:01")
    assert (row.dscp, row.ecn, row.ttl, row.ip_version) == (26, 2, 9, 4)
    assert (row.udp_sport, row.udp_dport, row.encap) == (49152, 4791, "roce_v2")
    assert (row.opcode, row.opcode_name, row.dest_qp, row.psn, row.pkey) == (
        4,
        "RC_SEND_ONLY",
        0x12,
        5,
        0xFFFF,
    )
    assert row.payload_len == 8 and row.icrc_status == "ok"


def test_bth_flags_and_extended_headers(tmp_path: Path) -> None:
    flags = bth(0x11, se=1, mig_req=1, pad_count=2, tver=0, fecn=1, becn=0, ack_req=1)
    ack = flags + AETH.encode(syndrome=0x60, msn=77)
    ud = bth(0x65) + DETH.encode(q_key=0x11111111, src_qp=0x2A) + IMMDT.encode(immdt=0xCAFE)
    df = decode(tmp_path, [roce_v2(ack, payload=b"\0\0"), roce_v2(ud)])
    a, u = df.iloc[0], df.iloc[1]
    assert (a.se, a.mig_req, a.pad_count, a.fecn, a.becn, a.ack_req) == (
        True,
        True,
        2,
        True,
        False,
        True,
    )
    assert (a.aeth_syndrome, a.aeth_msn, a.payload_len) == (0x60, 77, 0)
    assert pd.isna(a.reth_va) and pd.isna(a.deth_qkey)
    assert (u.opcode_name, u.deth_qkey, u.deth_src_qp, u.immdt) == (
        "UD_SEND_ONLY_WITH_IMMEDIATE",
        0x11111111,
        0x2A,
        0xCAFE,
    )


def test_ipv4_options_and_ipv6(tmp_path: Path) -> None:
    opts = seal(
        Ether()
        / IP(src="1.2.3.4", dst="5.6.7.8", options=[IPOption_NOP()] * 4)
        / UDP(dport=4791)
        / Raw(bth(psn=9) + bytes(4))
    )
    df = decode(tmp_path, [opts, roce_v2(bth(psn=10), ipv6=True, tos=0x03)])
    assert df["psn"].tolist() == [9, 10]
    assert df["src_ip"].astype(str).tolist() == ["1.2.3.4", "fd00::1"]
    assert df["ip_version"].tolist() == [4, 6]
    assert df["ecn"].tolist()[1] == 3 and df["ttl"].tolist()[1] == 7
    assert (df["icrc_status"] == "ok").all()


def test_sll_sll2_and_raw_ip(tmp_path: Path) -> None:
    ip = roce_v2(bth(psn=3))[14:]
    sll = struct.pack(">HHH", 0, 1, 6) + bytes.fromhex("020000000009") + bytes(2) + b"\x08\x00"
    sll2 = (
        b"\x08\x00"
        + bytes(2)
        + struct.pack(">IHBB", 2, 1, 0, 6)
        + bytes.fromhex("02000000000a")
        + bytes(2)
    )
    for linktype, head, mac in (
        (113, sll, "02:00:00:00:00:09"),
        (276, sll2, "02:00:00:00:00:0a"),
        (101, b"", None),
        (228, b"", None),
    ):
        df = decode(tmp_path, [head + ip], linktype=linktype)
        row = df.iloc[0]
        assert (row.psn, row.src_ip, row.icrc_status) == (3, "10.0.0.1", "ok"), linktype
        assert (row.src_mac == mac) if mac else pd.isna(row.src_mac)


def _roce_v1(sgid: bytes, dgid: bytes, transport: bytes) -> bytes:
    """Ethernet / GRH / BTH / ICRC with the ICRC over masked GRH (as IPv6) and BTH."""
    body_len = len(transport) + 4
    grh = struct.pack(">IHBB", (6 << 28) | (0x12 << 20) | 0x345, body_len, 0x1B, 64) + sgid + dgid
    masked = bytearray(grh + transport)
    masked[0] |= 0x0F
    masked[1:4] = b"\xff\xff\xff"
    masked[7] = 0xFF
    masked[40 + 4] = 0xFF
    crc = zlib.crc32(b"\xff" * 8 + bytes(masked))
    eth = bytes.fromhex("020000000002020000000001") + b"\x89\x15"
    return eth + grh + transport + icrc_bytes(crc)


def test_roce_v1_gids(tmp_path: Path) -> None:
    sgid = bytes.fromhex("fe800000000000000200000000000001")
    dgid = bytes.fromhex("fe800000000000000200000000000002")
    df = decode(tmp_path, [_roce_v1(sgid, dgid, bth(0x0A, psn=44) + bytes(16))])
    row = df.iloc[0]
    assert (row.encap, row.psn, row.opcode_name) == ("roce_v1", 44, "RC_RDMA_WRITE_ONLY")
    assert (row.src_ip, row.dst_ip) == ("fe80::200:0:0:1", "fe80::200:0:0:2")
    assert row.icrc_status == "ok" and row.payload_len == 0


def test_vxlan_inner_flow(tmp_path: Path) -> None:
    inner = roce_v2(bth(psn=77, qp=0x99), vlans=(5,))
    outer = (
        Ether(src="0a:00:00:00:00:01")
        / IP(src="192.168.0.1", dst="192.168.0.2", tos=0)
        / UDP(dport=4789)
        / Raw(struct.pack(">II", 0x08000000, 42 << 8) + inner)
    )
    row = decode(tmp_path, [bytes(outer)]).iloc[0]
    assert (row.encap, row.psn, row.dest_qp) == ("vxlan+roce_v2", 77, 0x99)
    assert (row.src_ip, row.src_mac, row.dscp) == ("10.0.0.1", "02:00:00:00:00:01", 26)
    assert row.vlan_id == 5 and row.icrc_status == "ok"


def test_pfc_and_non_roce_frames_stay(tmp_path: Path) -> None:
    pfc = Ether(dst="01:80:c2:00:00:01", type=0x8808) / Raw(
        PFC.encode(opcode=0x0101, class_enable=0x08, quanta_3=0xFFFF)
    )
    arp = Ether() / ARP()
    plain_udp = Ether() / IP() / UDP(dport=53) / Raw(b"x" * 20)
    df = decode(tmp_path, [bytes(pfc), bytes(arp), bytes(plain_udp), roce_v2()])
    assert df["encap"].tolist() == ["pfc", "other", "other", "roce_v2"]
    assert (
        df["pfc_opcode"][0],
        df["pfc_class_enable"][0],
        df["pfc_quanta_3"][0],
        df["pfc_quanta_0"][0],
    ) == (0x0101, 8, 0xFFFF, 0)
    assert df["opcode"].isna().tolist() == [True, True, True, False]
    assert df["udp_dport"].tolist()[2] == 53
    assert df["anomaly"].isna().all()


def test_custom_roce_port(tmp_path: Path) -> None:
    frame = seal(Ether() / IP() / UDP(dport=5000) / Raw(bth(psn=8) + bytes(4)))
    path = write_capture(tmp_path / "x.pcap", frames_ts(1), [frame])
    assert read_capture(path).packets["psn"].isna().all()
    assert read_capture(path, roce_port=5000).packets["psn"].tolist() == [8]
