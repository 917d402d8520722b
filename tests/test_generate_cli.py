"""`rocetrace generate` through click's CliRunner, the truth sidecar name, samples regeneration,
and a randomized vantage/loss mix whose truth must match an independent recount."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocetrace.cli import cli
from rocetrace.generate import Loss, generate, truth_path

REPO = Path(__file__).resolve().parent.parent


def test_cli_writes_capture_and_truth(tmp_path: Path) -> None:
    out = tmp_path / "demo.pcap"
    args = ["generate", "gbn-loss", "-o", str(out), "--seed", "4", "--mtu", "256", "--message-size",
            "2048", "--vantage", "receiver", "--loss-psns", "7400,0x1CF0"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    truth = json.loads((tmp_path / "demo.truth.json").read_text())
    assert truth["scenario"]["vantage"] == "receiver"
    assert truth["scenario"]["losses"][0]["psns"] == [7400, 0x1CF0]
    assert truth["flows"][0]["psn_gaps"] == 2
    again = tmp_path / "again.pcap"
    assert CliRunner().invoke(cli, [*args[:3], str(again), *args[4:]]).exit_code == 0
    assert again.read_bytes() == out.read_bytes()


def test_cli_rejects_bad_options(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["generate", "nope", "-o", str(tmp_path / "x.pcap")])
    assert result.exit_code == 2
    result = CliRunner().invoke(
        cli, ["generate", "bulk", "-o", str(tmp_path / "x.pcap"), "--loss-every", "5"]
    )
    assert result.exit_code == 2


def test_cli_help_explains_every_preset() -> None:
    from rocetrace.generate import PRESETS

    text = CliRunner().invoke(cli, ["generate", "--help"]).output
    assert all(name in text for name in PRESETS)


def test_pcapng_and_microseconds(tmp_path: Path) -> None:
    a = generate("clean", tmp_path / "a.pcapng", fmt="pcapng", messages=2)
    b = generate("clean", tmp_path / "b.pcap", nanosecond=False, messages=2)
    assert (tmp_path / "a.pcapng").read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    assert (tmp_path / "b.pcap").read_bytes()[:4] == bytes.fromhex("d4c3b2a1")
    assert a.data["capture"]["packets"] == b.data["capture"]["packets"]
    assert b.data["capture"]["first_ts_ns"] % 1000 == 0


def test_truth_path_replaces_extension() -> None:
    assert truth_path("x/out.pcap") == Path("x/out.truth.json")
    assert truth_path("out.pcapng.gz") == Path("out.truth.json")


def test_capture_drops_and_malformed_are_in_the_truth(tmp_path: Path) -> None:
    t = generate("clean", tmp_path / "d.pcap", seed=3, capture_drop_rate=0.05,
                 capture_drop_burst=3, malformed=("bad_icrc", "truncated_bth"))  # fmt: skip
    assert t.data["capture_drops"]
    assert t.data["capture"]["malformed"] == ["bad_icrc", "truncated_bth"]
    assert {"capture_gap", "bad_icrc"} <= {f["code"] for f in t.data["findings"]}


def test_samples_regenerate_bit_for_bit() -> None:
    script = REPO / "samples" / "regenerate.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    vantage=st.sampled_from(["sender", "receiver", "mirror"]),
    recovery=st.sampled_from(["go-back-n", "go-back-0", "selective-repeat"]),
    rate=st.floats(0.0, 0.06),
    before_mirror=st.booleans(),
    ops=st.sampled_from([("write",), ("read",), ("send", "write_imm", "read")]),
    start=st.sampled_from([0, 0xFFFFF0, 12345]),
)
def test_random_mix_truth_matches_capture(
    tmp_path: Path, vantage, recovery, rate, before_mirror, ops, start
) -> None:  # type: ignore[no-untyped-def]
    from test_generate_presets import check_truth

    out = tmp_path / "mix.pcap"
    truth = generate(
        "clean", out, seed=7, vantage=vantage, recovery=recovery, ops=ops, start_psn=start,
        qps=2, messages=4, mtu=256, message_size=1024, timeout=6,
        losses=(Loss(rate=rate, before_mirror=before_mirror),
                Loss(rate=rate / 2, direction="response", kind="any")),
    )  # fmt: skip
    check_truth(out, truth.data, 256)


def test_cli_quirk_options_reach_the_scenario(tmp_path: Path) -> None:
    out = tmp_path / "q.pcap"
    args = ["generate", "clean", "-o", str(out), "--qps", "1", "--messages", "2",
            "--reorder-rate", "0.2", "--reorder-delay-ns", "100,900", "--responder-ooo",
            "--responder-ops", "send", "--pfc-on-loss", "--loss-rate", "0.1",
            "--loss-first-only", "--loss-spare-ack-req"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    sc = json.loads((tmp_path / "q.truth.json").read_text())["scenario"]
    assert (sc["reorder_rate"], sc["reorder_delay_ns"], sc["responder_ooo"]) == (
        0.2,
        [100, 900],
        True,
    )
    assert sc["responder_ops"] == ["send"] and sc["pfc_on_loss"]["priority"] == 3
    assert sc["losses"][0]["first_only"] and sc["losses"][0]["spare_ack_req"]
    reuse = ["generate", "clean", "-o", str(out), "--qps", "1", "--qp-reuse-gap-us", "50",
             "--responder-mtu", "512", "--mtu", "1024"]  # fmt: skip
    result = CliRunner().invoke(cli, reuse)
    assert result.exit_code == 0, result.output
    truth = json.loads((tmp_path / "q.truth.json").read_text())
    assert [c["generation"] for c in truth["connections"]] == [0, 1]
    assert truth["hosts"][1]["mtu"] == 512
    bad = CliRunner().invoke(cli, [*reuse, "--responder-ops", "send"])  # no reuse with it
    assert bad.exit_code == 2
