"""Point numba's on-disk cache at a user-writable directory before any kernel is compiled.

Installed packages usually live where the user cannot write, and then every CLI run would
pay the first-call compile again; the user cache directory is written once per machine.
"""

from __future__ import annotations

import os
import sys

import platformdirs


def numba_cache_dir() -> str:
    """The cache directory in effect: $NUMBA_CACHE_DIR, else the user cache's numba/."""
    return os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        platformdirs.user_cache_dir("rocetrace"), "numba"
    )


def _configure() -> None:
    """Set NUMBA_CACHE_DIR if unset; patch numba's config if numba was imported already."""
    path = numba_cache_dir()
    os.environ.setdefault("NUMBA_CACHE_DIR", path)
    config = getattr(sys.modules.get("numba"), "config", None)
    if config is not None and not getattr(config, "CACHE_DIR", ""):
        config.CACHE_DIR = path


_configure()
