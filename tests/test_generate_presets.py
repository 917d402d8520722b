"""Every preset: tshark decodes it cleanly, ICRCs verify, and the truth matches an independent
recount from the capture file (read back with dpkt, not with the generator's own tables)."""

from __future__ import annotations

import json
import math
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import dpkt
import pytest

from rocetrace.dissectors.icrc import compute_icrc, compute_icrc_v1, stored_icrc
from rocetrace.dissectors.opcodes import OPCODES, Operation
from rocetrace.generate import PRESETS, Loss, PfcStorm, generate

PSN_MOD = 1 << 24
# Small versions of the presets: same stories, fewer packets.
SMALL: dict[str, dict[str, Any]] = {
    "clean": {"qps": 2, "messages": 6, "mtu": 256, "message_size": 1024},
    "bulk": {"qps": 2, "messages": 4, "message_size": 4096},
    "gbn-loss": {"mtu": 256, "message_size": 2048},
    "selective-repeat": {"mtu": 256, "message_size": 2048},
    "go-back-0-livelock": {"mtu": 256, "message_size": 16384, "max_packets": 400},
    "tail-timeout": {},
    "rnr": {"mtu": 256, "message_size": 512},
    "read-loss": {"mtu": 256, "message_size": 2048},
    "ecn-cnp": {"mtu": 256, "messages": 4, "kmin_bytes": 2000, "kmax_bytes": 16000},
    "pfc-storm": {
        "mtu": 256,
        "message_size": 1024,
        "pfc_storm": PfcStorm(start_us=2, duration_us=3000),
    },
    "pfc-recovery": {"mtu": 256, "message_size": 2048},
    "mtu-mismatch": {},
    "qp-reuse": {"mtu": 256, "message_size": 1024},
    "bidirectional": {"mtu": 256, "message_size": 1024},
    "reorder": {"mtu": 256, "message_size": 2048},
    "incast": {"mtu": 256, "messages": 2, "kmin_bytes": 4000, "kmax_bytes": 40000},
    "overlay": {"mtu": 256, "message_size": 1024},
}


def ip_of(data: bytes, version: int) -> str:
    import ipaddress

    return str(ipaddress.ip_address(data))


def parse(path: Path) -> list[dict[str, Any]]:
    """Every frame: RoCE fields (BTH + AETH/RETH as needed), ECN, PFC, ICRC check."""
    out = []
    with path.open("rb") as fh:
        for ts, buf in dpkt.pcap.Reader(fh):
            out.append(parse_frame(bytes(buf), ts))
    return out


def _l3(buf: bytes) -> tuple[int, int]:
    """(ethertype, offset of the L3 header) after an optional 802.1Q tag."""
    etype, off = int.from_bytes(buf[12:14], "big"), 14
    if etype == 0x8100:
        etype, off = int.from_bytes(buf[16:18], "big"), 18
    return etype, off


def parse_frame(buf: bytes, ts: float) -> dict[str, Any]:
    etype, off = _l3(buf)
    if etype == 0x8808:
        enable = int.from_bytes(buf[off + 2 : off + 4], "big")
        quanta = [int.from_bytes(buf[off + 4 + 2 * p : off + 6 + 2 * p], "big") for p in range(8)]
        return {"pfc": True, "enable": enable, "quanta": quanta, "ts": ts}
    if (
        etype == 0x0800
        and buf[off + 9] == 17
        and int.from_bytes(buf[off + 22 : off + 24], "big") == 4789
    ):
        inner = buf[off + 36 :]
        etype, off2 = _l3(inner)
        buf, off = inner, off2
    if etype == 0x8915:
        l4, version = off + 40, 1
        total = 40 + int.from_bytes(buf[off + 4 : off + 6], "big")
        src, dst, ecn = buf[off + 8 : off + 24], buf[off + 24 : off + 40], (buf[off + 1] >> 4) & 3
    elif etype == 0x86DD:
        version = 6
        total = 40 + int.from_bytes(buf[off + 4 : off + 6], "big")
        src, dst, ecn = buf[off + 8 : off + 24], buf[off + 24 : off + 40], (buf[off + 1] >> 4) & 3
        l4 = off + 48
    else:
        version = 4
        total = int.from_bytes(buf[off + 2 : off + 4], "big")
        src, dst, ecn = buf[off + 12 : off + 16], buf[off + 16 : off + 20], buf[off + 1] & 3
        l4 = off + 28
    bth = buf[l4 : l4 + 12]
    pkt = {"pfc": False, "ts": ts, "src": ip_of(src, version), "dst": ip_of(dst, version),
           "ecn": ecn, "opcode": bth[0], "dest_qp": int.from_bytes(bth[5:8], "big"),
           "psn": int.from_bytes(bth[9:12], "big"), "ext": buf[l4 + 12 : l4 + 40]}  # fmt: skip
    ip = buf[off : off + total]
    if len(ip) == total:
        pkt["icrc_ok"] = (compute_icrc_v1(ip) if version == 1 else compute_icrc(ip)) == stored_icrc(
            ip
        )
    return pkt


def span(p: dict[str, Any], mtu: int) -> int:
    op = OPCODES[p["opcode"]]
    if op.operation is Operation.READ_REQUEST:
        return max(1, math.ceil(int.from_bytes(p["ext"][12:16], "big") / mtu))
    if op.operation in (Operation.READ_RESPONSE, Operation.ATOMIC_ACK) or op.is_request:
        return 1
    return 0


def recount(packets: list[dict[str, Any]], mtu: int) -> dict[tuple[str, str, int], dict[str, int]]:
    """Per flow: packets, retransmitted, CE marks, NAKs sent about it, CNPs for it."""
    flows: dict[tuple[str, str, int], dict[str, int]] = {}
    highest: dict[tuple[str, str, int], int] = {}
    cnps: dict[tuple[str, str, int], int] = defaultdict(int)
    naks: dict[tuple[str, str, int], int] = defaultdict(int)
    for p in packets:
        if p["pfc"] or p["opcode"] not in OPCODES:
            continue
        key = (p["src"], p["dst"], p["dest_qp"])
        if p["opcode"] == 0x81:
            cnps[key] += 1
            continue
        f = flows.setdefault(key, {"packets": 0, "retransmitted": 0, "ce": 0})
        f["packets"] += 1
        f["ce"] += p["ecn"] == 3
        if p["opcode"] == 0x11 and p["ext"][0] >> 5 in (1, 3):
            naks[key] += 1
        n = span(p, mtu)
        if n == 0:
            continue
        ref = highest.get(key)
        u = p["psn"] if ref is None else ref + ((p["psn"] - ref + (1 << 23)) % PSN_MOD) - (1 << 23)
        if ref is not None and u <= ref:
            f["retransmitted"] += 1
        highest[key] = max(u + n - 1, ref if ref is not None else u + n - 1)
    return {k: {**v, "cnps_in": cnps[k], "naks_in": naks[k]} for k, v in flows.items()}


def check_truth(path: Path, truth: dict[str, Any], mtu: int) -> None:
    packets = parse(path)
    assert truth["capture"]["packets"] == len(packets)
    counted = recount(packets, mtu)
    assert {(f["src_ip"], f["dst_ip"], f["dest_qp"]) for f in truth["flows"]} == set(counted)
    for f in truth["flows"]:
        key = (f["src_ip"], f["dst_ip"], f["dest_qp"])
        mine, reverse = counted[key], counted.get((key[1], key[0], f["peer_qp"]), {})
        assert f["packets"] == mine["packets"], key
        assert f["retransmitted_packets"] == mine["retransmitted"], key
        assert f["ecn_ce_packets"] == mine["ce"], key
        assert sum(f["naks"].values()) == reverse.get("naks_in", 0) * (f["role"] == "requester"), (
            key
        )
        cnps = sum(n for k, n in _cnps(packets).items() if k == (key[1], key[0], f["peer_qp"]))
        assert f["cnps"] == cnps, key
        resent = [
            e for e in truth["retransmissions"] if (e["src_ip"], e["dst_ip"], e["dest_qp"]) == key
        ]
        assert sum(e["packets"] for e in resent) <= f["retransmitted_packets"], key
    pfc = [p for p in packets if p["pfc"]]
    assert truth["pfc"]["frames"] == len(pfc)
    assert truth["pfc"]["resume_frames"] == sum(not any(p["quanta"]) for p in pfc)
    assert all(p.get("icrc_ok", True) for p in packets)


def _cnps(packets: list[dict[str, Any]]) -> dict[tuple[str, str, int], int]:
    out: dict[tuple[str, str, int], int] = defaultdict(int)
    for p in packets:
        if not p["pfc"] and p["opcode"] == 0x81:
            out[(p["src"], p["dst"], p["dest_qp"])] += 1
    return out


@pytest.mark.parametrize("name", list(PRESETS))
def test_preset_truth_matches_capture(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.pcap"
    truth = generate(name, out, seed=2, **SMALL[name])
    mtu = truth.data["scenario"]["mtu"]
    assert json.loads(truth.path.read_text()) == truth.data
    check_truth(out, truth.data, mtu)


@pytest.mark.parametrize("name", [n for n in PRESETS if n != "bulk"])
def test_preset_decodes_cleanly_in_tshark(name: str, tmp_path: Path, tshark: str) -> None:
    out = tmp_path / f"{name}.pcap"
    generate(name, out, seed=3, **SMALL[name])
    text = subprocess.run(
        [tshark, "-r", str(out)], capture_output=True, text=True, check=True
    ).stdout
    assert "Malformed" not in text and "Exception" not in text
    expert = subprocess.run(
        [tshark, "-r", str(out), "-q", "-z", "expert"], capture_output=True, text=True
    )
    assert "Errors" not in expert.stdout and "Warns" not in expert.stdout


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.pcap", tmp_path / "b.pcap", tmp_path / "c.pcap"
    generate("gbn-loss", a, seed=5, losses=(Loss(rate=0.05),), **SMALL["gbn-loss"])
    generate("gbn-loss", b, seed=5, losses=(Loss(rate=0.05),), **SMALL["gbn-loss"])
    generate("gbn-loss", c, seed=6, losses=(Loss(rate=0.05),), **SMALL["gbn-loss"])
    assert a.read_bytes() == b.read_bytes()
    assert a.with_name("a.truth.json").read_text() == b.with_name("b.truth.json").read_text()
    assert a.read_bytes() != c.read_bytes()


def _key(e: dict[str, Any]) -> tuple[str, str, int]:
    return e["src_ip"], e["dst_ip"], e["dest_qp"]
