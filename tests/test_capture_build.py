"""The compiled decoder matches the C sources beside it, and a stale build is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import rocetrace.capture._kernels as kernels
from rocetrace.capture import native
from rocetrace.capture._source_hash import source_files, source_hash

CAPTURE = Path(native.__file__).resolve().parent


def test_build_is_current() -> None:
    assert source_hash(CAPTURE) == kernels.SOURCE_HASH


def test_hash_changes_with_any_source(tmp_path: Path) -> None:
    for f in source_files(CAPTURE):
        shutil.copy(f, tmp_path / f.name)
    before = source_hash(tmp_path)
    for f in source_files(tmp_path):
        original = f.read_bytes()
        f.write_bytes(original + b"\n")
        assert source_hash(tmp_path) != before, f.name
        f.write_bytes(original)
    f.unlink()
    assert source_hash(tmp_path) is None  # an installed wheel: no sources, no check


def test_stale_build_asks_for_a_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kernels, "SOURCE_HASH", "0000000000000000")
    with pytest.raises(ImportError, match=r"out of date.*pip install -e"):
        native._check_build_is_current()
