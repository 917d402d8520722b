"""Recovery behaviour of the RC model, read back from captures taken at the sender: the
resend PSN sequence of each mode, PSN wrap, READ re-issue, RNR timer, and model invariants
over random loss patterns (hypothesis)."""

from __future__ import annotations

import itertools
from pathlib import Path

import dpkt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocetrace.generate import Loss, generate
from rocetrace.generate.presets import preset
from rocetrace.generate.sim import Simulation
from rocetrace.psn import PSN_MOD


def request_psns(path: Path, dest_qp: int = 0x0022C0) -> list[int]:
    """PSNs of the request packets (to the responder QP) in capture order."""
    out = []
    with path.open("rb") as fh:
        for _, buf in dpkt.pcap.Reader(fh):
            roce = buf[12:14] == b"\x08\x00" and int.from_bytes(buf[36:38], "big") == 4791
            if roce and int.from_bytes(buf[47:50], "big") == dest_qp and buf[42] != 0x81:
                out.append(int.from_bytes(buf[51:54], "big"))
    return out


def first_resend(psns: list[int]) -> tuple[int, int]:
    """(index of the first PSN not beyond the highest so far, that highest PSN)."""
    highest = psns[0]
    for i, p in enumerate(psns[1:], 1):
        if p <= highest:
            return i, highest
        highest = p
    raise AssertionError("no resend")


def test_go_back_n_resends_from_lost_psn_through_highest_sent(tmp_path: Path) -> None:
    out = tmp_path / "gbn.pcap"
    generate("gbn-loss", out, vantage="sender", mtu=256, message_size=2048)
    psns = request_psns(out)
    i, highest = first_resend(psns)
    assert psns[i : i + highest - 7396 + 1] == list(range(7396, highest + 1))
    assert highest > 7396


def test_go_back_0_restarts_the_message(tmp_path: Path) -> None:
    out = tmp_path / "g0.pcap"
    truth = generate(
        "gbn-loss", out, vantage="sender", recovery="go-back-0", mtu=256, message_size=2560
    )
    psns = request_psns(out)
    i, _ = first_resend(psns)
    first_of_message = 7300 + (7396 - 7300) // 10 * 10  # 10 packets per message
    assert psns[i] == first_of_message
    assert truth.retransmissions[0]["mode"] == "go-back-0"
    assert truth.retransmissions[0]["nak_psn"] == 7396


def test_selective_repeat_resends_lost_psn_and_window_tail(tmp_path: Path) -> None:
    out = tmp_path / "sr.pcap"
    truth = generate("selective-repeat", out, vantage="sender", mtu=256, message_size=2048)
    psns = request_psns(out)
    i, highest = first_resend(psns)
    assert psns[i : i + 2] == [1037, highest]
    assert [e["packets"] for e in truth.retransmissions] == [2, 2]
    assert truth.flows[0]["retransmission_mode"] == "selective-repeat"


def test_send_stays_go_back_n_under_selective_repeat(tmp_path: Path) -> None:
    out = tmp_path / "sr-send.pcap"
    truth = generate("selective-repeat", out, ops=("send",), mtu=256, message_size=2048)
    assert {e["mode"] for e in truth.retransmissions} == {"go-back-n"}


def test_tail_loss_times_out_and_psns_wrap(tmp_path: Path) -> None:
    out = tmp_path / "tail.pcap"
    truth = generate("tail-timeout", out, vantage="sender")
    psns = request_psns(out)
    assert 0xFFFFFF in psns and 0 in psns
    (episode,) = truth.retransmissions
    assert episode["trigger"] == "timeout" and episode["start_psn"] == 0x00000C
    assert abs(episode["delay_s"] - 4.096e-6 * 2**10) < 5e-6
    assert truth.flows[0]["timeouts"] == 1


def test_rnr_retry_waits_for_the_rnr_timer(tmp_path: Path) -> None:
    truth = generate("rnr", tmp_path / "rnr.pcap", vantage="sender")
    assert [e["trigger"] for e in truth.retransmissions] == ["rnr"] * 3
    assert all(60e-6 <= e["delay_s"] < 62e-6 for e in truth.retransmissions)
    assert truth.flows[0]["naks"]["rnr"] == 3


def test_read_loss_reissues_from_missing_psn(tmp_path: Path) -> None:
    truth = generate("read-loss", tmp_path / "read.pcap")
    starts = [e["start_psn"] for e in truth.retransmissions]
    assert starts == [5010, 5027]
    assert {e["trigger"] for e in truth.retransmissions} == {"read_reissue"}
    response = next(f for f in truth.flows if f["role"] == "responder")
    assert response["psn_gaps"] == 2


def test_livelock_never_completes(tmp_path: Path) -> None:
    truth = generate("go-back-0-livelock", tmp_path / "ll.pcap", max_packets=500)
    assert truth.data["messages"].get("completed", 0) == 0
    assert "go_back_0_livelock" in {f["code"] for f in truth.data["findings"]}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rate=st.floats(0.0, 0.08),
    ack_rate=st.floats(0.0, 0.05),
    recovery=st.sampled_from(["go-back-n", "go-back-0", "selective-repeat"]),
    ops=st.sampled_from([("write",), ("send",), ("read",), ("write", "read", "send_imm")]),
    start=st.integers(0, PSN_MOD - 1),
    seed=st.integers(0, 1000),
)
def test_random_losses_keep_model_invariants(rate, ack_rate, recovery, ops, start, seed) -> None:  # type: ignore[no-untyped-def]
    losses = (Loss(rate=rate), Loss(rate=ack_rate, direction="response", kind="any"))
    sc = preset("clean").with_overrides(
        qps=2, messages=6, mtu=256, message_size=1024, ops=ops, recovery=recovery,
        start_psn=start, losses=losses, timeout=6, retry_cnt=7, max_packets=20_000,
    )  # fmt: skip
    res = Simulation(sc, seed).run()
    # every message completes, or the QP gave up after its retries
    statuses = {m.status for m in res.messages}
    assert statuses <= {"completed", "retry_exceeded"}
    for conn in res.conns:
        mine = [m for m in res.messages if m.conn == conn.idx]
        if all(m.status == "completed" for m in mine):
            continue
        assert any(m.status == "retry_exceeded" for m in mine)
    # within an episode the resent PSNs of a go-back run increase
    by_episode: dict[int, list[int]] = {}
    for r in res.rows:
        if r.get("episode", -1) >= 0 and r["role"] == 0:
            by_episode.setdefault(r["episode"], []).append(r["psn"])
    for ep, psns in by_episode.items():
        if res.episodes[ep].mode != "selective-repeat":
            steps = [(b - a) % PSN_MOD for a, b in itertools.pairwise(psns)]
            assert all(0 < s < PSN_MOD // 2 for s in steps), (ep, psns)
