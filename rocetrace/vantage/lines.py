"""The clock line between two vantages from one-way delays, as a two-variable linear
program solved by hand (numpy only): which lines `offset + drift * t` no matched packet
contradicts, one in the middle of them, and how far any other such line can be.

A packet that left the reference side first and reached this vantage later bounds the
line from above (it cannot arrive before it was sent: delay >= 0), one going the other
way bounds it from below (Paxson's bidirectional method; with drift, the line between the
two point clouds, as in the convex-hull fits of Moon, Skelly and Towsley).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

MAX_DRIFT = 500e-6  # a clock crystal is within +-100 ppm; the search allows five times that
_GOLDEN = (math.sqrt(5) - 1) / 2
_STEPS = 64
_BINS = 512


@dataclass(frozen=True)
class Line:
    """theta + rho * tau: this vantage's clock minus the reference's, tau after the pivot."""

    theta: float  # ns, at tau = 0
    rho: float  # drift, a fraction (1e-6 = 1 ppm)
    uncertainty: float  # ns: how far a line no packet contradicts can be, over the data
    margin: float  # ns: the corridor's half width at this slope (< 0: the packets contradict)


def _golden_max(f: Callable[[float], float], a: float, b: float) -> float:
    """The argmax of a concave function on [a, b]."""
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(_STEPS):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2


def _crossing(f: Callable[[float], float], inside: float, outside: float) -> float:
    """Where a concave f, >= 0 at `inside`, falls below 0 towards `outside` (bisection)."""
    if f(outside) >= 0:
        return outside
    for _ in range(_STEPS):
        mid = (inside + outside) / 2
        inside, outside = (mid, outside) if f(mid) >= 0 else (inside, mid)
    return inside


def _envelope(tau: np.ndarray, value: np.ndarray, lowest: bool) -> tuple[np.ndarray, np.ndarray]:
    """The points that can be the minimum (or maximum) of value - rho * tau for some
    |rho| <= MAX_DRIFT: per bin of tau, within 2 * MAX_DRIFT * bin width of the bin's best."""
    if len(tau) <= 4 * _BINS:
        return tau, value
    lo, width = tau.min(), max((tau.max() - tau.min()) / _BINS, 1.0)
    b = np.minimum(((tau - lo) / width).astype(np.int64), _BINS - 1)
    v = value if lowest else -value
    best = np.full(_BINS, np.inf)
    np.minimum.at(best, b, v)
    keep = v <= best[b] + 2 * MAX_DRIFT * width
    return tau[keep], value[keep]


@dataclass(frozen=True)
class _Bounds:
    """Upper bounds (ut, uv) and lower bounds (lt, lv) on a line's value at times tau."""

    ut: np.ndarray
    uv: np.ndarray
    lt: np.ndarray
    lv: np.ndarray

    def hi(self, rho: float, at: float = 0.0) -> float:
        """The highest value at tau = `at` of a line of slope rho under every upper bound."""
        return float(np.min(self.uv - rho * (self.ut - at)))

    def lo(self, rho: float, at: float = 0.0) -> float:
        """The lowest value at `at` of a line of slope rho above every lower bound."""
        return float(np.max(self.lv - rho * (self.lt - at)))

    def sunk(self, rho: float, at: float = 0.0) -> float:
        return -self.lo(rho, at)

    def margin(self, rho: float) -> float:
        """The corridor's width at slope rho (< 0: no line of that slope fits)."""
        return self.hi(rho) - self.lo(rho)

    def spread(self, theta: float, rho: float, a: float, b: float) -> float:
        """How far a line of slope in [a, b] under and above every bound can be from
        theta + rho * tau, at the first and last bound and at the pivot."""
        span = np.concatenate([self.ut, self.lt])
        worst = 0.0
        for at in (float(span.min()), 0.0, float(span.max())):
            est = theta + rho * at
            top = self.hi(_golden_max(partial(self.hi, at=at), a, b), at)
            bottom = self.lo(_golden_max(partial(self.sunk, at=at), a, b), at)
            worst = max(worst, top - est, est - bottom)
        return worst


def fit_line(
    tau: np.ndarray, d: np.ndarray, later: np.ndarray, earlier: np.ndarray, slack: np.ndarray
) -> Line:
    """A line in the middle of those under the upper bounds d + slack (`later`: this vantage
    saw the packet after the other did) and above the lower bounds d - slack (`earlier`).
    tau: reference time after the pivot; d: this vantage's timestamp minus the other's
    reference time. Both sets must be non-empty."""
    base = float(np.median(d))
    ut, uv = _envelope(tau[later], d[later] - base + slack[later], lowest=True)
    lt, lv = _envelope(tau[earlier], d[earlier] - base - slack[earlier], lowest=False)
    bounds = _Bounds(ut, uv, lt, lv)
    peak = _golden_max(bounds.margin, -MAX_DRIFT, MAX_DRIFT)
    best = bounds.margin(peak)
    if best < 0:  # the packets contradict every line: the slack was too small by this much
        theta = (bounds.hi(peak) + bounds.lo(peak)) / 2
        return Line(theta + base, peak, float(np.max(slack)) - best / 2, best / 2)

    def upper_half(rho: float) -> float:
        return bounds.margin(rho) - best / 2

    # The drift: the middle of the slopes with at least half the widest margin. Where the
    # packets pin the drift down this is the peak; where they cannot (a short capture),
    # the middle of what they allow, not an extreme the margin barely prefers.
    rho = (_crossing(upper_half, peak, -MAX_DRIFT) + _crossing(upper_half, peak, MAX_DRIFT)) / 2
    theta = (bounds.hi(rho) + bounds.lo(rho)) / 2
    a = _crossing(bounds.margin, peak, -MAX_DRIFT)
    b = _crossing(bounds.margin, peak, MAX_DRIFT)
    return Line(theta + base, rho, bounds.spread(theta, rho, a, b), bounds.margin(rho) / 2)
