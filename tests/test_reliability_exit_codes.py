"""Issue 18, defect 5: exit statuses mean the same in every subcommand, and the table in
`--help`, the README and docs/reliability.md is the one in rocetrace/errors.py."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_capture_formats import _pcapng, frames_ts, roce_v2

from rocetrace.capture import write_capture
from rocetrace.cli import cli, main
from rocetrace.errors import EXIT_STATUS_MEANINGS, ExitStatus, exit_status_line

REPO = Path(__file__).resolve().parent.parent
COMMANDS = ("analyze", "decode", "report")


def _sentence(text: str) -> str:
    """The 'Exit status: ...' sentence, backticks and line breaks dropped."""
    found = re.search(r"Exit status: (.*?\d+ \w+)\.", " ".join(text.replace("`", "").split()))
    assert found, "no 'Exit status:' sentence"
    return found.group(1)


def test_exit_status_table_is_one_table_everywhere() -> None:
    help_text = CliRunner().invoke(cli, ["--help"]).output
    assert _sentence(help_text) == exit_status_line()
    assert _sentence((REPO / "README.md").read_text(encoding="utf-8")) == exit_status_line()
    rows = re.findall(r"^\| (\d+) \| ([^|]+?) \|", (REPO / "docs/reliability.md").read_text(), re.M)
    assert {int(k): v for k, v in rows} == {int(k): v for k, v in EXIT_STATUS_MEANINGS.items()}
    assert set(EXIT_STATUS_MEANINGS) == set(ExitStatus)


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    return write_capture(tmp_path / "x.pcap", frames_ts(2), [roce_v2(), roce_v2()])


def test_a_bug_exits_70_with_one_line_and_the_traceback_in_a_file(
    capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug\nover two lines")

    monkeypatch.setattr("rocetrace.analysis.api.analyze", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert main(["analyze", str(capture), "--json", "-"]) == ExitStatus.INTERNAL_ERROR == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "RuntimeError" in err
    saved = Path(re.search(r"traceback in (\S+)$", err.strip()).group(1))  # type: ignore[union-attr]
    assert saved.parent == tmp_path and "RuntimeError: a bug" in saved.read_text()


def test_ctrl_c_exits_130_not_the_usage_status(
    capture: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("rocetrace.capture.export.decode_capture", interrupted)
    assert main(["decode", str(capture)]) == ExitStatus.INTERRUPTED == 130
    monkeypatch.setattr("rocetrace.analysis.api.analyze", interrupted)
    assert main(["analyze", str(capture)]) == 130
    assert "interrupted" in capsys.readouterr().err


@pytest.mark.parametrize("command", COMMANDS)
def test_a_directory_is_not_a_capture_in_every_subcommand(tmp_path: Path, command: str) -> None:
    assert main([command, str(tmp_path), "-o", str(tmp_path / "out.csv")]) == 4


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_file_is_no_such_file_in_every_subcommand(tmp_path: Path, command: str) -> None:
    assert main([command, str(tmp_path / "nope.pcap"), "-o", str(tmp_path / "o.csv")]) == 3


def test_a_pcapng_cut_inside_its_section_header_is_not_a_capture(tmp_path: Path) -> None:
    """As a pcap cut inside its 24-byte header: exit status 4, not 0 with 0 packets."""
    blob = _pcapng("<", [(1, None)], [(0, 1, roce_v2())])
    path = tmp_path / "x.pcapng"
    for cut in range(1, 28):
        path.write_bytes(blob[:cut])
        assert main(["decode", str(path)]) == ExitStatus.NOT_A_CAPTURE, cut
    assert main(["analyze", str(path), "--json", str(tmp_path / "s.json")]) == 4
    path.write_bytes(blob[:8] + b"\x00\x00\x00\x00" + blob[12:])  # no byte-order magic
    assert main(["decode", str(path)]) == 4
