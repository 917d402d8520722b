"""Several captures of one run, each with its own clock: the files hold what each vantage saw,
stamped as its clock says (offset, drift, jitter, resolution), in arrival order."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from rocetrace.cli import cli
from rocetrace.generate import Loss, generate
from rocetrace.generate.capture import EPOCH_NS
from rocetrace.generate.clock import Clock, duration_ns, parse_clock, stamp

SMALL = {"mtu": 256, "message_size": 2048}
ALL = ("sender", "receiver", "mirror")
MAGIC = {bytes.fromhex("d4c3b2a1"): 1000, bytes.fromhex("4d3cb2a1"): 1}


def pcap_stamps(path: Path) -> np.ndarray:
    """Record timestamps in ns, in file order, read from the pcap headers themselves."""
    data = path.read_bytes()
    unit = MAGIC[data[:4]]
    out, at = [], 24
    while at < len(data):
        sec = int.from_bytes(data[at : at + 4], "little")
        frac = int.from_bytes(data[at + 4 : at + 8], "little")
        out.append(sec * 1_000_000_000 + frac * unit)
        at += 16 + int.from_bytes(data[at + 8 : at + 12], "little")
    return np.array(out, dtype=np.int64)


def test_stamp_offset_drift_resolution_and_jitter() -> None:
    t = np.array([0, 1_000_000, 1_000_000_000], dtype=np.int64)
    rng = np.random.default_rng(0)
    assert stamp(Clock(), 0, t, rng).tolist() == t.tolist()
    drift = stamp(Clock(offset_ns=-7, drift_ppm=5.0), 100, t, rng)
    assert drift.tolist() == [93, 1_000_098, 1_000_005_093]
    assert stamp(Clock(resolution_ns=1000), 0, t + 999, rng).tolist() == t.tolist()
    many = np.zeros(10_000, dtype=np.int64)
    jittered = stamp(Clock(jitter_ns=50), 0, many, np.random.default_rng(1))
    assert jittered.min() == -50 and jittered.max() == 50


def test_clock_specs() -> None:
    base = Clock(resolution_ns=1000, jitter_ns=20)
    c = parse_clock("offset=+30us,drift=5ppm,res=ns", base)
    assert (c.offset_ns, c.drift_ppm, c.resolution_ns, c.jitter_ns) == (30_000, 5.0, 1, 20)
    assert duration_ns("-1s") == -1_000_000_000 and duration_ns("2.5ms") == 2_500_000
    for bad in ("offset=3 parsecs", "res=ms", "speed=1"):
        with pytest.raises(ValueError):
            parse_clock(bad, base)


def test_one_run_three_captures_three_clocks(tmp_path: Path) -> None:
    clocks = {"receiver": "offset=+30us,drift=5ppm,res=us", "mirror": "offset=-1s,jitter=200ns"}
    truth = generate("gbn-loss", tmp_path / "x.pcap", seed=1, vantages=ALL, clocks=clocks,
                     **SMALL)  # fmt: skip
    assert truth.path == tmp_path / "x.truth.json"
    assert [c["vantage"] for c in truth.data["clock"]] == list(ALL)
    for v, shot in truth.captures.items():
        assert shot.path == tmp_path / f"x.{v}.pcap"
        assert pcap_stamps(shot.path).tolist() == shot.ts_ns.tolist()
        assert np.all(np.diff(shot.true_ns) >= 0)  # records in arrival order
    sender = truth.captures["sender"]
    assert sender.ts_ns.tolist() == (sender.true_ns + EPOCH_NS).tolist()
    rx = truth.captures["receiver"]
    exact = EPOCH_NS + 30_000 + rx.true_ns + np.rint(rx.true_ns * 5e-6).astype(np.int64)
    assert rx.ts_ns.tolist() == (exact // 1000 * 1000).tolist()
    mirror = truth.captures["mirror"]
    off = mirror.ts_ns - (EPOCH_NS - 1_000_000_000 + mirror.true_ns)
    assert np.abs(off).max() <= 200 and len(set(off.tolist())) > 10
    assert np.any(np.diff(mirror.ts_ns) < 0)  # jitter runs stamps backwards; order stays


def test_loss_is_located_by_which_vantages_hold_the_packet(tmp_path: Path) -> None:
    truth = generate("gbn-loss", tmp_path / "x.pcap", seed=1, vantages=ALL, **SMALL)
    (drop,) = truth.data["drops"]
    seen = {v: drop["wire_id"] in s.wire_ids for v, s in truth.captures.items()}
    assert seen == {"sender": True, "receiver": False, "mirror": True}
    assert set(truth.data["capture_frames"]) == set(ALL)


def test_each_vantage_file_equals_its_single_capture(tmp_path: Path) -> None:
    kw = {"seed": 4, "losses": (Loss(rate=0.05),), "capture_drop_rate": 0.02, **SMALL}
    many = generate("gbn-loss", tmp_path / "m.pcap", vantages=ALL, **kw)
    for v in ALL:
        one = generate("gbn-loss", tmp_path / f"{v}.pcap", vantage=v, **kw)
        assert many.captures[v].path.read_bytes() == one.captures[v].path.read_bytes()


def test_jittered_captures_repeat_with_the_seed(tmp_path: Path) -> None:
    kw = {"vantage": "receiver", "clock_jitter_ns": 500, "clock_drift_ppm": -3.0, **SMALL}
    a = generate("gbn-loss", tmp_path / "a.pcap", seed=2, **kw)
    b = generate("gbn-loss", tmp_path / "b.pcap", seed=2, **kw)
    c = generate("gbn-loss", tmp_path / "c.pcap", seed=2, clocks={"receiver": "seed=9"}, **kw)
    assert a.path.with_name("a.pcap").read_bytes() == b.path.with_name("b.pcap").read_bytes()
    assert a.captures["receiver"].ts_ns.tolist() != c.captures["receiver"].ts_ns.tolist()
    assert c.data["clock"][0]["seed"] == 9 and a.data["clock"][0]["seed"] == 2


def test_clock_for_a_vantage_not_captured_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="clocks only for captured vantages"):
        generate("gbn-loss", tmp_path / "x.pcap", vantage="sender", clocks={"mirror": "res=us"})


def test_cli_vantages_and_clocks(tmp_path: Path) -> None:
    out = tmp_path / "x.pcap"
    args = ["generate", "gbn-loss", "-o", str(out), "--mtu", "256", "--message-size", "2048",
            "--vantages", "sender,receiver,mirror", "--clock-jitter", "100ns",
            "--clock", "receiver:offset=+30us,drift=5ppm,res=us"]  # fmt: skip
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert all((tmp_path / f"x.{v}.pcap").exists() for v in ALL) and not out.exists()
    clocks = {c["vantage"]: c for c in json.loads((tmp_path / "x.truth.json").read_text())["clock"]}
    assert clocks["receiver"] | {"seed": 0} == {
        "vantage": "receiver", "offset_ns": 30_000, "drift_ppm": 5.0, "resolution_ns": 1000,
        "jitter_ns": 100, "seed": 0,
    }  # fmt: skip
    assert clocks["sender"]["jitter_ns"] == 100 and clocks["sender"]["resolution_ns"] == 1
    assert (tmp_path / "x.receiver.pcap").read_bytes()[:4] == bytes.fromhex("d4c3b2a1")
    for bad in (["--vantages", "sender,switch"], ["--clock", "mirror=offset=1us"],
                ["--clock", "receiver:offset=1us"], ["--clock-offset", "soon"]):  # fmt: skip
        result = CliRunner().invoke(cli, [*args[:8], *bad])
        assert result.exit_code == 2, (bad, result.output)
