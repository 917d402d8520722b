"""`pfc-recovery`: the switch pauses a requester shortly after dropping its packet, so the
NAK arrives or the resend waits while the sender is paused; the ACK timer never fires. Checked
on the simulation's own rows and ledger over many seeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rocetrace.generate import generate
from rocetrace.generate.presets import preset
from rocetrace.generate.sim import SimResult, Simulation
from rocetrace.generate.wire_table import PFC, ROLE_REQUEST

SEEDS = range(100)


@pytest.fixture(scope="module")
def results() -> list[SimResult]:
    return [Simulation(preset("pfc-recovery"), seed).run() for seed in SEEDS]


def test_no_timeout_in_a_hundred_seeds_and_every_message_completes(
    results: list[SimResult],
) -> None:
    assert {e.trigger for res in results for e in res.episodes} == {"nak"}
    assert {m.status for res in results for m in res.messages} == {"completed"}
    assert sum(len(res.ledger.pauses) for res in results) > 100  # the story happened


def test_each_pause_follows_a_drop_and_holds_the_sender(results: list[SimResult]) -> None:
    sc = preset("pfc-recovery")
    p = sc.pfc_on_loss
    assert p is not None
    held = 0
    for res in results[:30]:
        requests = [r for r in res.rows if r["role"] == ROLE_REQUEST]
        drops = [r for r in requests if r["lost"]]
        for w in res.ledger.pauses:
            assert p.duration_ns[0] <= w.end_ns - w.start_ns <= p.duration_ns[1]
            starts = [r["t_tx"] for r in drops if r["t_tx"] < w.start_ns]
            assert starts and w.start_ns - max(starts) <= p.delay_ns[1] + 2_000  # + the links
            sent = [r["t_tx"] for r in requests if r["src"] == w.host]
            assert not any(w.start_ns <= t < w.end_ns for t in sent)
            frames = [res.rows[i] for i in w.frames]
            assert all(f["kind"] == PFC and f["dst"] == w.host for f in frames)
            quanta = [f[f"pfc_q{p.priority}"] for f in frames]
            assert all(q > 0 for q in quanta[:-1]) and quanta[-1] == 0
        for ep in res.episodes:
            nak_at = res.rows[ep.trigger_row]["t_rx"]
            paused = [w for w in res.ledger.pauses if w.start_ns <= nak_at < w.end_ns]
            resent = [r["t_tx"] for r in requests if r.get("episode") == ep.idx]
            held += bool(paused) and min(resent) >= paused[0].end_ns
    assert held > 5  # NAKs that arrived while the sender was paused waited for the resume


def test_pause_frames_are_captured_on_the_requesters_link(tmp_path: Path) -> None:
    vantages = ("sender", "receiver", "mirror")
    truth = generate("pfc-recovery", tmp_path / "p.pcap", seed=3, vantages=vantages)
    frames = {i for w in truth.data["pfc_windows"] for i in w["frames"]}
    assert frames and all(w["host"] == "10.0.0.1" for w in truth.data["pfc_windows"])
    seen = {v: frames & set(s.wire_ids.tolist()) for v, s in truth.captures.items()}
    assert seen == {"sender": frames, "receiver": set(), "mirror": frames}
    w = truth.wire
    at_sender = truth.captures["sender"]
    mine = np.isin(at_sender.wire_ids, list(frames))
    assert np.all(at_sender.true_ns[mine] == w["t_rx"][at_sender.wire_ids[mine]])
    assert {e["trigger"] for e in truth.nic_episodes} == {"nak"}
