"""The house's layout holds: no two modules share a file name, the capture reader imports
nothing of the analysis, test helpers are not shipped in the package."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("rocetrace", "dissectors", "reports", "tests", "samples", "benchmarks")


def _modules() -> list[Path]:
    return [
        p
        for folder in FOLDERS
        for p in (REPO / folder).rglob("*.py")
        if p.name != "__init__.py" and ".venv" not in p.parts and "build" not in p.parts
    ]


def test_no_two_modules_share_a_file_name() -> None:
    names = Counter(p.name for p in _modules())
    assert [n for n, k in names.items() if k > 1] == []


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def test_the_capture_reader_imports_nothing_of_the_analysis() -> None:
    for path in (REPO / "rocetrace" / "capture").glob("*.py"):
        wrong = {m for m in _imports(path) if m.startswith("rocetrace.analysis")}
        assert wrong == set(), path.name


def test_the_report_package_ships_no_test_scaffolding() -> None:
    assert not list((REPO / "reports").glob("synthetic*.py"))
