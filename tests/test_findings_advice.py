"""Findings people act on: one per problem however many QPs share it, each with a cause and
advice, loss placed on its side of the capture point, a verdict that names what happened."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rocetrace
from rocetrace.analysis.advice import ENTRIES, entry, plural
from rocetrace.analysis.verdict import verdict
from rocetrace.generate import Loss, generate

REPO = Path(__file__).resolve().parent.parent
SAMPLES = sorted((REPO / "samples").glob("*.pcap"))


@pytest.fixture(scope="module")
def many_qps(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Six QPs of one host pair, none ECN-capable, every 40th request lost."""
    path = tmp_path_factory.mktemp("many") / "many.pcap"
    generate("gbn-loss", path, seed=2, qps=6, ecn=0, losses=(Loss(every=40),))
    return rocetrace.analyze(path)


@pytest.fixture(scope="module")
def scenarios(many_qps: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = {p.stem: rocetrace.analyze(p) for p in SAMPLES}
    folder = tmp_path_factory.mktemp("presets")
    for preset in ("qp-reuse", "mtu-mismatch", "reorder", "pfc-recovery"):
        generate(preset, folder / f"{preset}.pcap", seed=1)
        out[preset] = rocetrace.analyze(folder / f"{preset}.pcap")
    return out | {"many QPs": many_qps}


def test_one_finding_per_problem_listing_every_affected_qp(many_qps: Any) -> None:
    f, flows = many_qps.findings, many_qps.flows
    assert f["code"].is_unique
    requesters = set(flows.loc[flows["role"] == "requester", "flow"])
    (ecn,) = f[f["code"] == "ecn_not_capable"].itertuples()
    assert set(ecn.flows) == requesters and len(requesters) == 6
    assert pd.isna(ecn.flow)  # about many flows: none singled out
    (loss,) = f[f["code"] == "psn_sequence_error"].itertuples()
    assert loss.count == len(many_qps.naks) and set(loss.flows) <= requesters
    assert loss.message.startswith(f"{len(many_qps.naks)} NAKs (PSN sequence error) on ")


def _problems(name: str, a: Any) -> list[str]:
    out = []
    f = a.findings
    if not f["code"].is_unique:
        out.append(f"{name}: a code twice: {f['code'].tolist()}")
    for r in f.itertuples():
        for column in ("title", "cause", "advice", "message"):
            if not isinstance(getattr(r, column), str) or not getattr(r, column):
                out.append(f"{name}: {r.code} has no {column}")
        if "(s)" in r.message or " 1 NAKs" in r.message:
            out.append(f"{name}: {r.code}: grammar: {r.message}")
    return out


def test_every_finding_has_a_cause_and_advice_and_no_code_twice(scenarios: dict[str, Any]) -> None:
    assert [p for name, a in scenarios.items() for p in _problems(name, a)] == []


def test_real_captures_have_one_finding_per_problem_with_advice(real_captures: list[Path]) -> None:
    problems = [p for path in real_captures for p in _problems(path.name, rocetrace.analyze(path))]
    assert problems == []


def test_verdict_is_never_clean_when_anything_was_found(scenarios: dict[str, Any]) -> None:
    for name, a in scenarios.items():
        title = verdict(a).title
        found = len(a.findings) or len(a.cnps) or len(a.retransmissions) or len(a.pfc)
        assert not (found and title.startswith("Clean")), name
        assert a.summary()["verdict"]["title"] == title
    assert verdict(scenarios["clean"]).title.startswith("Clean")
    assert "CNP" in verdict(scenarios["ecn-cnp"]).title
    assert "incast" in verdict(scenarios["incast"]).title


def test_congestion_and_incast_scenarios_get_findings(scenarios: dict[str, Any]) -> None:
    assert "congestion" in set(scenarios["ecn-cnp"].findings["code"])
    incast = scenarios["incast"].findings.set_index("code").loc["incast"]
    assert incast["severity"] == "warning" and "senders to 10.0.0.9" in incast["message"]


@pytest.mark.parametrize(("vantage", "side"), [("sender", "downstream"), ("receiver", "upstream")])
def test_loss_is_placed_on_its_side_of_the_capture_point(
    tmp_path: Path, vantage: str, side: str
) -> None:
    generate("gbn-loss", tmp_path / "v.pcap", seed=2, vantages=("sender", "receiver"))
    a = rocetrace.analyze(tmp_path / f"v.{vantage}.pcap")
    loss = a.findings.set_index("code").loc["psn_sequence_error"]
    assert loss["loss_location"] == side
    assert ("after" if side == "downstream" else "before") + " the capture point" in loss["cause"]
    assert set(a.retransmissions["loss_location"]) == {side}


def test_timeout_cause_says_when_the_timer_is_too_short_for_the_rtt() -> None:
    timeout = entry("timeout_retransmission")
    short = {"ack_timeout_s": [16e-6], "rtt_s": [40e-6]}
    assert "too short for the RTT" in timeout.text("cause", short)
    assert "Raise the QP's ACK timeout" in timeout.text("advice", short)
    long = {"ack_timeout_s": [4e-3], "rtt_s": [10e-6], "silence_s": [4.2e-3]}
    assert "too short" not in timeout.text("cause", long)
    assert "4,200 us of silence" in timeout.text("advice", long)


def test_pfc_advice_names_a_priority_the_data_does_not_ride() -> None:
    advice = entry("pfc_pause").text("advice", {"priority": [3], "data_pcp": [5]})
    assert "check the PFC priority" in advice and "priority 3" in advice and "PCP 5" in advice


def test_mtu_disagreement_gets_mtu_advice(scenarios: dict[str, Any]) -> None:
    reuse = scenarios["mtu-mismatch"].findings.set_index("code").loc["psn_reuse"]
    assert "disagree on the path MTU" in reuse["advice"]


def test_every_code_has_an_entry_and_plurals_agree() -> None:
    assert plural(1, "NAK") == "1 NAK" and plural(3, "NAK") == "3 NAKs"
    assert plural(2, ("QP sharing a port", "QPs sharing a port")) == "2 QPs sharing a port"
    for code, e in ENTRIES.items():
        assert e.title and e.noun[0] and e.noun[1], code


def test_docs_findings_md_is_generated_from_the_advice() -> None:
    from rocetrace.analysis.findings_doc import render

    page = (REPO / "docs" / "findings.md").read_text()
    assert page == render(), (
        "regenerate: python -m rocetrace.analysis.findings_doc > docs/findings.md"
    )
    assert all(f"| `{code}` |" in page for code in ENTRIES)
