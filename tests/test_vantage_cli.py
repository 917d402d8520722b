"""`rocetrace analyze --vantage NAME=PATH[,PATH...]` and `rocetrace.analyze({...})`: several
captures of one run merged from the command line and the API; usage errors and output
safety as for one capture."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import rocetrace
from rocetrace.capture import read_capture
from rocetrace.cli import cli, main
from rocetrace.errors import ExitStatus
from rocetrace.generate import Loss, generate
from rocetrace.vantage.merged_analysis import MergedAnalysis

CLOCKS = {"receiver": "offset=+250ms,drift=10ppm,res=us"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: Any) -> Any:
    out = tmp_path_factory.mktemp("cli") / "x.pcap"
    losses = (Loss(rate=0.03), Loss(rate=0.03, before_mirror=True))
    return generate(
        "gbn-loss",
        out,
        seed=5,
        vantages=("sender", "receiver", "mirror"),
        clocks=CLOCKS,
        losses=losses,
        mtu=256,
        message_size=2048,
    )


def _args(truth: Any) -> list[str]:
    return [arg for v, c in truth.captures.items() for arg in ("--vantage", f"{v}={c.path}")]


def test_json_summary_of_the_merge(run: Any) -> None:
    result = CliRunner().invoke(cli, ["analyze", *_args(run), "--json", "-"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert [v["name"] for v in summary["vantages"]] == ["sender", "receiver", "mirror"]
    assert summary["vantages"][1]["files"] == [str(run.captures["receiver"].path)]
    assert len(summary["losses"]) == len(run.data["drops"])
    assert {(x["last_seen_at"], x["missing_at"]) for x in summary["losses"]} == {
        ("sender", "mirror"),
        ("mirror", "receiver"),
    }
    assert "loss_located" in {f["code"] for f in summary["findings"]}


def test_default_report_is_named_after_the_first_capture(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["analyze", *_args(run)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "x.sender-merged.html").exists()


def test_usage_errors(run: Any, tmp_path: Path) -> None:
    sender = str(run.captures["sender"].path)
    assert main(["analyze"]) == ExitStatus.USAGE
    assert main(["analyze", sender, "--vantage", f"a={sender}"]) == ExitStatus.USAGE
    assert main(["analyze", "--vantage", sender]) == ExitStatus.USAGE  # no NAME=
    twice = ["--vantage", f"a={sender}", "--vantage", f"a={run.captures['mirror'].path}"]
    assert main(["analyze", *twice]) == ExitStatus.USAGE
    missing = ["--vantage", f"a={sender}", "--vantage", f"b={tmp_path / 'none.pcap'}"]
    status = main(["analyze", *missing, "--json", str(tmp_path / "s.json")])
    assert status == ExitStatus.NO_SUCH_FILE


def test_no_output_overwrites_a_vantage_file(run: Any) -> None:
    mirror = run.captures["mirror"].path
    before = mirror.read_bytes()
    status = main(["analyze", *_args(run), "--json", str(mirror)])
    assert status == ExitStatus.OUTPUT_ERROR
    assert mirror.read_bytes() == before


def _split_pcap(path: Path, first: Path, second: Path) -> int:
    """Cut a pcap in two rotated pieces at its middle record; the frames in the first."""
    data = path.read_bytes()
    at, starts = 24, []
    while at < len(data):
        starts.append(at)
        at += 16 + int.from_bytes(data[at + 8 : at + 12], "little")
    cut = starts[len(starts) // 2]
    first.write_bytes(data[:cut])
    second.write_bytes(data[:24] + data[cut:])
    return len(starts) // 2


def test_rotated_pieces_of_one_vantage(run: Any, tmp_path: Path) -> None:
    """The sender's capture as two rotated files, given out of order: the same merge, and
    each loss names the piece and the frame within it."""
    one, two = tmp_path / "tx1.pcap", tmp_path / "tx2.pcap"
    head = _split_pcap(run.captures["sender"].path, one, two)
    whole = rocetrace.analyze({v: c.path for v, c in run.captures.items()})
    pieces = {"sender": [two, one]} | {v: c.path for v, c in run.captures.items() if v != "sender"}
    merged = rocetrace.analyze(pieces)
    assert isinstance(merged, MergedAnalysis)
    assert merged.vantages["files"][0] == [str(one), str(two)]
    assert merged.capture_facts["roce_packets"] == whole.capture_facts["roce_packets"]
    lost = merged.losses[merged.losses["last_seen_at"] == "sender"]
    assert (
        len(lost)
        and lost["psn"].tolist()
        == whole.losses[whole.losses["last_seen_at"] == "sender"]["psn"].tolist()
    )
    tables = {str(one): read_capture(one).packets, str(two): read_capture(two).packets}
    for r in lost.to_dict("records"):
        assert int(tables[r["file"]]["psn"].iloc[r["frame"] - 1]) == r["psn"]
    assert set(lost["file"]) <= {str(one), str(two)} and head > 0
