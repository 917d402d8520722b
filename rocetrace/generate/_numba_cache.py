"""Point numba's on-disk cache at a user-writable directory before any generator kernel is
compiled.

Installed packages usually live where the user cannot write, and then every generator run
would pay the first-call compile again; the user cache directory is written once per machine.
The directory is keyed by the generator kernels' source (generate/kernels.py): numba
invalidates a cached kernel when its own file changes but not when a kernel it calls in
another file does, and a stale callee crashes the process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

import platformdirs

_HERE = Path(__file__).resolve().parent
# The modules whose numba kernels are compiled with this cache directory.
_KEYED = (_HERE / "numba_kernels.py",)


def _sources_key() -> str:
    """A short hash of the kernel modules' names, sizes and mtimes (a stat per file)."""
    digest = hashlib.sha1()
    for path in _KEYED:
        st = path.stat()
        digest.update(f"{path.name}:{st.st_size}:{st.st_mtime_ns};".encode())
    return digest.hexdigest()[:12]


def numba_cache_dir() -> str:
    """The cache directory in effect: $NUMBA_CACHE_DIR, else the user cache's numba/<key>."""
    return os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        platformdirs.user_cache_dir("rocetrace"), "numba", _sources_key()
    )


def _configure() -> None:
    """Set NUMBA_CACHE_DIR if unset; patch numba's config if numba was imported already."""
    path = numba_cache_dir()
    os.environ.setdefault("NUMBA_CACHE_DIR", path)
    config = getattr(sys.modules.get("numba"), "config", None)
    if config is not None and not getattr(config, "CACHE_DIR", ""):
        config.CACHE_DIR = path


def _skip_blas_probe() -> None:
    """Keep numba from importing scipy.linalg (0.2 s) when its CPU target first loads.

    numba.np.arraymath asks numba.np.linalg.ensure_blas() at import whether BLAS exists, only
    to choose how np.correlate / np.convolve compile; no generator kernel uses either. The first
    call (that probe) is answered by whether scipy is installed at all, and puts the original
    back, so every later linear-algebra compile checks for real.
    """
    if "numba.np.arraymath" in sys.modules or importlib.util.find_spec("numba") is None:
        return
    import numba.np.linalg as linalg

    original = linalg.ensure_blas

    def probe() -> None:
        linalg.ensure_blas = original
        if importlib.util.find_spec("scipy") is None:
            raise ImportError("scipy is required for linear algebra")

    linalg.ensure_blas = probe


_configure()
_skip_blas_probe()
