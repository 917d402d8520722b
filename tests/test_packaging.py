"""The wheel ships `dissectors/` and `reports/` as rocetrace.dissectors / rocetrace.reports.

Built from a copy of the tree (so the checkout gets no build/ or egg-info) with pip's usual
isolated build, installed into a fresh venv that borrows the dependencies from the
interpreter running the tests (its site-packages, listed in a .pth file: the same whether
the tests run in a venv or in the system's Python): the probe proves rocetrace itself is
imported from the wheel.
"""

from __future__ import annotations

import json
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_IGNORE = shutil.ignore_patterns(
    ".git", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", "node_modules", ".venv"
)
_PROBE = """
import importlib.util, json
import rocetrace, rocetrace.dissectors, rocetrace.reports
from rocetrace.dissectors.opcodes import OPCODES
print(json.dumps({
    "rocetrace": rocetrace.__file__,
    "dissectors": rocetrace.dissectors.__file__,
    "reports": rocetrace.reports.__file__,
    "opcodes": len(OPCODES),
    "top_level": [m for m in ("dissectors", "reports") if importlib.util.find_spec(m)],
}))
"""


def _run(*cmd: str | Path, cwd: Path) -> str:
    done = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{cmd[:4]} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    shutil.copytree(REPO, src, ignore=_IGNORE)
    _run(sys.executable, "-m", "pip", "wheel", "--no-deps",
         "-w", work / "dist", src, cwd=work)  # fmt: skip
    (built,) = (work / "dist").glob("rocetrace-*.whl")
    return built


@pytest.mark.slow
def test_wheel_maps_the_root_folders_under_rocetrace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "rocetrace/dissectors/opcodes.py" in names
    assert "rocetrace/reports/__init__.py" in names
    assert not [n for n in names if n.split("/")[0] in ("dissectors", "reports", "tests")]


@pytest.mark.slow
def test_wheel_ships_every_package_of_the_tree(wheel: Path) -> None:
    """pyproject.toml lists the packages by name: a new subpackage left off that list
    would work in an editable install and be missing from the wheel."""
    names = set(zipfile.ZipFile(wheel).namelist())
    roots = {"rocetrace": "rocetrace", "dissectors": "rocetrace/dissectors",
             "reports": "rocetrace/reports"}  # fmt: skip
    expected = [
        f"{shipped}/{init.parent.relative_to(REPO / root).as_posix()}/__init__.py".replace(
            "/./", "/"
        )
        for root, shipped in roots.items()
        for init in (REPO / root).rglob("__init__.py")
        if "__pycache__" not in init.parts
    ]
    assert len(expected) >= 10
    assert sorted(set(expected) - names) == []


def _borrow_dependencies(python: Path, cwd: Path) -> None:
    """Make the running interpreter's packages importable in the venv, after its own (a
    path in a .pth file is appended to sys.path; the .pth files found there are not run,
    so an editable rocetrace of the running environment stays invisible)."""
    purelib = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
                   cwd=cwd).strip()  # fmt: skip
    paths = [*site.getsitepackages(), site.getusersitepackages()]
    (Path(purelib) / "_borrowed_dependencies.pth").write_text("\n".join(paths) + "\n")


@pytest.mark.slow
def test_wheel_installs_and_imports_in_a_fresh_venv(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    python = venv / "bin" / "python"
    _borrow_dependencies(python, tmp_path)
    _run(python, "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall",
         wheel, cwd=tmp_path)  # fmt: skip
    found = json.loads(_run(python, "-c", _PROBE, cwd=tmp_path))
    for module in ("rocetrace", "dissectors", "reports"):
        assert Path(found[module]).is_relative_to(venv), f"{module} not from the wheel: {found}"
    assert found["opcodes"] > 80
    assert found["top_level"] == [], "a top-level dissectors/reports module is importable"
