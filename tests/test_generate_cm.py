"""The generator's CM exchange (`cm=True`, `--cm`): MADs tshark agrees with, pairs that
cm_connections finds again, QPNs and PSNs that the traffic really uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from cm_oracle import TSHARK_CM, mad_table, mismatches, reference_cm_mads, tshark_cm_mads
from oracle import reference_frames

from rocetrace.analysis.cm import cm_connections
from rocetrace.cli import cli
from rocetrace.dissectors.icrc import compute_icrc, stored_icrc
from rocetrace.dissectors.mad import GSI_QP, CmAttr
from rocetrace.generate import generate

RESPONSES = (0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12)  # READ responses, ACK, atomic ACK
SMALL = {"mtu": 256, "messages": 3, "message_size": 1024}


@pytest.fixture(scope="module")
def clean_cm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("cm") / "clean.pcap"
    truth = generate("clean", path, seed=3, cm=True, **SMALL)
    return path, truth.data


def test_cm_connections_finds_the_truth_again(clean_cm: tuple[Path, dict[str, Any]]) -> None:
    path, truth = clean_cm
    found = cm_connections(mad_table(reference_cm_mads(path)))
    expected = truth["cm_connections"]
    assert len(expected) == 4  # the clean preset's 4 RC QPs
    assert [{k: r[k] for k in expected[0]} for r in found.to_dict("records")] == expected


def test_the_traffic_uses_the_qpns_and_psns_the_mads_announce(
    clean_cm: tuple[Path, dict[str, Any]],
) -> None:
    """Requester -> responder goes to REP's Local QPN from REP's Starting PSN; the responses
    go to REQ's Local QPN. All setup MADs come before the data, all teardown MADs after."""
    path, truth = clean_cm
    frames = reference_frames(path)
    mads = {m.frame: m for m in reference_cm_mads(path)}
    data = [n for n, v in frames.items() if v["dest_qp"] != GSI_QP]
    for conn in truth["cm_connections"]:
        to_responder = [frames[n] for n in data if frames[n]["dest_qp"] == conn["responder_qpn"]]
        to_requester = [frames[n] for n in data if frames[n]["dest_qp"] == conn["requester_qpn"]]
        assert to_responder[0]["psn"] == conn["requester_starting_psn"]
        assert to_requester and all(f["opcode"] in RESPONSES for f in to_requester)
    kinds = {n: CmAttr(m.values["mad_attribute_id"]) for n, m in mads.items()}
    setup = [n for n, k in kinds.items() if k in (CmAttr.REQ, CmAttr.REP, CmAttr.RTU)]
    teardown = [n for n, k in kinds.items() if k in (CmAttr.DREQ, CmAttr.DREP)]
    assert max(setup) < min(data) and max(data) < min(teardown)
    assert len(setup) == 12 and len(teardown) == 8


def test_tshark_reads_every_generated_mad_like_we_do(
    clean_cm: tuple[Path, dict[str, Any]], tshark: str
) -> None:
    path, _ = clean_cm
    theirs = tshark_cm_mads(path, tshark)
    ours = reference_cm_mads(path)
    assert sorted(theirs) == [m.frame for m in ours]
    for m in ours:
        keys = [f"cm_{k}" for k in TSHARK_CM[CmAttr(m.values["mad_attribute_id"])]]
        keys += ["mad_transaction_id", "mad_attribute_id", "mad_mgmt_class", "mad_method"]
        assert not mismatches(m.values, theirs[m.frame], keys), m.frame


def test_mad_flows_in_the_truth_are_clean_ud_flows(clean_cm: tuple[Path, dict[str, Any]]) -> None:
    _, truth = clean_cm
    gsi = [f for f in truth["flows"] if f["dest_qp"] == GSI_QP]
    assert [f["packets"] for f in gsi] == [12, 8]  # REQ, RTU, DREQ x4 / REP, DREP x4
    for f in gsi:
        assert (f["transport"], f["role"], f["peer_qp"]) == ("UD", "requester", GSI_QP)
        assert f["psn_gaps"] == 0 and f["retransmitted_packets"] == 0
    assert truth["findings"] == []


@pytest.mark.parametrize(
    "overrides",
    [{"ip_version": 6}, {"roce_v1": True}, {"vxlan_vni": 42, "vlan": 7}, {"vantage": "sender"}],
)
def test_mads_in_every_encapsulation_have_a_correct_icrc(
    tmp_path: Path, overrides: dict[str, Any]
) -> None:
    path = tmp_path / "x.pcap"
    truth = generate("gbn-loss", path, seed=1, cm=True, **SMALL, **overrides).data
    frames = reference_frames(path)
    assert sum(v["dest_qp"] == GSI_QP for v in frames.values()) == 5
    assert len(truth["cm_connections"]) == 1
    if not overrides.get("roce_v1") and "vxlan_vni" not in overrides:
        from scapy.utils import rdpcap

        for pkt in rdpcap(str(path)):
            raw = bytes(pkt)[14 + 4 * bool(overrides.get("vlan")) :]
            assert stored_icrc(raw) == compute_icrc(raw)


def test_off_by_default(tmp_path: Path) -> None:
    truth = generate("clean", tmp_path / "x.pcap", seed=3, **SMALL).data
    assert "cm_connections" not in truth
    assert all(f["dest_qp"] != GSI_QP for f in truth["flows"])


def test_cli_flag(tmp_path: Path) -> None:
    runner = CliRunner()
    assert "--cm" in runner.invoke(cli, ["generate", "--help"]).output
    out = tmp_path / "c.pcap"
    result = runner.invoke(cli, ["generate", "rnr", "-o", str(out), "--cm"])
    assert result.exit_code == 0, result.output
    truth = json.loads(out.with_name("c.truth.json").read_text())
    assert truth["scenario"]["cm"] is True and len(truth["cm_connections"]) == 1
