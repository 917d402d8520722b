"""Small numba kernels shared by the writer and the reader (byte copies, integer reads)."""

from __future__ import annotations

import numpy as np
from numba import njit

from rocetrace.capture import _numba_cache  # noqa: F401  (sets NUMBA_CACHE_DIR first)


@njit(cache=True, nogil=True)
def copy_records(
    out: np.ndarray,
    starts: np.ndarray,
    rec: np.ndarray,
    buf: np.ndarray,
    offsets: np.ndarray,
    caps: np.ndarray,
    trailer: np.ndarray,
    rec_len: np.ndarray,
) -> None:
    """Lay out each record: its header bytes, its frame bytes, its trailer bytes."""
    head_len = rec.shape[1]
    tail_len = trailer.shape[1]
    for i in range(len(starts)):
        s = starts[i]
        out[s : s + head_len] = rec[i]
        d = s + head_len
        out[d : d + caps[i]] = buf[offsets[i] : offsets[i] + caps[i]]
        if tail_len:
            e = s + rec_len[i]
            out[e - tail_len : e] = trailer[i]
