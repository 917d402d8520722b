"""tshark as the oracle: every RoCE packet of the real and generated captures, field by field.

Compared: opcode, dest QP, PSN, AckReq, P_Key, SE/M/PadCnt/TVer, RETH, AETH, DETH, ImmDt,
IETH, AtomicETH, AtomicAckETH and the ICRC bytes. tshark 4.0 does not break out FECN/BECN,
has no CNP, XRC or FLUSH layout and reads RD as Mellanox DC: those are checked against the
spec with hand-built bytes below instead (see oracle.TSHARK_KNOWN_OPCODES).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from oracle import (
    TSHARK_KNOWN_OPCODES,
    TsharkFrame,
    compare_frames,
    reference_frames,
    sample_packets,
    table_frames,
    tshark_frames,
)
from scapy.utils import wrpcap

from rocetrace.dissectors import bth, cnp
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.reference import decode_transport

TsharkOf = Callable[[Path], dict[int, TsharkFrame]]


@pytest.fixture(scope="session")
def tshark_of(tshark: str) -> TsharkOf:
    """tshark's view of a capture, run once per file for the whole session."""
    cache: dict[Path, dict[int, TsharkFrame]] = {}

    def run(path: Path) -> dict[int, TsharkFrame]:
        if path not in cache:
            cache[path] = tshark_frames(path, tshark)
        return cache[path]

    return run


@pytest.fixture(scope="session")
def generated_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every opcode, IPv4/IPv6/802.1Q/RoCEv1/VXLAN, random field values (oracle.py)."""
    path = tmp_path_factory.mktemp("oracle") / "all_opcodes.pcap"
    wrpcap(str(path), sample_packets(seed=7))
    return path


def _read_capture() -> Callable[[Path], object]:
    capture = pytest.importorskip("rocetrace.capture")
    if not hasattr(capture, "read_capture"):
        pytest.skip("rocetrace.capture.read_capture does not exist yet")
    return capture.read_capture


def _fail_on(problems: list[str]) -> None:
    assert not problems, f"{len(problems)} disagreements with tshark:\n" + "\n".join(problems[:40])


def test_reference_decoder_agrees_with_tshark_on_real_captures(
    real_captures: list[Path], tshark_of: TsharkOf
) -> None:
    problems = []
    for path in real_captures:
        ours = reference_frames(path)
        assert ours, f"{path.name}: no RoCE frame found"
        problems += compare_frames(tshark_of(path), ours, path.name)
    _fail_on(problems)


def test_reference_decoder_agrees_with_tshark_on_generated(
    generated_capture: Path, tshark_of: TsharkOf
) -> None:
    ours = reference_frames(generated_capture)
    assert len(ours) == 2 * len(OPCODES)  # every generated frame is RoCE
    _fail_on(compare_frames(tshark_of(generated_capture), ours, "generated"))


def test_fast_decoder_agrees_with_tshark_on_real_captures(
    real_captures: list[Path], tshark_of: TsharkOf
) -> None:
    read_capture = _read_capture()
    problems = []
    for path in real_captures:
        ours = table_frames(read_capture(path).packets)  # type: ignore[attr-defined]
        problems += compare_frames(tshark_of(path), ours, path.name)
    _fail_on(problems)


def test_fast_decoder_agrees_with_tshark_on_generated(
    generated_capture: Path, tshark_of: TsharkOf
) -> None:
    read_capture = _read_capture()
    ours = table_frames(read_capture(generated_capture).packets)  # type: ignore[attr-defined]
    _fail_on(compare_frames(tshark_of(generated_capture), ours, "generated"))


def test_tshark_finds_no_malformed_generated_frame(
    generated_capture: Path, tshark_of: TsharkOf
) -> None:
    frames = tshark_of(generated_capture).values()
    known = [f for f in frames if f.values.get("opcode") in TSHARK_KNOWN_OPCODES]
    assert len(known) == 2 * len(TSHARK_KNOWN_OPCODES)  # each known opcode twice
    assert [f.frame for f in known if f.malformed] == []


def test_a_single_changed_value_is_reported_with_frame_and_column(
    real_captures: list[Path], tshark_of: TsharkOf
) -> None:
    path = next(p for p in real_captures if "read" in p.name)
    ours = reference_frames(path)
    frame = next(n for n, v in ours.items() if "aeth_msn" in v)
    ours[frame] = {**ours[frame], "aeth_msn": ours[frame]["aeth_msn"] + 1}
    problems = compare_frames(tshark_of(path), ours, path.name)
    assert len(problems) == 1
    assert f"frame {frame}: aeth_msn" in problems[0]


def test_fecn_becn_by_the_spec() -> None:
    """BTH byte 4: FECN is bit 7, BECN bit 6 (IBTA 9.2 / RoCEv2 A17.9)."""
    for byte4, fecn, becn in [(0x80, 1, 0), (0x40, 0, 1), (0xC0, 1, 1), (0x3F, 0, 0)]:
        raw = bytearray(bth.BTH.encode(opcode=0x04, dest_qp=9, psn=1))
        raw[4] = byte4
        values, _ = decode_transport(bytes(raw) + bytes(4))
        assert (values["fecn"], values["becn"]) == (fecn, becn)


def test_cnp_layout_by_the_spec() -> None:
    """CNP (A17.9.2): BTH opcode 0x81, 16 reserved bytes, then the ICRC."""
    wire = bytes.fromhex("81 00 ffff 40 00abcd 00 000000".replace(" ", "")) + bytes(16)
    values, length = decode_transport(wire + bytes(4))
    assert length == 12 + 16 == bth.BTH.size + cnp.CNP_PAYLOAD.size
    assert values["opcode"] == cnp.CNP_OPCODE
    assert values["dest_qp"] == 0xABCD
    assert values["becn"] == 1
