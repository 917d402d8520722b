"""PSN arithmetic for plotting: 24-bit PSNs unwrapped into a monotone axis, vectorized.

Why: a PSN graph must not jump from 16 777 215 to 0 at a wrap, and the report reads tables of
a million rows, so no Python loop per packet.
"""

from __future__ import annotations

import numpy as np

PSN_MOD = 1 << 24
HALF = 1 << 23


def signed_delta(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """a - b modulo 2^24, in [-2^23, 2^23): how far PSN a is beyond PSN b."""
    d = (np.asarray(a, dtype=np.int64) - np.asarray(b, dtype=np.int64)) % PSN_MOD
    return np.where(d >= HALF, d - PSN_MOD, d)


def group_starts(groups: np.ndarray) -> np.ndarray:
    """Boolean mask of the first row of each run of equal group ids (rows sorted by group)."""
    starts = np.ones(groups.size, dtype=bool)
    starts[1:] = groups[1:] != groups[:-1]
    return starts


def unwrap(psn: np.ndarray, groups: np.ndarray | None = None) -> np.ndarray:
    """Unwrapped PSNs per group (rows sorted by group, then time); the first PSN is kept."""
    psn = np.asarray(psn, dtype=np.int64)
    if psn.size == 0:
        return psn
    groups = np.zeros(psn.size, dtype=np.int64) if groups is None else np.asarray(groups)
    starts = group_starts(groups)
    inc = np.empty(psn.size, dtype=np.int64)
    inc[0] = psn[0]
    inc[1:] = signed_delta(psn[1:], psn[:-1])
    inc[starts] = psn[starts]
    total = np.cumsum(inc)
    offset = total[starts] - psn[starts]  # what earlier groups contributed
    return total - np.repeat(offset, np.diff(np.append(np.flatnonzero(starts), psn.size)))


def running_max_before(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Per group, the maximum of the earlier rows (int64 min for a group's first row)."""
    values = np.asarray(values, dtype=np.int64)
    if values.size == 0:
        return values
    starts = group_starts(groups)
    rank = np.cumsum(starts) - 1  # 0, 1, ... per group in order
    shifted = values + rank * (1 << 40)  # groups cannot leak into later ones
    prev = np.empty_like(shifted)
    prev[0] = np.iinfo(np.int64).min
    prev[1:] = np.maximum.accumulate(shifted)[:-1]
    prev = prev - rank * (1 << 40)
    prev[starts] = np.iinfo(np.int64).min
    return prev


def nearest_unwrapped(psn: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """PSNs of another packet stream (ACKs, NAKs) placed on a flow's unwrapped axis."""
    ref = np.asarray(reference, dtype=np.int64)
    return ref + signed_delta(psn, ref % PSN_MOD)
