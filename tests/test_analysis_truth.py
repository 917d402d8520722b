"""The analysis against the generator's ground truth: every preset and random scenario mixes
give exactly the truth, field by field (issue 4's summary contract)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rocetrace.analysis.api import analyze
from rocetrace.generate import PRESETS, Loss, generate

FLOW_FIELDS = (
    "peer_qp", "role", "packets", "bytes", "first_psn", "last_psn", "retransmitted_packets",
    "psn_gaps", "naks", "retransmission_mode", "timeouts", "ecn_ce_packets", "cnps",
    "cnps_without_ce",
)  # fmt: skip
EPISODE_FIELDS = (
    "src_ip", "dst_ip", "dest_qp", "trigger", "nak_psn", "start_psn", "packets", "mode",
    "mode_certain", "mode_basis",
)  # fmt: skip
CAPTURE_FIELDS = (
    "packets", "roce_packets", "non_roce_packets", "malformed_packets", "truncated_packets",
    "incomplete_tail",
)  # fmt: skip


def _key(f: dict[str, Any]) -> tuple[str, str, int]:
    return f["src_ip"], f["dst_ip"], f["dest_qp"]


def differences(got: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    """Every disagreement between a summary and a truth sidecar, as readable lines."""
    out = []
    for k in CAPTURE_FIELDS:
        if got["capture"][k] != truth["capture"][k]:
            out.append(f"capture.{k}: got {got['capture'][k]}, truth {truth['capture'][k]}")
    mine, real = {_key(f): f for f in got["flows"]}, {_key(f): f for f in truth["flows"]}
    if set(mine) != set(real):
        out.append(
            f"flow keys: extra {sorted(set(mine) - set(real))}, "
            f"missing {sorted(set(real) - set(mine))}"
        )
    for key in sorted(set(mine) & set(real)):
        out += [
            f"{key}.{k}: got {mine[key][k]}, truth {real[key][k]}"
            for k in FLOW_FIELDS
            if mine[key][k] != real[key][k]
        ]
    order = lambda e: (e.get("ts_ns", 0), e["src_ip"], e["dst_ip"], e["dest_qp"])  # noqa: E731
    out += _episode_differences(
        sorted(got["retransmissions"], key=order), sorted(truth["retransmissions"], key=order)
    )
    out += _pfc_differences(got["pfc"], truth["pfc"])
    return out


def _episode_differences(got: list[dict[str, Any]], truth: list[dict[str, Any]]) -> list[str]:
    if len(got) != len(truth):
        return [f"episodes: got {len(got)}, truth {len(truth)}: {got} vs {truth}"]
    out = []
    for i, (a, b) in enumerate(zip(got, truth, strict=True)):
        out += [
            f"episode {i}.{k}: got {a[k]}, truth {b[k]}" for k in EPISODE_FIELDS if a[k] != b[k]
        ]
        if abs(a["delay_s"] - b["delay_s"]) > 2e-9 or a["ts_ns"] != b.get("ts_ns", a["ts_ns"]):
            out.append(
                f"episode {i} delay/ts: got {a['delay_s']}/{a['ts_ns']}, "
                f"truth {b['delay_s']}/{b.get('ts_ns')}"
            )
    return out


def _pfc_differences(got: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    out = [f"pfc.{k}" for k in ("frames", "pause_frames", "resume_frames") if got[k] != truth[k]]
    for p, t in truth["by_priority"].items():
        g = got["by_priority"].get(p, {})
        for k in ("pause_frames", "resume_frames", "quanta_total"):
            if g.get(k) != t[k]:
                out.append(f"pfc[{p}].{k}: got {g.get(k)}, truth {t[k]}")
        if abs(g.get("paused_s", -1) - t["paused_s"]) > 1e-6:
            out.append(f"pfc[{p}].paused_s: got {g.get('paused_s')}, truth {t['paused_s']}")
    return out


def _missing_findings(got: dict[str, Any], truth: dict[str, Any]) -> list[str]:
    codes = {(f["code"], f["flow"]) for f in got["findings"]} | {
        (f["code"], None) for f in got["findings"]
    }
    return [
        f"finding {f['code']} ({f['flow']})"
        for f in truth["findings"]
        if f["certain"] and (f["code"], f["flow"]) not in codes
    ]


def run(tmp_path: Path, scenario: str, seed: int, **overrides: Any) -> tuple[dict, dict]:
    path = tmp_path / f"{scenario}-{seed}.pcap"
    truth = generate(scenario, path, seed=seed, **overrides)
    return analyze(path).summary(), truth.data


# Generator presets whose story the analysis does not read yet. Strict: the mark must go
# when the analysis learns it.
ANALYSIS_GAPS = {"reorder": "late packets read as resends and timeouts: reordering is not loss"}


@pytest.mark.parametrize(
    "scenario",
    [
        pytest.param(p, marks=pytest.mark.xfail(strict=True, reason=ANALYSIS_GAPS[p]))
        if p in ANALYSIS_GAPS
        else p
        for p in PRESETS
        if p != "bulk"
    ],
)
def test_preset_matches_truth(tmp_path: Path, scenario: str) -> None:
    got, truth = run(tmp_path, scenario, seed=1)
    assert differences(got, truth) == []
    assert _missing_findings(got, truth) == []


def test_bulk_preset_matches_truth(tmp_path: Path) -> None:
    got, truth = run(tmp_path, "bulk", seed=2, messages=4, message_size=8192)
    assert differences(got, truth) == []


@pytest.mark.parametrize("vantage", ["sender", "receiver", "mirror"])
@pytest.mark.parametrize("scenario", ["gbn-loss", "selective-repeat", "read-loss", "tail-timeout"])
def test_every_vantage_point(tmp_path: Path, scenario: str, vantage: str) -> None:
    got, truth = run(tmp_path, scenario, seed=3, vantage=vantage)
    assert differences(got, truth) == []


@st.composite
def scenario_mix(draw: st.DrawFn) -> dict[str, Any]:
    """A random scenario: ops, policy, vantage, QPs, PSN wrap and a random loss pattern."""
    ops = draw(
        st.lists(st.sampled_from(["write", "send", "read", "write_imm"]), min_size=1, max_size=3)
    )
    start = draw(st.sampled_from([None, 0xFFFFF0, 0xFFFFFF, 100]))
    loss = draw(
        st.one_of(
            st.builds(Loss, rate=st.floats(0.005, 0.05)),
            st.builds(Loss, every=st.integers(17, 60)),
            st.builds(
                Loss,
                rate=st.floats(0.01, 0.05),
                direction=st.just("response"),
                kind=st.sampled_from(["ack", "read_response", "any"]),
            ),
        )
    )
    return {
        "ops": tuple(ops),
        "recovery": draw(st.sampled_from(["go-back-n", "go-back-0", "selective-repeat"])),
        "vantage": draw(st.sampled_from(["sender", "receiver", "mirror"])),
        # Several QPs with one fixed start PSN share a PSN space: real NICs draw each QP's
        # start PSN at random, and pairing by PSN can only guess then (see the xfail below).
        "qps": 1 if start is not None else draw(st.integers(1, 3)),
        "messages": draw(st.integers(2, 6)),
        "message_size": draw(st.sampled_from([1024, 4096, 8192])),
        "start_psn": start,
        "losses": (loss,),
        "max_packets": 3000,
    }


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mix=scenario_mix(), seed=st.integers(0, 1000))
@example(  # found by CI: selective repeat resending PSNs 4 and 7 of 4..7 (half the range)
    mix={
        "ops": ("write",),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 3,
        "message_size": 8192,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=3,
)
@example(  # selective repeat whose second resend (the last PSN sent) was lost again: the
    # receiver's capture shows one resend, which go-back-N would also send (uncertain mode)
    mix={
        "ops": ("write",),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 4,
        "messages": 4,
        "message_size": 8192,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(every=17),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # an ACK lost after the receiver's capture: a timeout restart below what the
    # capture saw acknowledged fits go-back-0 as well (uncertain, host default go-back-N)
    mix={
        "ops": ("write",),
        "recovery": "go-back-n",
        "vantage": "receiver",
        "qps": 1,
        "messages": 3,
        "message_size": 1024,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.046875, direction="response", kind="ack"),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # back-to-back one-packet selective repeats, one per NAK, are separate episodes
    mix={
        "ops": ("write", "send"),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 3,
        "message_size": 4096,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # selective repeat resending 2 of 3 PSNs: a go-back-N that lost one resend looks the same
    mix={
        "ops": ("write",),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 6,
        "message_size": 1024,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # overlapping READ re-issues: the responder answers the first one in full before
    # the second, and a timeout re-issue's answer comes after a long silence
    mix={
        "ops": ("read",),
        "recovery": "go-back-n",
        "vantage": "sender",
        "qps": 2,
        "messages": 2,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.03125, direction="response", kind="read_response"),),
        "max_packets": 3000,
    },
    seed=300,
)
@example(  # go-back-0, then a timeout restart at the redone message's first PSN: the NAK
    # acknowledged nothing of that message (the requester redid it), so it is go-back-N
    mix={
        "ops": ("write",),
        "recovery": "go-back-0",
        "vantage": "sender",
        "qps": 3,
        "messages": 3,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(every=26),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # a lost READ response seen at the receiver: the requester re-issues that READ and
    # resends the later READ right behind it (one go-back-N run): both are read re-issues
    mix={
        "ops": ("read",),
        "recovery": "go-back-n",
        "vantage": "receiver",
        "qps": 1,
        "messages": 2,
        "message_size": 4096,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125, direction="response", kind="read_response"),),
        "max_packets": 3000,
    },
    seed=25,
)
@example(  # a READ re-issued after a timeout: no go-back-0 doubt (only requests restart)
    mix={
        "ops": ("write", "read"),
        "recovery": "go-back-n",
        "vantage": "sender",
        "qps": 1,
        "messages": 4,
        "message_size": 8192,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125, direction="response", kind="read_response"),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # a timeout resend 1 ms after the NAK episode's last resend, PSNs contiguous:
    # a new episode (the ACK timer fired), not more of the NAK's
    mix={
        "ops": ("write",),
        "recovery": "go-back-n",
        "vantage": "receiver",
        "qps": 1,
        "messages": 3,
        "message_size": 1024,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=25,
)
@example(  # a SEND go-back-N that an ACK overtook (it skips to the first unacked PSN: no
    # selective skip), then cut by a WRITE's selective repeat: its rest resumes as a run of
    # its own, with no NAK of its own in the capture (trigger unknown)
    mix={
        "ops": ("write", "send"),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 3,
        "message_size": 8192,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # NAKs of PSNs 2 and 3 both seen before the first resend: resends 2, 3 are two
    # go-back-N episodes, each with the NAK of its own start PSN
    mix={
        "ops": ("send", "write"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 1,
        "messages": 2,
        "message_size": 4096,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=156,
)
@example(  # a timeout restart at a PSN NAKed long before: that NAK is not new (exact ns)
    mix={
        "ops": ("write", "send", "send"),
        "recovery": "go-back-n",
        "vantage": "sender",
        "qps": 1,
        "messages": 5,
        "message_size": 4096,
        "start_psn": 0xFFFFFF,
        "losses": (Loss(rate=0.04268114401947871),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # go-back-0 whose resend of the message's FIRST was lost before the receiver's
    # capture: the NAK acknowledged only what precedes the message (its FIRST, seen in the
    # original sending), so a later timeout restart at that FIRST is a certain go-back-N
    mix={
        "ops": ("write",),
        "recovery": "go-back-0",
        "vantage": "receiver",
        "qps": 1,
        "messages": 5,
        "message_size": 4096,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # NAKs of 16777215 and 8 both seen before the first resend, the second 6 ns late
    # behind an ACK: each resend answers its own NAK (the shortest reaction time the flow
    # shows, not its first answer's, which waited for the wire); then one-packet resends
    # 9..16 each answer a NAK seen long before; a go-back-N rest resumes at the first
    # unacked PSN 88 ns after a selective repeat (no timer fires that soon: unknown)
    mix={
        "ops": ("write_imm", "send"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 1,
        "messages": 6,
        "message_size": 8192,
        "start_psn": 0xFFFFF0,
        "losses": (Loss(rate=0.03761076545851631),),
        "max_packets": 3000,
    },
    seed=25,
)
@example(  # a mirror sees an ACK before the go-back-N resend that skips to it passes, but the
    # sender knew only the ACKs seen a reaction time earlier: no selective-repeat skip
    mix={
        "ops": ("write_imm", "write", "send"),
        "recovery": "selective-repeat",
        "vantage": "mirror",
        "qps": 1,
        "messages": 6,
        "message_size": 4096,
        "start_psn": 100,
        "losses": (Loss(rate=0.017068616332763364),),
        "max_packets": 3000,
    },
    seed=1025,
)
@example(  # a go-back-N rest resumed below what the receiver had acknowledged, too soon for
    # the sender to know it: no go-back-0 doubt
    mix={
        "ops": ("write", "send", "write_imm"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 1,
        "messages": 5,
        "message_size": 8192,
        "start_psn": 0xFFFFFF,
        "losses": (Loss(rate=0.027726459737768334),),
        "max_packets": 3000,
    },
    seed=1247,
)
@example(  # go-back-0 whose redone FIRST was lost before the receiver's capture: the resend
    # starts at the NAKed PSN, but the timer later restarts at the FIRST, which a go-back-N
    # requester holds acknowledged by that NAK: the NAK's episode was a go-back-0
    mix={
        "ops": ("write", "read"),
        "recovery": "go-back-0",
        "vantage": "receiver",
        "qps": 1,
        "messages": 5,
        "message_size": 4096,
        "start_psn": None,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=43,
)
@example(  # a go-back-N whose last resend was lost before the receiver's capture, then new
    # data: it stopped short, but 16 resends in a row are no selective repeat
    mix={
        "ops": ("write", "write", "read"),
        "recovery": "go-back-n",
        "vantage": "receiver",
        "qps": 1,
        "messages": 6,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(every=17),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # at the sender a NAK is answered at once, by large and small resends alike: a
    # READ re-issued 1 ms after a go-back-0 took no NAK the sender had before that episode
    mix={
        "ops": ("write", "read", "send"),
        "recovery": "go-back-0",
        "vantage": "sender",
        "qps": 3,
        "messages": 5,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.046998894161551),),
        "max_packets": 3000,
    },
    seed=6550,
)
@example(  # a mirror: NAKs 2775991..95 within 200 ns, each answered a reaction time later
    # (a READ request passes the mirror 81 ns sooner than a full frame: reaction times per
    # resend size); the selective repeat's READ resend cuts a SEND go-back-N, whose own
    # resend of that READ right behind it is its rest (trigger unknown), no READ re-issue
    mix={
        "ops": ("send", "read", "write_imm"),
        "recovery": "selective-repeat",
        "vantage": "mirror",
        "qps": 2,
        "messages": 5,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(every=17),),
        "max_packets": 3000,
    },
    seed=5405,
)
@example(  # a mirror with NAKs every packet time: a READ request passes it sooner than a
    # full frame, so each resend size has its own reaction time (a small one never slower);
    # a NAK the sender could not have had yet is no trigger
    mix={
        "ops": ("send", "read", "write_imm"),
        "recovery": "selective-repeat",
        "vantage": "mirror",
        "qps": 1,
        "messages": 4,
        "message_size": 8192,
        "start_psn": 0xFFFFFF,
        "losses": (Loss(rate=0.04832392755757061),),
        "max_packets": 3000,
    },
    seed=2736,
)
@example(  # two go-back-0 redos of one message, each redone FIRST lost before the receiver's
    # capture: the second answers the newer NAK, not the NAK of its own PSN, which the
    # first redo answered
    mix={
        "ops": ("send",),
        "recovery": "go-back-0",
        "vantage": "receiver",
        "qps": 2,
        "messages": 6,
        "message_size": 4096,
        "start_psn": None,
        "losses": (Loss(rate=0.04158597900646963),),
        "max_packets": 3000,
    },
    seed=5570,
)
@example(  # a timer restart 1 ms after a NAK of its PSN tells nothing of the reaction time
    mix={
        "ops": ("write_imm", "write", "read"),
        "recovery": "go-back-n",
        "vantage": "receiver",
        "qps": 1,
        "messages": 5,
        "message_size": 8192,
        "start_psn": 100,
        "losses": (Loss(every=17),),
        "max_packets": 3000,
    },
    seed=5715,
)
@example(  # a busy sender: every NAK answer waits for the wire (64-66 ns behind the NAK),
    # so the reaction may be anything up to that; a NAK 6 ns behind an ACK is answered 59 ns
    # later by a jump back to its PSN, which starts a selective repeat of its own, and the
    # go-back-N it cut resumes after it (trigger unknown: one NAK triggers one episode)
    mix={
        "ops": ("send", "write"),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 4,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # the same across the PSN wrap
    mix={
        "ops": ("send", "write"),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 5,
        "message_size": 8192,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # a selective repeat's skip to the last PSN sent, right behind an ACK of the PSN
    # before it: a go-back-N that ACK overtook sends the same, so the mode is not certain
    mix={
        "ops": ("write", "write", "read"),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 3,
        "messages": 6,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.0390625),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # at the receiver a go-back-N resends 16777215, then skips to 9: the ACK of 7 had
    # reached the sender and its resend of 8 was lost on the way (a hole of one frame time
    # before 9), so the skip is no selective repeat
    mix={
        "ops": ("write", "send"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 1,
        "messages": 4,
        "message_size": 8192,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=1,
)
@example(  # at the receiver a selective repeat's second resend (READ request 7938808) was
    # lost; its NAK is answered 2,026 ns later, sooner than the one earlier small answer
    # (2,108 ns), whose NAK a switch held 85 ns behind a READ response: a new episode
    mix={
        "ops": ("write", "write", "read"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 3,
        "messages": 6,
        "message_size": 4096,
        "start_psn": None,
        "losses": (Loss(rate=0.03125),),
        "max_packets": 3000,
    },
    seed=1,
)
@example(  # at the receiver a selective repeat (16777211, 3) cuts a go-back-N that had sent
    # 16777211; its rest resumes at 16777212 right after, 2,092 ns after NAK 16777212: sooner
    # than any answer (2,188 ns idle), so no answer to that NAK; the next resend of 16777212
    # is (the rest's trigger is unknown)
    mix={
        "ops": ("write", "send"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 1,
        "messages": 5,
        "message_size": 4096,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.046875),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # a mirror and a busy sender: every NAK answer goes out right behind the sender's
    # previous frame, 1,160 ns after its NAK; the sender had not chosen it before that frame
    # began, so the reaction is at least 1,072 ns, and a resend of a NAKed PSN 455 ns after
    # the NAK is the go-back-N going on (the NAK's answer comes 1,160 ns after it)
    mix={
        "ops": ("write", "send"),
        "recovery": "selective-repeat",
        "vantage": "mirror",
        "qps": 2,
        "messages": 5,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.03461275707257803),),
        "max_packets": 3000,
    },
    seed=8645,
)
@example(  # a mirror: the one READ request that answers a NAK went out 7 ns behind the
    # go-back-N's own resend of that READ (1,088 ns after the NAK), so the reaction is over
    # 1,088 ns and that resend is no answer; full-size answers of an idle sender (1,094 ns)
    # bound full-size resends, not small ones
    mix={
        "ops": ("write_imm", "send", "read"),
        "recovery": "selective-repeat",
        "vantage": "mirror",
        "qps": 1,
        "messages": 6,
        "message_size": 4096,
        "start_psn": 16777200,
        "losses": (Loss(rate=0.0479923370126054),),
        "max_packets": 3000,
    },
    seed=9037,
)
@example(  # at the receiver a switch holds the sender's small frames behind its full-size
    # ones: a READ request answering a NAK 7 ns behind the selective repeat's tail (the same
    # READ) had waited 88 ns, not 7, so another READ request 2,094 ns after its NAK still
    # answers it (a new episode); and of the two resends of that READ, the tail was chosen
    # before its NAK came in, the second answers it
    mix={
        "ops": ("write", "write", "read"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 3,
        "messages": 6,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.0390625),),
        "max_packets": 3000,
    },
    seed=0,
)
@example(  # a mirror, two QPs on one port: NAKs of a SEND PSN (go-back-N) and of a WRITE
    # PSN (selective repeat) wait while the other QP holds the wire, and an ACK covers the
    # WRITE PSN meanwhile; the selective repeat's tail goes first, 1,594 ns after its NAK
    # (an answer right behind another QP's frame says nothing of when it was chosen), then
    # the go-back-N from the first unacknowledged PSN answers the earlier NAK
    mix={
        "ops": ("write", "send"),
        "recovery": "selective-repeat",
        "vantage": "mirror",
        "qps": 2,
        "messages": 4,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.03341270347455767),),
        "max_packets": 3000,
    },
    seed=9058,
)
@example(  # at the sender every resend of a SEND go-back-N is NAKed in turn; the last one
    # (PSN 30) stops short of the WRITE PSNs sent before and new data follows, but an ACK of
    # them all came in between: a go-back-N an ACK overtook stops there too (no mode shown)
    mix={
        "ops": ("send", "write", "send"),
        "recovery": "selective-repeat",
        "vantage": "sender",
        "qps": 1,
        "messages": 6,
        "message_size": 8192,
        "start_psn": 16777215,
        "losses": (Loss(rate=0.013146825487669142),),
        "max_packets": 3000,
    },
    seed=10291,
)
@example(  # at the receiver a go-back-N, cut by a selective repeat, resumes at 23 one frame
    # time late (its resend of 22 lost on the way): the rest of the cut run, 1,916 ns after
    # NAK 23, sooner than an idle answer (2,188 ns), so no answer to it; the next resend of
    # 23 is (not a go-back-0 redo for NAK 28 of the same message)
    mix={
        "ops": ("write_imm", "send"),
        "recovery": "selective-repeat",
        "vantage": "receiver",
        "qps": 1,
        "messages": 5,
        "message_size": 8192,
        "start_psn": 16777215,
        "losses": (Loss(rate=0.03512452821629062),),
        "max_packets": 3000,
    },
    seed=10734,
)
@example(  # at the receiver, two QPs, go-back-N: a NAK's answer went out behind a train of
    # the other QP's frames with one lost on the way (a hole of exactly one frame time): the
    # train runs on through the hole, so that answer bounds the reaction at nothing near its
    # 2,692 ns, and a restart at 664026 2,276 ns after NAK 664025 is that NAK's go-back-N
    # (its resend of 664025 lost too), not a rest with no trigger
    mix={
        "ops": ("send",),
        "recovery": "go-back-n",
        "vantage": "receiver",
        "qps": 2,
        "messages": 4,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.046781381344959946),),
        "max_packets": 3000,
    },
    seed=12972,
)
@example(  # READ responses lost at the requester: after a timeout re-issue, a second
    # re-issue inside the PSNs the first asked for (response 153 missing between 152 and 154)
    # answers that gap: a READ re-issue of its own, not the first one's go-back-N rest
    mix={
        "ops": ("write", "read"),
        "recovery": "go-back-n",
        "vantage": "sender",
        "qps": 2,
        "messages": 2,
        "message_size": 8192,
        "start_psn": None,
        "losses": (Loss(rate=0.046875, direction="response", kind="any"),),
        "max_packets": 3000,
    },
    seed=510,
)
def test_random_scenarios_match_truth(tmp_path: Path, mix: dict[str, Any], seed: int) -> None:
    got, truth = run(tmp_path, "clean", seed=seed, **mix)
    assert differences(got, truth) == []
