"""What each command's process imports: start-up is a large part of a 1M-packet run
(issue 15), so a command loads only what it uses. Module names, not timings."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Prints the top-level modules the process imported, after running the CLI.
MODULES_AFTER = (
    "import sys; from rocetrace.cli import main; status = main(sys.argv[1:]); "
    "print(sorted({m.split('.')[0] for m in sys.modules})); sys.exit(status)"
)
NEVER_FOR_JSON = {"plotly", "jinja2", "dask", "distributed", "scapy", "numba", "rich"}


def modules_after(argv: list[str]) -> set[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, *argv], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    return set(ast.literal_eval(run.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["analyze", "--help"]])
def test_help_imports_no_numpy(argv: list[str]) -> None:
    """Help lists every command without loading any of their libraries."""
    modules = modules_after(argv)
    assert "click" in modules and not modules & {"numpy", "pandas", "pyarrow"}


def test_analyze_json_imports_no_report_nor_cluster(tmp_path: Path) -> None:
    """--json alone renders no report (plotly, jinja2) and starts no cluster (dask)."""
    sample = REPO / "samples" / "gbn-loss.pcap"
    modules = modules_after(["analyze", str(sample), "--json", str(tmp_path / "s.json")])
    assert "pandas" in modules and not modules & NEVER_FOR_JSON
    assert (tmp_path / "s.json").stat().st_size > 0


# The console script's way out (rocetrace.cli.entry_point -> exit_now): no interpreter
# teardown, but the atexit handlers run, what was printed reaches a pipe, and the status
# is the command's.
EXIT_NOW = (
    "import atexit, sys; atexit.register(lambda: print('atexit ran', file=sys.stderr)); "
    "from rocetrace.cli import entry_point; sys.argv[0] = 'rocetrace'; entry_point()"
)


@pytest.mark.parametrize(
    ("argv", "status"), [(["--version"], 0), (["analyze", "no-such.pcap", "--json", "-"], 3)]
)
def test_the_console_script_exits_with_everything_said(argv: list[str], status: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run(
        [sys.executable, "-c", EXIT_NOW, *argv], capture_output=True, text=True, env=env
    )
    assert run.returncode == status
    assert run.stderr.endswith("atexit ran\n")
    assert ("rocetrace" in run.stdout) if status == 0 else ("no-such.pcap" in run.stderr)
