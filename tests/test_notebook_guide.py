"""docs/notebook.md is executed as a doctest, so the guide cannot rot."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def test_the_notebook_guide_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # the guide names samples/ relative to the repository
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(
        str(REPO / "docs" / "notebook.md"), module_relative=False, optionflags=flags
    )
    assert result.attempted > 20 and result.failed == 0
