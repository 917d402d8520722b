"""Each analysis on small hand-made packet tables: what the protocol says must come out."""

from __future__ import annotations

import pytest
from analysis_builder import A, B, ack, at, cnp, nak, packet_table, req, rnr

from rocetrace.analysis.api import parse_link_speed
from rocetrace.analysis.episodes import ack_timeout_estimate
from rocetrace.analysis.pipeline import analyze_packets


def run(rows: list[dict], step_ns: int = 1000):  # type: ignore[no-untyped-def]
    return analyze_packets(packet_table(at(rows, step_ns=step_ns)))


def flow(a, src: str = A):  # type: ignore[no-untyped-def]
    return a.flows.set_index("src_ip").loc[src]


def test_unwrap_and_running_max_cross_the_psn_wrap() -> None:
    """PSNs are 24-bit: 0xFFFFFF after 1 goes back (a resend), 2 after it is new data."""
    a = run([req(p) for p in (0xFFFFFE, 0xFFFFFF, 0, 1, 0xFFFFFF, 2)])
    assert a.packets["retransmitted"].tolist() == [False, False, False, False, True, False]
    assert (flow(a)["psn_gaps"], flow(a)["retransmitted_packets"]) == (0, 1)


def test_clean_flow_across_wrap_with_coalesced_ack() -> None:
    rows = [req(p) for p in range(0xFFFFFC, 0x1000004)] + [ack(0x1000003)]
    a = run(rows)
    f = flow(a)
    assert (f["retransmitted_packets"], f["psn_gaps"], f["retransmission_mode"]) == (0, 0, "none")
    assert f["peer_qp"] == 0x34 and flow(a, B)["role"] == "responder"


def test_go_back_n_after_nak() -> None:
    rows = [req(p) for p in range(100, 110)] + [nak(105)] + [req(p) for p in range(105, 112)]
    a = run(rows)
    ep = a.retransmissions.iloc[0]
    assert (ep["trigger"], ep["nak_psn"], ep["start_psn"], ep["packets"], ep["mode"]) == (
        "nak", 105, 105, 5, "go-back-n")  # fmt: skip
    assert flow(a)["naks_psn_sequence_error"] == 1 and flow(a)["retransmitted_packets"] == 5
    assert "psn_sequence_error" in set(a.findings["code"])


def test_receiver_sees_gap_then_recovered_loss() -> None:
    rows = [req(p) for p in (1, 2, 4, 5)] + [nak(3)] + [req(p) for p in (3, 4, 5, 6)]
    f = flow(run(rows))
    assert (f["psn_gaps"], f["retransmitted_packets"]) == (1, 3)


def test_go_back_0_restarts_from_message_start() -> None:
    msg = [req(10, "WRITE_FIRST")] + [req(p, "WRITE_MIDDLE") for p in range(11, 15)]
    rows = [*msg, nak(13), *msg]
    ep = run(rows).retransmissions.iloc[0]
    assert (ep["mode"], ep["start_psn"], ep["nak_psn"]) == ("go-back-0", 10, 13)


def test_livelock_finding_after_repeated_restarts() -> None:
    msg = [req(10, "WRITE_FIRST")] + [req(p, "WRITE_MIDDLE") for p in range(11, 15)]
    rows = msg + [r for k in range(3) for r in (nak(12 + k % 2), *msg)]
    a = run(rows)
    assert (a.retransmissions["mode"] == "go-back-0").sum() == 3
    assert "go_back_0_livelock" in set(a.findings["code"])


def test_selective_repeat_resends_lost_psn_and_window_tail() -> None:
    rows = [req(p, "WRITE_MIDDLE") for p in range(0, 10)] + [nak(3), req(3, "WRITE_MIDDLE")]
    rows += [req(9, "WRITE_MIDDLE"), req(10, "WRITE_MIDDLE")]
    ep = run(rows).retransmissions.iloc[0]
    assert (ep["mode"], ep["packets"]) == ("selective-repeat", 2)


def test_tail_loss_is_a_timeout_with_ack_timeout_estimate() -> None:
    rows = [req(p) for p in range(0, 4)] + [ack(2)]
    rows = [*at(rows), req(3) | {"ts_ns": 1000000000000 + 4000 + 1050000}]
    a = analyze_packets(packet_table(rows))
    ep = a.retransmissions.iloc[0]
    assert (ep["trigger"], ep["mode"], ep["start_psn"]) == ("timeout", "go-back-n", 3)
    f = flow(a)
    assert f["timeouts"] == 1 and f["ack_timeout_exp"] == 8  # 4.096 us * 2^8 = 1.05 ms
    assert "timeout_retransmission" in set(a.findings["code"])


def test_nak_kinds_by_syndrome_code_and_stale_naks() -> None:
    """Each NAK code is its own kind (codes 5-31 are reserved) and is counted on the flow it
    refuses; a NAK of a PSN already acknowledged is stale."""
    codes = (1, 2, 3, 4, 9)
    naks = [nak(12 + k, code) for k, code in enumerate(codes)]
    rows = [*(req(p) for p in range(10, 20)), ack(15), *naks]
    a = run(rows)
    assert a.naks["kind"].tolist() == [
        "invalid_request", "remote_access_error", "remote_operational_error",
        "invalid_rd_request", "reserved",
    ]  # fmt: skip
    assert a.naks["stale"].tolist() == [True, True, True, True, False]  # 16 is not acked yet
    f = flow(a)
    kinds = ("invalid_request", "remote_access_error", "remote_operational_error")
    assert [f[f"naks_{k}"] for k in (*kinds, "psn_sequence_error")] == [1, 1, 1, 0]
    assert a.naks["flow_id"].tolist() == [f["flow_id"]] * 5 and a.naks["rnr_timer_us"].isna().all()


def test_rnr_nak_retry_after_timer() -> None:
    rows = [req(0), rnr(0, timer=14), req(0)]
    a = run(rows, step_ns=500_000)
    assert a.naks.iloc[0]["rnr_timer_us"] == 1280.0  # IBTA table 45, code 14
    ep = a.retransmissions.iloc[0]
    assert (ep["trigger"], ep["delay_s"]) == ("rnr", 0.0005)


def test_read_request_spans_response_psns() -> None:
    read = req(100, "READ_REQUEST", reth_dma_length=3000)
    resp = [ack(100 + k, opcode=op, payload_len=1024) for k, op in enumerate((0x0D, 0x0E, 0x0F))]
    a = run([read, *resp, req(103, "WRITE_ONLY"), ack(103)])
    assert a.flows["psn_gaps"].sum() == 0 and a.flows["retransmitted_packets"].sum() == 0
    assert flow(a)["peer_qp"] == 0x34 and flow(a)["mtu"] == 1024


def test_read_response_loss_is_reissued_on_the_response_flow() -> None:
    read = req(100, "READ_REQUEST", reth_dma_length=4096)
    first = ack(100, opcode=0x0D, payload_len=1024)
    later = [ack(102, opcode=0x0E), ack(103, opcode=0x0F)]
    again = [ack(101, opcode=0x0D), ack(102, opcode=0x0E), ack(103, opcode=0x0F)]
    a = run([read, first, *later, req(101, "READ_REQUEST", reth_dma_length=3072), *again])
    ep = a.retransmissions.iloc[0]
    assert (ep["src_ip"], ep["trigger"], ep["start_psn"], ep["packets"]) == (
        B,
        "read_reissue",
        101,
        3,  # 101 was never seen, but it is not beyond the highest PSN (103) any more
    )
    assert flow(a, B)["psn_gaps"] == 1


def test_cnp_pairs_with_throttled_flow_and_ce() -> None:
    rows = [req(0, ecn=3), req(1), ack(1), cnp(), req(2), cnp(), req(3, ecn=3), cnp()]
    a = run(rows)
    f = flow(a)
    assert (f["ecn_ce_packets"], f["cnps"], f["cnps_without_ce"]) == (2, 3, 1)
    assert a.cnps["ce_before"].tolist() == [True, False, True]
    assert "cnp_without_ce" in set(a.findings["code"])


def test_cnp_in_data_class_is_reported() -> None:
    a = run([req(0), ack(0), cnp(dscp=26)])
    assert "cnp_priority" in set(a.findings["code"])


def test_ecn_not_capable_and_sport_collision() -> None:
    rows = [req(0, ecn=0, qp=7), req(0, ecn=0, qp=8), ack(0, qp=70), ack(0, qp=80)]
    a = run(rows)
    codes = set(a.findings["code"])
    assert {"ecn_not_capable", "udp_sport_collision"} <= codes
    assert a.udp_sports.iloc[0]["colliding_qps"] == 2


def test_pfc_storm_and_pause_time() -> None:
    quanta = {f"pfc_quanta_{p}": 0 for p in range(8)}
    pause = {"encap": "pfc", "src_mac": "aa:bb:cc:dd:ee:ff", "pfc_class_enable": 1 << 3} | quanta
    rows = [pause | {"pfc_quanta_3": 0xFFFF, "ts_ns": k * 300_000} for k in range(400)]
    rows.append(pause | {"ts_ns": 400 * 300_000})
    a = analyze_packets(packet_table(rows))
    s = a.summary()["pfc"]
    assert (s["frames"], s["pause_frames"], s["resume_frames"]) == (401, 400, 1)
    p3 = s["by_priority"]["3"]
    assert p3["quanta_total"] == 400 * 0xFFFF
    assert p3["paused_s"] == pytest.approx(0.12)  # each pause held until the next frame
    assert "pfc_storm" in set(a.findings["code"])


def test_capture_drop_gap_is_not_a_loss() -> None:
    a = run([req(p) for p in (0, 1, 2, 5, 6)] + [ack(6)])
    assert flow(a)["psn_gaps"] == 2 and flow(a)["retransmitted_packets"] == 0
    assert "capture_gap" in set(a.findings["code"])


def test_summary_contract_keys_and_json_types() -> None:
    s = run([req(0), ack(0)]).summary()
    assert s["schema"] == "rocetrace.summary/2"
    assert {"capture", "flows", "retransmissions", "pfc", "findings"} <= set(s)
    f = s["flows"][0]
    keys = {"src_ip", "dst_ip", "dest_qp", "peer_qp", "role", "packets", "bytes", "first_psn",
            "last_psn", "retransmitted_packets", "psn_gaps", "naks", "retransmission_mode",
            "timeouts", "ecn_ce_packets", "cnps", "cnps_without_ce"}  # fmt: skip
    assert keys <= set(f)
    assert all(type(f[k]) is int for k in ("dest_qp", "peer_qp", "packets", "first_psn"))


def test_ack_timeout_estimate_and_link_speed() -> None:
    assert ack_timeout_estimate(1.05e-3) == (8, 4.096e-6 * 256)
    assert parse_link_speed("100G") == 100e9 and parse_link_speed("25Gb/s") == 25e9
    with pytest.raises(ValueError):
        parse_link_speed("fast")
