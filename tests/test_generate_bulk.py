"""The bulk path (vectorized, fault-free RC WRITE / SEND / READ at line rate): its packets are
the event model's packets, its captures analyze to exactly their truth, and tshark reads
them as rocetrace does."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import dpkt
import numpy as np
import pytest
from oracle import compare_frames, reference_frames, table_frames, tshark_frames
from test_analysis_truth import count_differences

from rocetrace.analysis.api import analyze
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.reth import RETH
from rocetrace.generate import PRESETS, generate
from rocetrace.generate.bulk import serialization_ns
from rocetrace.generate.run import resolve, simulate

MIXES: dict[str, dict[str, Any]] = {
    "segmented": {"qps": 3, "messages": 7, "message_size": 4096, "ops": ("write", "send", "read")},
    "only": {"qps": 2, "messages": 6, "message_size": 900, "ops": ("read", "send", "write")},
    "immediate": {
        "qps": 2, "messages": 5, "message_size": 2500,
        "ops": ("write_imm", "send_imm", "read", "write"), "ack_req_every": 3,
    },
    "psn-wrap": {
        "requesters": 2, "responders": 2, "messages": 5, "message_size": 3000,
        "ops": ("read", "write"), "start_psn": 0xFFFFF3,
    },
}  # fmt: skip
SEGMENTED = {"RC_RDMA_WRITE_FIRST", "RC_RDMA_WRITE_MIDDLE", "RC_RDMA_WRITE_LAST",
             "RC_SEND_FIRST", "RC_SEND_MIDDLE", "RC_SEND_LAST", "RC_RDMA_READ_REQUEST",
             "RC_RDMA_READ_RESPONSE_FIRST", "RC_RDMA_READ_RESPONSE_MIDDLE",
             "RC_RDMA_READ_RESPONSE_LAST", "RC_ACKNOWLEDGE"}  # fmt: skip
WIRE_FIELDS = (
    "src", "dst", "dest_qp", "udp_sport", "opcode", "psn", "payload_len", "va", "rkey", "dma_len",
    "ack_req", "se", "imm", "syndrome", "msn", "span", "role", "conn",
)  # fmt: skip


def opcode_names(path: Path) -> Counter[str]:
    """Frames per opcode, read back with dpkt (RoCEv2 over IPv4 only, as the bulk path writes)."""
    with path.open("rb") as fh:
        return Counter(OPCODES[bytes(buf)[42]].name for _, buf in dpkt.pcap.Reader(fh))


def wire_rows(bulk: bool, **overrides: Any) -> list[tuple[int, ...]]:
    """Every packet's header fields (RETH fields only where a RETH is sent), sorted."""
    sc = resolve(PRESETS["clean"], {**overrides, "bulk": bulk, "window": 1 << 20})
    table, _ = simulate(sc, 5)
    has_reth = np.array([RETH in OPCODES[int(op)].headers for op in table["opcode"]])
    cols = {f: np.where(has_reth, table[f], 0) if f in ("va", "rkey", "dma_len") else table[f]
            for f in WIRE_FIELDS}  # fmt: skip
    return sorted(zip(*(cols[f].tolist() for f in WIRE_FIELDS), strict=True))


@pytest.mark.parametrize("mix", MIXES)
def test_same_packets_as_the_event_model(mix: str) -> None:
    assert wire_rows(True, **MIXES[mix]) == wire_rows(False, **MIXES[mix])


@pytest.mark.parametrize("vantage", ["mirror", "sender", "receiver"])
@pytest.mark.parametrize("mix", MIXES)
def test_analysis_equals_truth(tmp_path: Path, mix: str, vantage: str) -> None:
    path = tmp_path / f"{mix}.pcap"
    truth = generate("bulk", path, seed=4, vantage=vantage, **MIXES[mix]).data
    assert count_differences(analyze(path).summary(), truth) == []
    sc = truth["scenario"]
    every_message = sc["requesters"] * sc["responders"] * sc["qps"] * sc["messages"]
    assert truth["retransmissions"] == [] and truth["messages"] == {"completed": every_message}
    for f in truth["flows"]:
        assert f["retransmitted_packets"] == f["psn_gaps"] == sum(f["naks"].values()) == 0
        assert f["peer_qp"] is not None and f["role"] in ("requester", "responder")


def test_opcode_mix_and_read_response_flows(tmp_path: Path) -> None:
    path = tmp_path / "mix.pcap"
    truth = generate("bulk", path, seed=1, **MIXES["segmented"]).data
    names = opcode_names(path)
    assert set(names) == SEGMENTED
    # per QP, messages 0..6 cycle WRITE, SEND, READ: 5 ACKed messages, 2 READs of 4 responses
    assert names["RC_ACKNOWLEDGE"] == 3 * 5 and names["RC_RDMA_READ_REQUEST"] == 3 * 2
    assert names["RC_RDMA_READ_RESPONSE_MIDDLE"] == 3 * 2 * 2
    responders = [f for f in truth["flows"] if f["role"] == "responder"]
    assert len(responders) == 3 and all(f["packets"] == 5 + 2 * 4 for f in responders)
    only = opcode_names(_generated(tmp_path, "only"))
    assert {"RC_RDMA_WRITE_ONLY", "RC_SEND_ONLY", "RC_RDMA_READ_RESPONSE_ONLY"} <= set(only)
    imm = opcode_names(_generated(tmp_path, "immediate"))
    assert {"RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "RC_SEND_LAST_WITH_IMMEDIATE"} <= set(imm)


def _generated(tmp_path: Path, mix: str) -> Path:
    path = tmp_path / f"{mix}.pcap"
    generate("bulk", path, seed=1, **MIXES[mix])
    return path


def test_every_link_at_most_line_rate(tmp_path: Path) -> None:
    """Frames leaving one port never overlap, and requests leave back to back."""
    sc = resolve("bulk", {"qps": 4, "messages": 9, "message_size": 8192, "requesters": 2})
    table, _ = simulate(sc, 0)
    ser = serialization_ns(table, sc)
    for port, start in (("src", "t_tx"), ("dst", "t_sw")):
        for host in np.unique(table[port]):
            mine = np.flatnonzero(table[port] == host)
            mine = mine[np.argsort(table[start][mine], kind="stable")]
            idle = table[start][mine][1:] - (table[start][mine] + ser[mine])[:-1]
            assert idle.min() >= 0, (port, host)
            if port == "src" and host < sc.requesters:
                assert idle.max() == 0  # the requester never waits: line rate


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    generate("bulk", a, seed=3, **MIXES["immediate"])
    generate("bulk", b, seed=3, **MIXES["immediate"])
    assert a.read_bytes() == b.read_bytes()


def test_atomics_and_faults_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bulk path"):
        generate("bulk", tmp_path / "x.pcap", ops=("write", "fetch_add"))
    with pytest.raises(ValueError, match="bulk path"):
        generate("bulk", tmp_path / "x.pcap", ce_rate=0.1)


def test_decoders_agree_with_tshark(tmp_path: Path, tshark: str) -> None:
    path = tmp_path / "small.pcap"
    generate("bulk", path, seed=2, **MIXES["immediate"])
    theirs = tshark_frames(path, tshark)
    assert not [f.frame for f in theirs.values() if f.malformed]
    problems = compare_frames(theirs, reference_frames(path), "reference")
    capture = pytest.importorskip("rocetrace.capture")
    problems += compare_frames(theirs, table_frames(capture.read_capture(path).packets), "fast")
    assert problems == [], "\n".join(problems[:20])
