"""Deliberately broken frames, injected on request to exercise the decoder's anomaly names."""

from __future__ import annotations

from collections.abc import Mapping

from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.generate.encap import ETH_IPV4, ETHERNET, MIN_FRAME, ROCE_V2_PORT, UDP, Encap
from rocetrace.generate.hosts import Hosts
from rocetrace.generate.reference_frames import _ipv4, default_payload, roce_frame

BAD_ICRC, TRUNCATED_BTH, UNKNOWN_OPCODE = 1, 2, 3
MALFORMED_NAMES = {
    BAD_ICRC: "bad_icrc",
    TRUNCATED_BTH: "truncated_bth",
    UNKNOWN_OPCODE: "unknown_opcode",
}
UNKNOWN_OPCODE_VALUE = next(c for c in range(0x18, 0x20) if c not in OPCODES)


def _udp_frame(row: Mapping[str, int], hosts: Hosts, udp_payload: bytes) -> bytes:
    src, dst = hosts.mac[row["src"]], hosts.mac[row["dst"]]
    eth = ETHERNET.encode(
        dst=int.from_bytes(bytes(dst), "big"),
        src=int.from_bytes(bytes(src), "big"),
        ethertype=ETH_IPV4,
    )
    udp = UDP.encode(sport=row["udp_sport"], dport=ROCE_V2_PORT, length=8 + len(udp_payload))
    ip = _ipv4(row, bytes(hosts.ip[row["src"]]), bytes(hosts.ip[row["dst"]]), 28 + len(udp_payload))
    return (eth + ip + udp + udp_payload).ljust(MIN_FRAME, b"\x00")


def malformed_frame(row: Mapping[str, int], encap: Encap, hosts: Hosts) -> bytes:
    """A broken RoCEv2/IPv4 frame of the kind in row["malformed"]."""
    kind = row["malformed"]
    if kind == BAD_ICRC:
        frame = bytearray(roce_frame(row, Encap(), hosts, default_payload(row["payload_len"])))
        end = 14 + 20 + 8 + 12 + row["payload_len"] + (-row["payload_len"]) % 4 + 4
        frame[end - 4 : end] = bytes(b ^ 0xFF for b in frame[end - 4 : end])
        return bytes(frame)
    bth = BTH.encode(opcode=row["opcode"], pkey=0xFFFF, dest_qp=row["dest_qp"], psn=row["psn"])
    if kind == TRUNCATED_BTH:
        return _udp_frame(row, hosts, bth[:6])
    bth = BTH.encode(
        opcode=UNKNOWN_OPCODE_VALUE, pkey=0xFFFF, dest_qp=row["dest_qp"], psn=row["psn"]
    )
    return _udp_frame(row, hosts, bth + bytes(16) + b"\x00" * 4)
