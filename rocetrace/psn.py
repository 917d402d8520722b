"""PSN arithmetic, the one place that knows PSNs are 24-bit and wrap.

A BTH PSN counts modulo 2^24: 16,777,215 is followed by 0, so a plain subtraction (or
pandas' `Series.diff()` on a `uint32[pyarrow]` column, which overflows) misreads every wrap.
Every step here is read as signed modulo 2^24, in [-2^23, 2^23): how far one PSN is
beyond another. Vectorized: no Python loop per packet.

>>> from rocetrace import psn
>>> int(psn.delta(2, 16_777_214))
4
>>> psn.diff([16_777_214, 16_777_215, 0, 1]).tolist()
[<NA>, 1, 1, 1]
"""

from __future__ import annotations

from typing import Any

import numpy as np

PSN_BITS = 24
PSN_MOD = 1 << PSN_BITS
PSN_HALF = 1 << (PSN_BITS - 1)
PSN_MASK = PSN_MOD - 1


def _ints(values: Any) -> np.ndarray:
    """PSNs (a list, numpy array or pandas column of any integer dtype) as int64."""
    if hasattr(values, "to_numpy") and not isinstance(values, np.ndarray):
        return np.asarray(values.to_numpy(dtype=np.int64, na_value=0))
    return np.asarray(values, dtype=np.int64)


def delta(a: Any, b: Any) -> np.ndarray:
    """a - b modulo 2^24 as a signed value in [-2^23, 2^23): how far PSN a is beyond b."""
    return ((_ints(a) - _ints(b) + PSN_HALF) & PSN_MASK) - PSN_HALF


def wrap(unwrapped: Any) -> np.ndarray:
    """Unwrapped PSNs back to what a BTH carries (the low 24 bits)."""
    return _ints(unwrapped) & PSN_MASK


def diff(psns: Any) -> Any:
    """The signed step from each PSN to the next, as `Series.diff()` gives it but modulo
    2^24: a pandas column gives a nullable Int64 column on the same index (the first
    row, and rows after a null PSN, are null), anything else an Int64 array."""
    import pandas as pd

    values = _ints(psns)
    null = np.asarray(pd.isna(psns)) if hasattr(psns, "isna") else np.zeros(len(values), bool)
    steps = np.zeros(len(values), np.int64)
    steps[1:] = delta(values[1:], values[:-1])
    missing = null.copy()
    missing[:1] = True
    missing[1:] |= null[:-1]
    out = pd.arrays.IntegerArray(steps, missing)
    if isinstance(psns, pd.Series):
        return pd.Series(out, index=psns.index, name=psns.name)
    return out


def group_starts(groups: np.ndarray) -> np.ndarray:
    """Boolean mask of the first row of each run of equal group ids (rows sorted by group)."""
    starts = np.ones(groups.size, dtype=bool)
    starts[1:] = groups[1:] != groups[:-1]
    return starts


def unwrap(psns: Any, groups: np.ndarray | None = None) -> np.ndarray:
    """Unwrapped PSNs per group (rows sorted by group, then time): a monotone axis across
    the wrap, each group's first PSN kept as it is."""
    psn = _ints(psns)
    if psn.size == 0:
        return psn
    groups = np.zeros(psn.size, dtype=np.int64) if groups is None else np.asarray(groups)
    starts = group_starts(groups)
    inc = np.empty(psn.size, dtype=np.int64)
    inc[0] = psn[0]
    inc[1:] = delta(psn[1:], psn[:-1])
    inc[starts] = psn[starts]
    total = np.cumsum(inc)
    offset = total[starts] - psn[starts]  # what earlier groups contributed
    return total - np.repeat(offset, np.diff(np.append(np.flatnonzero(starts), psn.size)))


def nearest_unwrapped(psns: Any, reference: Any) -> np.ndarray:
    """PSNs placed on an unwrapped axis next to `reference` (e.g. ACKs on their flow's
    axis): the unwrapped value closest to the reference whose low 24 bits are the PSN."""
    ref = _ints(reference)
    return ref + delta(psns, ref & PSN_MASK)


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
