"""tshark as the oracle: extract RoCE header values with `tshark -T fields`, compare tables.

Tests hold rocetrace's packet table (and the reference decoder) against tshark field by
field. Values are keyed by packet-table column name so any decoder can be compared.
"""

from __future__ import annotations

import random
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.grh import GRH, ROCE_V1_ETHERTYPE
from rocetrace.dissectors.header import Header
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.reference import decode_transport

_NA = pd.NA

if TYPE_CHECKING:
    from scapy.packet import Packet

ROCE_V2_PORT = 4791
VXLAN_PORT = 4789

# packet-table column -> tshark 4.0 field (check with `tshark -G fields | grep infiniband`)
BTH_FIELDS: dict[str, str] = {
    "opcode": "infiniband.bth.opcode",
    "se": "infiniband.bth.se",
    "mig_req": "infiniband.bth.m",
    "pad_count": "infiniband.bth.padcnt",
    "tver": "infiniband.bth.tver",
    "pkey": "infiniband.bth.p_key",
    "dest_qp": "infiniband.bth.destqp",
    "ack_req": "infiniband.bth.a",
    "psn": "infiniband.bth.psn",
}
EXT_FIELDS: dict[str, str] = {
    "reth_va": "infiniband.reth.va",  # tshark shows AtomicETH's VA and R_Key here too
    "reth_rkey": "infiniband.reth.r_key",
    "reth_dma_length": "infiniband.reth.dmalen",
    "aeth_syndrome": "infiniband.aeth.syndrome",
    "aeth_msn": "infiniband.aeth.msn",
    "deth_qkey": "infiniband.deth.q_key",
    "deth_src_qp": "infiniband.deth.srcqp",
    "immdt": "infiniband.immdt",  # bytes, shown as hex
    "ieth_rkey": "infiniband.ieth",  # bytes, shown as hex
    "atomic_swap_add": "infiniband.atomiceth.swapdt",
    "atomic_compare": "infiniband.atomiceth.cmpdt",
    "atomic_ack_orig": "infiniband.atomicacketh.origremdt",
}
_MARKERS = {
    "frame": "frame.number",
    "udp_dport": "udp.dstport",
    "atomiceth": "infiniband.atomiceth",
    "icrc_be": "infiniband.invariant.crc",  # the 4 ICRC bytes read big-endian
    "malformed": "_ws.malformed",
}
BTH_COLUMNS = tuple(BTH_FIELDS)
EXT_COLUMNS = (*EXT_FIELDS, "atomic_va", "atomic_rkey")

# Payload heuristics guess at random bytes (RPC-over-RDMA flags them malformed), and TFTP
# claims UDP source port 69 before RRoCE gets port 4791: neither is about RoCE headers.
DISABLED_PROTOCOLS = (
    *("rpcordma", "smb_direct", "smc", "nvme-rdma", "lnet", "iser"),
    *("infiniband_sdp", "fcoib", "tftp"),
)

# Opcodes tshark 4.0 dissects fully: RC, UC and UD. It reads the RD range as Mellanox DC
# (with an 8-byte DCCETH), and knows neither XRC, CNP, FLUSH nor ATOMIC WRITE: for those
# only the BTH is compared, their extended headers are checked against the spec instead.
TSHARK_KNOWN_OPCODES = frozenset([*range(0x00, 0x15), 0x16, 0x17, *range(0x20, 0x2C), 0x64, 0x65])


@dataclass
class TsharkFrame:
    """One frame as tshark sees it: RoCE values by column, plus a few markers."""

    frame: int
    udp_dport: int | None
    malformed: bool
    values: dict[str, int] = field(default_factory=dict)

    @property
    def is_roce(self) -> bool:
        return "opcode" in self.values


def tshark_command(path: Path, tshark: str = "tshark") -> list[str]:
    fields = [*_MARKERS.values(), *BTH_FIELDS.values(), *EXT_FIELDS.values()]
    cmd = [tshark, "-n", "-r", str(path), "-T", "fields", "-E", "separator=\t"]
    cmd += ["-E", "occurrence=l"]  # innermost header (VXLAN), and immdt's single value
    for proto in DISABLED_PROTOCOLS:
        cmd += ["--disable-protocol", proto]
    for name in fields:
        cmd += ["-e", name]
    return cmd


def tshark_frames(path: Path, tshark: str = "tshark") -> dict[int, TsharkFrame]:
    """Every frame of the capture with its RoCE values (empty for non-RoCE frames)."""
    out = subprocess.run(
        tshark_command(path, tshark), capture_output=True, text=True, check=True, timeout=120
    ).stdout
    names = [*_MARKERS, *BTH_FIELDS, *EXT_FIELDS]
    frames = {}
    for line in out.splitlines():
        raw = dict(zip(names, line.split("\t"), strict=True))
        frame = TsharkFrame(
            frame=int(raw["frame"]),
            udp_dport=int(raw["udp_dport"]) if raw["udp_dport"] else None,
            malformed=bool(raw["malformed"]),
        )
        for column in (*BTH_FIELDS, *EXT_FIELDS):
            if raw[column]:
                frame.values[column] = _number(raw[column], column)
        if raw["atomiceth"]:  # AtomicETH's VA/R_Key were shown as RETH fields
            frame.values["atomic_va"] = frame.values.pop("reth_va")
            frame.values["atomic_rkey"] = frame.values.pop("reth_rkey")
        if raw["icrc_be"]:
            frame.values["icrc"] = int.from_bytes(int(raw["icrc_be"], 16).to_bytes(4), "little")
        frames[frame.frame] = frame
    return frames


def _number(text: str, column: str) -> int:
    if column in ("immdt", "ieth_rkey"):
        return int(text.replace(":", ""), 16)
    if text in ("True", "False"):
        return int(text == "True")
    return int(text, 0)


def compare_frames(
    tshark: Mapping[int, TsharkFrame], ours: Mapping[int, Mapping[str, int | None]], label: str
) -> list[str]:
    """Every disagreement, as "label frame N: column ours=X tshark=Y" lines."""
    problems = []
    roce_frames = sorted({n for n, f in tshark.items() if f.is_roce} | set(ours))
    for number in roce_frames:
        theirs = tshark[number].values if number in tshark else {}
        mine = {k: v for k, v in ours.get(number, {}).items() if v is not None}
        problems += [f"{label} frame {number}: {p}" for p in _frame_diff(mine, theirs)]
    return problems


def _frame_diff(mine: Mapping[str, int], theirs: Mapping[str, int]) -> list[str]:
    if "opcode" not in theirs or "opcode" not in mine:
        side = "tshark" if "opcode" not in theirs else "rocetrace"
        return [f"not decoded as RoCE by {side}"]
    columns = list(BTH_COLUMNS)
    if mine["opcode"] in TSHARK_KNOWN_OPCODES:
        columns += [c for c in EXT_COLUMNS if c in mine or c in theirs]
    if "icrc" in theirs:
        columns.append("icrc")
    return [
        f"{c} rocetrace={mine.get(c)} tshark={theirs.get(c)}"
        for c in columns
        if mine.get(c) != theirs.get(c)
    ]


def reference_frames(path: Path) -> dict[int, dict[str, int]]:
    """RoCE frames decoded by the reference decoder, links parsed by dpkt (not our code)."""
    import dpkt

    frames = {}
    with path.open("rb") as fh:
        for number, (_, buf) in enumerate(dpkt.pcap.UniversalReader(fh), start=1):
            transport = _roce_transport(dpkt.ethernet.Ethernet(buf))
            if transport is None:
                continue
            values, _ = decode_transport(transport)
            values["icrc"] = int.from_bytes(transport[-4:], "little")
            frames[number] = values
    return frames


def _roce_transport(eth: object) -> bytes | None:
    """BTH through ICRC of a RoCEv2 (also inside VXLAN) or RoCEv1 frame, else None."""
    import dpkt

    if getattr(eth, "type", None) == ROCE_V1_ETHERTYPE:
        grh_bytes = bytes(eth.data)  # type: ignore[attr-defined]
        return grh_bytes[GRH.size : GRH.size + int.from_bytes(grh_bytes[4:6], "big")]
    ip = getattr(eth, "data", None)
    udp = getattr(ip, "data", None)
    if not isinstance(ip, dpkt.ip.IP | dpkt.ip6.IP6) or not isinstance(udp, dpkt.udp.UDP):
        return None
    payload = bytes(udp)[8 : udp.ulen]
    if udp.dport == VXLAN_PORT:
        return _roce_transport(dpkt.ethernet.Ethernet(payload[8:]))
    return payload if udp.dport == ROCE_V2_PORT else None


VARIANTS = ("ipv4", "ipv6", "vlan", "roce_v1", "vxlan")


def sample_packets(seed: int = 7) -> list[Packet]:
    """Every opcode of the table with random field values, in every encapsulation.

    Each opcode once per variant in turn (IPv4, IPv6, 802.1Q, RoCEv1, VXLAN), then each
    once more over IPv4, so every opcode and every encapsulation appears.
    """
    rng = random.Random(seed)
    codes = sorted(OPCODES)
    cases = [(c, VARIANTS[i % len(VARIANTS)]) for i, c in enumerate(codes)]
    cases += [(c, "ipv4") for c in codes]
    packets = [sample_packet(code, variant, rng) for code, variant in cases]
    for i, pkt in enumerate(packets):
        pkt.time = 1_700_000_000 + i / 1000
    return packets


def sample_packet(code: int, variant: str, rng: random.Random) -> Packet:
    """One packet of `code` with random BTH and extended-header values."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    from scapy.layers.vxlan import VXLAN

    from rocetrace.dissectors.scapy_factory import roce_packet

    entry = OPCODES[code]
    headers = {h.name: _random_fields(h, rng) for h in entry.headers}
    bth = _random_fields(BTH, rng)
    del bth["opcode"], bth["pad_count"]
    bth["dest_qp"] = max(2, bth["dest_qp"])  # QP 0 and 1 carry MADs
    kw: dict[str, Any] = {"headers": headers, "payload": rng.randbytes(rng.randrange(0, 40))}
    if variant == "ipv6":
        kw |= {"src_ip": "2001:db8::1", "dst_ip": "2001:db8::2"}
    kw |= {"vlan": (3 << 12) | 100} if variant == "vlan" else {}
    kw |= {"roce_version": 1} if variant == "roce_v1" else {}
    pkt = roce_packet(code, tos=rng.getrandbits(8), sport=rng.randrange(49152, 65536), **kw, **bth)
    if variant == "vxlan":
        outer = Ether() / IP(src="198.51.100.1", dst="198.51.100.2") / UDP(dport=VXLAN_PORT)
        pkt = outer / VXLAN(vni=42) / pkt
    return pkt


def _random_fields(header: Header, rng: random.Random) -> dict[str, int]:
    return {f.name: rng.getrandbits(f.bits) for f in header.fields if not f.reserved}


def table_frames(packets: Any) -> dict[int, dict[str, int | None]]:
    """RoCE rows of a packet table (DataFrame) as {frame: {column: int or None}}."""
    columns = [c for c in (*BTH_COLUMNS, *EXT_COLUMNS, "fecn", "becn", "icrc") if c in packets]
    roce = packets[packets["opcode"].notna()]
    values = roce[columns].astype(object).itertuples(index=False)
    return {
        int(frame): {c: None if pd.isna(v) else int(v) for c, v in zip(columns, row, strict=True)}
        for frame, row in zip(roce["frame"], values, strict=True)
    }
