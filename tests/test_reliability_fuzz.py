"""Issue 18: the hostile corpus (tests/data/hostile/) gives the exit status EXPECTED.json
names under decode, analyze and report, with one line on stderr at most; and a small budget
of the fuzz gate (tests/fuzz_gate.py, which CI runs with >= 20,000 cases) runs clean."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz_gate import plan, run_cases

from rocetrace.cli import main

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
EXPECTED: dict[str, dict[str, int | None]] = json.loads((HOSTILE / "EXPECTED.json").read_text())


def _argv(command: str, path: Path, tmp_path: Path) -> list[str]:
    if command == "decode":
        return ["decode", str(path)]
    if command == "analyze":
        return ["analyze", str(path), "--json", str(tmp_path / "s.json")]
    return ["report", str(path), "-o", str(tmp_path / "r.html")]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_hostile_corpus_gives_its_exit_statuses(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    for command, status in EXPECTED[name].items():
        if status is None:
            continue
        assert main(_argv(command, HOSTILE / name, tmp_path)) == status, (command, name)
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.count("\n") <= 1, err


def test_every_corpus_file_has_its_expectation() -> None:
    files = {
        p.name
        for p in HOSTILE.iterdir()
        if p.name not in ("EXPECTED.json", "regenerate_hostile.py")
    }
    assert files == set(EXPECTED)


def test_a_small_fuzz_budget_runs_clean() -> None:
    """The gate's own cases (the first 400 of the plan, every kind), in this process."""
    tally = run_cases(plan(400), jobs=1, base=18, max_seconds=600)
    assert tally.failures == []
    assert sum(tally.cases.values()) == 400 and set(tally.cases) == {
        "capture",
        "fields",
        "summary",
        "bundle",
    }
