"""Peers that misbehave or share QPs: an MTU disagreement that makes a request reuse a READ
response PSN (mtu-mismatch), a QP pair reused by a new connection (qp-reuse), and both ends
of one QP pair posting requests (bidirectional). Checked on the wire table and the truth."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from cm_oracle import reference_cm_mads

from rocetrace.dissectors.mad import CmAttr
from rocetrace.generate import Loss, generate
from rocetrace.generate.wire_table import ROLE_REQUEST, ROLE_RESPONSE

READ_REQUEST, ACK = 0x0C, 0x11
READ_RESPONSES = (0x0D, 0x0E, 0x0F, 0x10)


def test_mtu_mismatch_reuses_a_response_psn_and_stalls(tmp_path: Path) -> None:
    truth = generate("mtu-mismatch", tmp_path / "m.pcap", seed=1)
    w = truth.wire
    assert [h.get("mtu") for h in truth.data["hosts"]] == [2048, 1024, None]
    (reuse,) = truth.anomalies
    assert (reuse["kind"], reuse["requester_mtu"], reuse["responder_mtu"]) == (
        "psn_reuse", 2048, 1024
    )  # fmt: skip
    read = reuse["read_wire_id"]
    assert w["opcode"][read] == READ_REQUEST and w["dma_len"][read] == 2400
    answers = np.flatnonzero(np.isin(w["opcode"], READ_RESPONSES) & (w["msg"] == w["msg"][read]))
    assert w["psn"][answers].tolist() == [w["psn"][read] + k for k in range(3)]
    assert w["payload_len"][answers].tolist() == [1024, 1024, 352]
    assert w["span"][read] == 2  # the requester counted two response PSNs
    requests = np.flatnonzero(w["role"] == ROLE_REQUEST)
    after_read = requests[requests > read][0]
    assert after_read == reuse["wire_id"] and w["psn"][after_read] == w["psn"][answers[-1]]
    ack = reuse["answer_wire_id"]
    assert w["opcode"][ack] == ACK and w["psn"][ack] == 0xFFFFFF == reuse["answer_psn"]
    responses = np.flatnonzero(w["role"] == ROLE_RESPONSE)
    assert responses.max() == ack  # the responder never answers again: the QP stalls
    assert truth.nic_episodes == [] and truth.data["messages"] == {"completed": 1, "pending": 3}


def test_qp_reuse_two_connections_on_one_qp_pair(tmp_path: Path) -> None:
    out = tmp_path / "q.pcap"
    truth = generate("qp-reuse", out, seed=1, vantage="sender")
    w = truth.wire
    gen0, gen1 = (c for c in truth.data["connections"] if not c["cm_mads"])
    assert (gen0["generation"], gen1["generation"]) == (0, 1)
    same = ("requester_ip", "responder_ip", "requester_qp", "responder_qp")
    assert all(gen0[k] == gen1[k] for k in same) and gen0["start_psn"] != gen1["start_psn"]
    (reuse,) = truth.anomalies
    assert reuse["kind"] == "qp_reuse" and (reuse["conn"], reuse["previous_conn"]) == (1, 0)
    first = reuse["first_wire_id"]
    assert w["conn"][first] == 1 and w["psn"][first] == gen1["start_psn"]
    last_of_gen0 = w["t_rx"][w["conn"] == 0].max()
    assert w["t_tx"][w["conn"] == 1].min() - last_of_gen0 >= 21_000_000
    assert truth.nic_episodes == [] and truth.data["messages"] == {"completed": 8}
    mads = reference_cm_mads(out)  # read back from the file
    kinds = [CmAttr(m.values["mad_attribute_id"]).name for m in mads]
    assert kinds == ["REQ", "REP", "RTU", "DREQ", "DREP"] * 2
    reps = [m.values["cm_starting_psn"] for m, k in zip(mads, kinds, strict=True) if k == "REP"]
    assert reps == [gen0["start_psn"], gen1["start_psn"]]
    at = truth.captures["sender"]
    first_frame = int(np.flatnonzero(at.wire_ids == first)[0]) + 1
    assert mads[7].frame < first_frame  # the new RTU before the new connection's traffic


def test_bidirectional_two_psn_spaces_on_one_qp_pair(tmp_path: Path) -> None:
    truth = generate("bidirectional", tmp_path / "b.pcap", seed=1, vantage="receiver")
    w = truth.wire
    fwd, rev = (c for c in truth.data["connections"] if not c["cm_mads"])
    assert (rev["reverse_of"], fwd["responder_start_psn"]) == (0, rev["start_psn"])
    assert (rev["requester_qp"], rev["responder_qp"]) == (fwd["responder_qp"], fwd["requester_qp"])
    assert truth.data["cm_connections"][0]["responder_starting_psn"] == rev["start_psn"]
    for c in (fwd, rev):
        requests = np.flatnonzero((w["conn"] == c["conn"]) & (w["role"] == ROLE_REQUEST))
        acks = np.flatnonzero((w["conn"] == c["conn"]) & (w["role"] == ROLE_RESPONSE))
        assert w["psn"][requests[0]] == c["start_psn"]
        assert np.all(w["dest_qp"][requests] == c["responder_qp"])
        assert np.all(w["dest_qp"][acks] == c["requester_qp"]) and np.all(w["opcode"][acks] == ACK)
        assert w["psn"][acks[-1]] == w["psn"][requests[-1]]  # each side acknowledged in full
    rev_ops = set(w["opcode"][(w["conn"] == 1) & (w["role"] == ROLE_REQUEST)].tolist())
    assert rev_ops <= {0x00, 0x01, 0x02, 0x04}  # SEND first/middle/last/only
    assert truth.nic_episodes == [] and truth.data["messages"] == {"completed": 12}


def test_bidirectional_loss_on_the_responders_requests(tmp_path: Path) -> None:
    truth = generate(
        "bidirectional", tmp_path / "b.pcap", seed=1,
        losses=(Loss(every=7, conn=1, first_only=True, spare_ack_req=True),),
    )  # fmt: skip
    w = truth.wire
    assert {d["conn"] for d in truth.data["drops"]} == {1}
    eps = truth.nic_episodes
    assert eps and {(e["sender_ip"], e["dest_qp"]) for e in eps} == {("10.0.0.2", 0x11C0)}
    for e in eps:
        assert e["trigger"] == "nak"
        nak = e["trigger_packet"]
        assert w["src"][nak] == 0 and w["dest_qp"][nak] == 0x22C0  # host 1 NAKs host 2's QP
    assert truth.data["messages"] == {"completed": 12}
