"""Decimation of clean stretches, vectorized: every anomaly stays, clean runs are thinned.

Why: a million-packet flow would make a 100 MB page; a clean stretch of a PSN graph is a
straight line that a few hundred points draw just as well, while every retransmission, CE
mark and PSN jump must stay on screen.
"""

from __future__ import annotations

import math

import numpy as np

from rocetrace.psn import delta as signed_delta

DEFAULT_BUDGET = 4_000  # points of one flow's sent-packet traces: ~4 per pixel of width


def breaks(psn: np.ndarray, read_request: np.ndarray | None = None) -> np.ndarray:
    """Rows where the PSN does not advance by exactly one (gap, resend) and the row before
    each, so both ends of every jump are drawn. A forward jump right after a READ request is
    its PSN span, not a break."""
    jump = np.zeros(psn.size, dtype=bool)
    if psn.size > 1:
        delta = signed_delta(psn[1:], psn[:-1])
        step = delta != 1
        if read_request is not None:
            step &= ~(read_request[:-1] & (delta > 1))
        jump[1:] |= step
        jump[:-1] |= step
    return jump


def keep_mask(
    must: np.ndarray, flagged: np.ndarray, budget: int = DEFAULT_BUDGET
) -> tuple[np.ndarray, int]:
    """Rows to draw and the stride used for clean rows (1 = nothing dropped).

    `must` rows are always kept (PSN jumps); `flagged` rows (retransmitted, CE) are kept
    unless they alone exceed the budget, then thinned with their own stride; clean rows are
    thinned to fill what is left of the budget.
    """
    n = must.size
    if n <= budget:
        return np.ones(n, dtype=bool), 1
    idx = np.arange(n)
    if int(must.sum()) > budget:  # a pathological flow: thin even the jumps
        must = must & (np.cumsum(must) % math.ceil(int(must.sum()) / budget) == 0)
    flagged = flagged & ~must
    n_flag = int(flagged.sum())
    if n_flag > budget // 2:
        flagged = flagged & (np.cumsum(flagged) % math.ceil(n_flag / (budget // 2)) == 0)
    special = must | flagged
    room = max(budget - int(special.sum()), budget // 10)
    stride = max(1, math.ceil((n - int(special.sum())) / room))
    keep = special | (idx % stride == 0)
    keep[0] = keep[-1] = True
    return keep, stride


def thin(n: int, budget: int) -> np.ndarray:
    """Every k-th row so that at most about `budget` remain (for ACK streams)."""
    if n <= budget:
        return np.ones(n, dtype=bool)
    keep = np.arange(n) % math.ceil(n / budget) == 0
    keep[-1] = True
    return keep
