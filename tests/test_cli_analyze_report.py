"""`rocetrace analyze` writes the HTML report by default, JSON on request, and both together."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from rocetrace.cli import cli, main
from rocetrace.commands.options import DEFAULT_TOP_FLOWS
from rocetrace.errors import ExitStatus
from rocetrace.generate import generate
from rocetrace.reports.render import DEFAULT_TOP_FLOWS as RENDER_DEFAULT_TOP_FLOWS


@pytest.fixture(scope="module")
def gbn_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cap") / "loss.pcap"
    generate("gbn-loss", path, seed=3)
    return path


def test_default_writes_report_named_after_capture(
    gbn_capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["analyze", str(gbn_capture)])
    assert result.exit_code == 0, result.output
    report = Path("loss.html")
    assert report.is_file()
    assert "<html" in report.read_text(encoding="utf-8")[:2000].lower()
    assert "Report: loss.html" in result.stdout
    assert "psn_sequence_error" in result.stdout


def test_json_alone_writes_no_report(
    gbn_capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["analyze", str(gbn_capture), "--json", "s.json"])
    assert result.exit_code == 0, result.output
    assert json.loads(Path("s.json").read_text())["schema"] == "rocetrace.summary/2"
    assert not list(Path().glob("*.html"))


def test_json_on_stdout_with_report_keeps_stdout_pure(gbn_capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["analyze", str(gbn_capture), "--json", "-", "-o", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)  # nothing but the JSON on stdout
    assert summary["capture"]["roce_packets"] > 0
    assert out.is_file()
    assert "Report:" in result.stderr


def test_fail_on_maps_findings_to_exit_status(gbn_capture: Path, tmp_path: Path) -> None:
    args = ["analyze", str(gbn_capture), "--json", str(tmp_path / "s.json")]
    assert main([*args, "--fail-on", "warning"]) == ExitStatus.FINDINGS
    assert main([*args, "--fail-on", "critical"]) == ExitStatus.OK


def test_unwritable_report_is_a_clean_error(gbn_capture: Path, tmp_path: Path) -> None:
    bad = tmp_path / "no" / "such" / "dir" / "r.html"
    assert main(["analyze", str(gbn_capture), "-o", str(bad)]) == ExitStatus.OUTPUT_ERROR


def test_report_option_default_matches_renderer() -> None:
    assert DEFAULT_TOP_FLOWS == RENDER_DEFAULT_TOP_FLOWS
