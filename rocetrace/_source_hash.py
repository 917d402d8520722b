"""The fingerprint of each C extension's sources, computed the same way by setup.py
(compiled into the module as SOURCE_HASH) and at import (from the sources beside it), so a
checkout whose C changed since the last build says "rebuild" instead of running old kernels
against new callers.

Standard library only: setup.py loads this file by path, before anything is installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

# Each extension's C sources and the headers they include, relative to the package.
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "rocetrace.capture._kernels": (
        *(
            f"capture/_kernels{part}.c"
            for part in ("", "_scan", "_resync", "_walk", "_roce", "_columns")
        ),
        "capture/_kernels.h",
        "capture/_buffers.h",
    ),
    "rocetrace.analysis._connection": ("analysis/_connection.c", "capture/_buffers.h"),
}


def source_files(module: str, package: Path = PACKAGE) -> list[Path]:
    """The extension's sources and headers, in a fixed order."""
    return [package / name for name in EXTENSIONS[module]]


def source_hash(module: str, package: Path = PACKAGE) -> str | None:
    """A short hash of the sources' bytes, or None where they are absent (an installed wheel
    ships only the compiled module)."""
    files = source_files(module, package)
    if not all(f.is_file() for f in files):
        return None
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def check_build_is_current(module: str, built_hash: str) -> None:
    """In a checkout, a compiled module must be built from the C sources beside it: old
    kernels behind new Python wrappers would read their arguments wrongly."""
    expected = source_hash(module)
    if expected is not None and expected != built_hash:
        raise ImportError(
            f"rocetrace's C module {module} is out of date: its C sources changed since it "
            "was compiled; rebuild it with `python3 -m pip install -e .` in the rocetrace "
            "checkout"
        )
