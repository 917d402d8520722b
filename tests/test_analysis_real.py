"""Real captures (../shared/captures/real/) are clean: no NAKs, retransmissions, PSN gaps or
timeouts, and every RC connection's two directions are paired. Golden summaries guard the
rest; regenerate them on purpose with ROCETRACE_REGEN_GOLDEN=1."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rocetrace.analysis.api import analyze

GOLDEN = Path(__file__).parent / "golden"
GOLDEN_CAPTURES = (
    "rc_send_ack_ect0",
    "rxe_rdma_read_bw",
    "rxe_cm_write_read",
    "rxe_rdma_atomic_bw",
)
LOSS_CODES = {
    "psn_sequence_error",
    "timeout_retransmission",
    "rnr_nak",
    "capture_gap",
    "go_back_0_livelock",
}


def test_real_captures_are_clean(real_captures: list[Path]) -> None:
    for path in real_captures:
        a = analyze(path)
        flows = a.flows
        assert len(flows) > 0, path.name
        naks = flows.filter(like="naks_").to_numpy().sum()
        assert (naks, len(a.naks)) == (0, 0), path.name
        assert flows["retransmitted_packets"].sum() == 0, path.name
        assert flows["psn_gaps"].sum() == 0, path.name
        assert flows["timeouts"].sum() == 0, path.name
        assert a.retransmissions.empty, path.name
        assert not LOSS_CODES & set(a.findings["code"]), (path.name, a.findings)


def test_real_rc_connections_are_paired(real_captures: list[Path]) -> None:
    for path in real_captures:
        flows = analyze(path).flows
        rc = flows[flows["transport"] == "RC"]
        assert rc["peer_qp"].notna().all(), (path.name, rc[["src_ip", "dst_ip", "dest_qp"]])
        for f in rc.itertuples():
            pair = flows.loc[int(f.pair_flow_id)]
            assert (pair["src_ip"], pair["dst_ip"]) == (f.dst_ip, f.src_ip), path.name
            assert pair["dest_qp"] == f.peer_qp and pair["peer_qp"] == f.dest_qp, path.name


def _by_name(real_captures: list[Path], name: str) -> Path:
    return next(p for p in real_captures if p.stem == name)


def test_read_responses_answer_the_read_requests(real_captures: list[Path]) -> None:
    """One READ REQUEST spans several response PSNs: requester and responder are paired and
    the responder flow carries the READ responses."""
    flows = analyze(_by_name(real_captures, "rxe_rdma_read_bw")).flows.set_index("role")
    assert flows.loc["requester", "peer_qp"] == flows.loc["responder", "dest_qp"]
    assert flows.loc["responder", "packets"] == 15 and flows.loc["requester", "packets"] == 5


def test_coalesced_acks_pair_both_directions(real_captures: list[Path]) -> None:
    """37 ACKs for 68 requests, both hosts sending: both flows are requesters and peers."""
    a = analyze(_by_name(real_captures, "rc_send_ack_ect0"))
    assert sorted(a.flows["packets"]) == [37, 68]
    assert set(a.flows["paired_by"]) == {"psn"}
    assert a.flows["ecn_capable"].all()


def test_cm_mads_on_qp1_are_ud_flows(real_captures: list[Path]) -> None:
    flows = analyze(_by_name(real_captures, "rxe_cm_write_read")).flows
    gsi = flows[flows["dest_qp"] == 1]
    assert set(gsi["transport"]) == {"UD"} and (gsi["peer_qp"] == 1).all()


@pytest.mark.parametrize("name", GOLDEN_CAPTURES)
def test_golden_summary(real_captures: list[Path], name: str) -> None:
    summary = json.loads(json.dumps(analyze(_by_name(real_captures, name)).summary()))
    golden = GOLDEN / f"{name}.summary.json"
    if os.environ.get("ROCETRACE_REGEN_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
        pytest.skip(f"regenerated {golden.name}")
    assert golden.exists(), f"no golden {golden.name}: run with ROCETRACE_REGEN_GOLDEN=1"
    assert summary == json.loads(golden.read_text())
