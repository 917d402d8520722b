"""Real NIC misbehaviour and capture situations that are no retransmission, rebuilt as
generator scenarios: the analysis reports no resend and names the frame (the truth's
`anomalies`, `connections` and `pfc_windows` say what the simulation did)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from nic_truth import analyzed, grade, seen_at


def _frames(findings: Any, code: str) -> list[int]:
    rows = findings[findings["code"] == code]
    return [int(f) for frames in rows["frames"] for f in frames]


def test_mtu_mismatch_is_a_psn_reuse_naming_both_mtus(tmp_path: Path) -> None:
    """soft-RoCE: the requester counts a READ in its MTU (2048), the responder answers in
    1024; the next request reuses the READ's last response PSN. Nothing is resent."""
    a, truth = analyzed(tmp_path, "mtu-mismatch", 1)
    (reuse,) = [x for x in truth.data["anomalies"] if x["kind"] == "psn_reuse"]
    seen = seen_at(truth)
    assert a.retransmissions.empty and int(a.flows["retransmitted_packets"].sum()) == 0
    frames = _frames(a.findings, "psn_reuse")
    assert seen.frame_of(reuse["wire_id"]) == frames[0]
    assert seen.frame_of(reuse["read_wire_id"]) == frames[1]
    message = a.findings.set_index("code").loc["psn_reuse", "message"]
    assert f"path MTU {reuse['responder_mtu']}" in message
    assert f"path MTU {reuse['requester_mtu']}" in message


def test_qp_reuse_starts_a_new_flow_at_the_new_connection(tmp_path: Path) -> None:
    """A QP number taken again by a new CM connection with a new starting PSN: a new flow
    (its own first PSN), a finding at its first frame, no resend and no gap."""
    a, truth = analyzed(tmp_path, "qp-reuse", 1, cm=True)
    reused = [x for x in truth.data["anomalies"] if x["kind"] == "qp_reuse"]
    assert reused and a.retransmissions.empty
    assert int(a.flows["retransmitted_packets"].sum()) == 0 and int(a.flows["psn_gaps"].sum()) == 0
    starts = {int(p) for p in a.flows["first_psn"]}
    assert {x["start_psn"] for x in reused} <= starts
    seen = seen_at(truth)
    assert {seen.frame_of(x["first_wire_id"]) for x in reused} <= set(
        _frames(a.findings, "qp_reuse")
    )


def test_both_ends_posting_requests_keep_two_psn_spaces(tmp_path: Path) -> None:
    """Both ends of one QP pair send requests: each flow's PSNs are its own requests'
    (the ACKs it carries answer the other end's), and nothing reads as a resend."""
    a, truth = analyzed(tmp_path, "bidirectional", 1)
    conns = truth.data["connections"]
    assert a.retransmissions.empty and int(a.flows["retransmitted_packets"].sum()) == 0
    starts = {c["start_psn"] for c in conns}
    assert starts <= {int(p) for p in a.flows["first_psn"]}
    data = a.flows[a.flows["dest_qp"] != 1]  # QP1 carries the CM MADs
    assert len(data) == 2 and (data["role"] == "requester").all()


def test_reordering_without_resend_is_no_loss(tmp_path: Path) -> None:
    """Packet spraying with an out-of-order responder: late packets, no NAK, no resend:
    reordering, reported as such, with no retransmission episode."""
    a, truth = analyzed(tmp_path, "reorder", 1, responder_ooo=True)
    late = [x for x in truth.data["anomalies"] if x["kind"] == "reordered"]
    seen = seen_at(truth)
    assert late and a.retransmissions.empty
    reported = set(a.anomalies.loc[a.anomalies["code"] == "reordering", "frame"])
    overtaken = {seen.frame_of(x["wire_id"]) for x in late}
    assert reported and reported <= overtaken


@pytest.mark.parametrize("seed", range(100))
def test_pfc_pause_during_recovery_is_no_timeout(tmp_path: Path, seed: int) -> None:
    """The switch pauses the requester right after each loss: the NAK's answer waits for
    the resume. Paused time is no silence: no timeout, every episode the NAK's."""
    a, truth = analyzed(tmp_path, "pfc-recovery", seed)
    g = grade(a, seen_at(truth))
    assert (g.wrong, g.missed, g.false) == ([], [], [])
    assert not (a.retransmissions["trigger"] == "timeout").any()
