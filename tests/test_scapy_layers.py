"""The Scapy layers: same values as the reference decoder, the fast path, and the spec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from oracle import reference_frames, sample_packets
from scapy.layers.inet import IP
from scapy.layers.l2 import Ether
from scapy.packet import Packet, Raw
from scapy.utils import rdpcap, wrpcap

from rocetrace.dissectors.header import Header
from rocetrace.dissectors.icrc import compute_icrc, stored_icrc
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.reference import COLUMNS
from rocetrace.dissectors.scapy_factory import cnp, finalize_icrc, pfc_frame, roce_packet
from rocetrace.dissectors.scapy_layers import BTH, LAYERS, PFC, CNPPadding, ExtHeaderLayer


def scapy_columns(pkt: Packet) -> dict[str, int]:
    """Packet-table column values read from the Scapy layers of a dissected packet."""
    layer = pkt[BTH]
    values: dict[str, int] = {"icrc": layer.icrc}
    while isinstance(layer, BTH | ExtHeaderLayer):
        names = COLUMNS.get(layer.header, {})
        values |= {column: int(layer.getfieldval(f)) for f, column in names.items()}
        layer = layer.payload
    return values


@pytest.mark.parametrize("header", list(LAYERS), ids=lambda h: h.name)
def test_fields_desc_is_generated_from_the_header_table(header: Header) -> None:
    fields = [f for f in LAYERS[header].fields_desc if f.name != "icrc"]
    assert [(f.name, f.size) for f in fields] == list(header.layout)


def test_real_captures_dissect_to_the_reference_values(real_captures: list[Path]) -> None:
    checked = 0
    for path in real_captures:
        expected = reference_frames(path)
        for number, pkt in enumerate(rdpcap(str(path)), start=1):
            if number in expected:
                assert BTH in pkt, f"{path.name} frame {number} not dissected as RoCE"
                assert scapy_columns(pkt) == expected[number], f"{path.name} frame {number}"
                checked += 1
    assert checked > 300


@pytest.mark.parametrize("code", sorted(OPCODES), ids=lambda c: OPCODES[c].name)
def test_layer_chain_follows_the_opcode_table(code: int) -> None:
    pkt = Ether(bytes(roce_packet(code, dest_qp=5, psn=6, payload=b"\x01\x02\x03\x04\x05")))
    layers, layer = [], pkt[BTH].payload
    while isinstance(layer, ExtHeaderLayer):
        layers.append(layer.header.name)
        layer = layer.payload
    assert layers == [h.name for h in OPCODES[code].headers]
    assert isinstance(layer, Raw)
    assert layer.load == b"\x01\x02\x03\x04\x05\x00\x00\x00"  # pad to 4 bytes
    assert pkt[BTH].pad_count == 3
    assert pkt[BTH].icrc == compute_icrc(bytes(pkt[IP]))


def test_scapy_layers_and_fast_path_decode_the_same_values(tmp_path: Path) -> None:
    capture = pytest.importorskip("rocetrace.capture")
    if not hasattr(capture, "read_capture"):
        pytest.skip("rocetrace.capture.read_capture does not exist yet")
    path = tmp_path / "all_opcodes.pcap"
    wrpcap(str(path), sample_packets(seed=11))
    table = capture.read_capture(path).packets.set_index("frame")
    mismatches = []
    for number, pkt in enumerate(rdpcap(str(path)), start=1):
        for column, value in scapy_columns(pkt).items():
            got: Any = table.at[number, column]
            if pd.isna(got) or int(got) != value:
                mismatches.append(f"frame {number} {column}: scapy={value} fast={got}")
    assert not mismatches, "\n".join(mismatches[:40])


def test_cnp_factory_matches_the_spec() -> None:
    pkt = Ether(bytes(cnp(0xABCDE)))
    assert pkt[BTH].opcode == 0x81 and pkt[BTH].dest_qp == 0xABCDE
    assert pkt[BTH].becn == 1
    assert pkt[IP].tos >> 2 == 48
    assert bytes(pkt[CNPPadding]) == bytes(16)
    ip = bytes(pkt[IP])
    assert len(ip) == 20 + 8 + 12 + 16 + 4
    assert compute_icrc(ip) == stored_icrc(ip)


def test_pfc_factory_frame() -> None:
    frame = pfc_frame({3: 0xFFFF, 5: 7})
    wire = bytes(frame)
    assert len(wire) == 60
    pkt = Ether(wire)
    assert pkt[PFC].opcode == 0x0101
    assert pkt[PFC].class_enable == 0b101000
    assert (pkt[PFC].quanta_3, pkt[PFC].quanta_5, pkt[PFC].quanta_0) == (0xFFFF, 7, 0)


def test_finalize_icrc_after_an_edit() -> None:
    pkt = Ether(bytes(roce_packet(0x04, dest_qp=9, psn=1, payload=b"abcd")))
    pkt[BTH].psn = 2
    assert compute_icrc(bytes(pkt[IP])) != stored_icrc(bytes(pkt[IP]))  # stale ICRC kept
    fixed = finalize_icrc(pkt)
    assert fixed[BTH].psn == 2
    assert compute_icrc(bytes(fixed[IP])) == stored_icrc(bytes(fixed[IP]))


@pytest.mark.parametrize("first", ["contrib", "ours"])
def test_our_layers_win_over_scapy_contrib_roce(first: str) -> None:
    """Both modules bind UDP 4791; ours must dissect whichever is imported first."""
    imports = ["import scapy.contrib.roce", "import rocetrace.dissectors.scapy_layers as L"]
    code = "\n".join(
        [
            *(imports if first == "contrib" else imports[::-1]),
            "from scapy.layers.l2 import Ether",
            "from rocetrace.dissectors.scapy_factory import roce_packet",
            "p = Ether(bytes(roce_packet(0x10, dest_qp=3, psn=4)))",
            "assert type(p[L.BTH].payload) is L.AETH, p.summary()",
        ]
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
