"""Zeroed arrays whose untouched pages cost no memory (numpy and mmap only: the analysis
uses it too)."""

from __future__ import annotations

import mmap

import numpy as np

MMAP_MIN_BYTES = 128 << 10  # glibc's default mmap threshold: smaller blocks come from the heap


def zeroed(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """np.zeros in its own anonymous mapping when large: pages never written (the rows of
    columns no frame has, a null column's buffer) are never backed by memory, and the whole
    goes back to the OS when freed. np.zeros (calloc) comes from the heap once glibc has
    raised its mmap threshold, which writes every page (a 1M-frame capture decoded in
    chunks: ~40 MB of unused gather rows resident) and keeps the memory after free."""
    size = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if size < MMAP_MIN_BYTES:
        return np.zeros(shape, dtype)
    flags = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
    if not flags:  # no anonymous private mappings here (Windows): calloc it is
        return np.zeros(shape, dtype)
    return np.frombuffer(mmap.mmap(-1, size, flags=flags), dtype).reshape(shape)
