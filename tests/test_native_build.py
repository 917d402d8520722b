"""Each compiled C module matches the C sources beside it, and a stale build is refused."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import pytest

from rocetrace import _source_hash
from rocetrace._source_hash import EXTENSIONS, check_build_is_current, source_files, source_hash


@pytest.mark.parametrize("module", EXTENSIONS)
def test_build_is_current(module: str) -> None:
    assert source_hash(module) == importlib.import_module(module).SOURCE_HASH


@pytest.mark.parametrize("module", EXTENSIONS)
def test_hash_changes_with_any_source(tmp_path: Path, module: str) -> None:
    for f in source_files(module):
        copy = tmp_path / f.relative_to(_source_hash.PACKAGE)
        copy.parent.mkdir(exist_ok=True)
        shutil.copy(f, copy)
    before = source_hash(module, tmp_path)
    for f in source_files(module, tmp_path):
        original = f.read_bytes()
        f.write_bytes(original + b"\n")
        assert source_hash(module, tmp_path) != before, f.name
        f.write_bytes(original)
    f.unlink()
    assert source_hash(module, tmp_path) is None  # an installed wheel: no sources, no check


@pytest.mark.parametrize("module", EXTENSIONS)
def test_stale_build_asks_for_a_rebuild(module: str) -> None:
    with pytest.raises(ImportError, match=r"out of date.*pip install -e"):
        check_build_is_current(module, "0000000000000000")


def test_every_c_file_is_part_of_an_extension() -> None:
    """A new C file or header outside EXTENSIONS would escape the staleness check."""
    listed = {f for module in EXTENSIONS for f in source_files(module)}
    on_disk = {*_source_hash.PACKAGE.rglob("*.c"), *_source_hash.PACKAGE.rglob("*.h")}
    assert on_disk == listed
