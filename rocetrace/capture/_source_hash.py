"""The fingerprint of the C decoder's sources, computed the same way by setup.py (compiled
into the module) and at import (from the sources beside it), so a checkout whose C changed
since the last build says "rebuild" instead of running old kernels against new callers.

Standard library only: setup.py loads this file by path, before anything is installed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PARTS = ("", "_scan", "_walk", "_roce", "_columns")


def source_files(folder: Path) -> list[Path]:
    """The extension's sources and header, in a fixed order."""
    return [folder / f"_kernels{part}.c" for part in PARTS] + [folder / "_kernels.h"]


def source_hash(folder: Path) -> str | None:
    """A short hash of the sources' bytes, or None where they are absent (an installed wheel
    ships only the compiled module)."""
    files = source_files(folder)
    if not all(f.is_file() for f in files):
        return None
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:16]
