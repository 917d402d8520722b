"""`rocetrace analyze` through the CLI: JSON on stdout only, exit statuses, --fail-on."""

from __future__ import annotations

import json
from pathlib import Path

from rocetrace.cli import main
from rocetrace.errors import ExitStatus
from rocetrace.generate import generate


def test_json_on_stdout_and_fail_on(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    capture = tmp_path / "gbn.pcap"
    generate("gbn-loss", capture, seed=1)
    assert main(["analyze", str(capture), "--json", "-"]) == ExitStatus.OK
    summary = json.loads(capsys.readouterr().out)
    assert summary["schema"] == "rocetrace.summary/2"
    assert (
        main(["analyze", str(capture), "--json", "-", "--fail-on", "warning"])
        == ExitStatus.FINDINGS
    )
    capsys.readouterr()
    assert main(["analyze", str(capture), "--fail-on", "critical"]) == ExitStatus.OK
    out = tmp_path / "s.json"
    assert main(["analyze", str(capture), "--json", str(out), "--link-speed", "25G"]) == 0
    assert json.loads(out.read_text())["options"]["link_speed_bps"] == 25e9


def test_errors_map_to_statuses(tmp_path: Path) -> None:
    assert (
        main(["analyze", str(tmp_path / "missing.pcap"), "--json", "-"]) == ExitStatus.NO_SUCH_FILE
    )
    capture = tmp_path / "c.pcap"
    generate("clean", capture, seed=1)
    assert main(["analyze", str(capture), "--link-speed", "fast"]) == ExitStatus.USAGE
    assert (
        main(["analyze", str(capture), "--json", str(tmp_path / "no" / "x.json")])
        == ExitStatus.OUTPUT_ERROR
    )
