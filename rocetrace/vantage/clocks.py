"""Each vantage's clock against the first vantage's (the reference): offset, drift and an
honest uncertainty, from the one-way delays of packets matched beyond doubt (anchors).

Vantages are fitted one at a time, the one sharing most anchors with those already
aligned first, against all of them at once (their aligned times): so every pair of
vantages that saw common traffic constrains the result, and a vantage that shares no
traffic with the reference is reached through one that does. Which of two vantages saw a
packet first is read per direction of a host pair: the direction whose time differences
run higher is the one where this vantage is downstream (the offset cancels out).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rocetrace.vantage.lines import Line, fit_line


@dataclass(frozen=True)
class ClockFit:
    """A vantage's clock: its timestamp t = T + theta + rho * (T - pivot) for reference
    time T. `uncertainty_ns` is None when no packet crossed both ways (not aligned)."""

    theta_ns: float
    rho: float
    pivot_ns: int
    uncertainty_ns: float | None
    anchors: int = 0  # anchor packets the fit used
    margin_ns: float = 0.0  # < 0: the packets contradict every line within the slack

    @property
    def offset_ns(self) -> int:
        """What added to this vantage's timestamps (at the pivot) gives the reference's."""
        return -round(self.theta_ns)

    @property
    def drift_ppm(self) -> float:
        return self.rho * 1e6

    def to_reference(self, ts: np.ndarray) -> np.ndarray:
        """Timestamps on the reference clock (int64 ns)."""
        shift = self.pivot_ns + round(self.theta_ns)
        x = (np.asarray(ts, np.int64) - shift).astype(np.float64) - (
            self.theta_ns - round(self.theta_ns)
        )
        return self.pivot_ns + np.rint(x / (1.0 + self.rho)).astype(np.int64)


def reference(pivot_ns: int) -> ClockFit:
    return ClockFit(0.0, 0.0, pivot_ns, 0.0)


def _pairs(anchors: pd.DataFrame, fits: dict[int, ClockFit], v: int) -> pd.DataFrame:
    """Anchor packets seen at v and at an aligned vantage u: u's reference time and v's."""
    mine = anchors[anchors["vantage"] == v][["conn", "key", "ts_ns"]]
    theirs = anchors[anchors["vantage"].isin(list(fits))]
    both = theirs.merge(mine, on=["conn", "key"], suffixes=("", "_v"))
    aligned = np.zeros(len(both), np.int64)
    u = both["vantage"].to_numpy()
    for w, fit in fits.items():
        at = u == w
        aligned[at] = fit.to_reference(both["ts_ns"].to_numpy()[at])
    return both.assign(t_u=aligned, d=both["ts_ns_v"].to_numpy() - aligned)


def _oriented(pairs: pd.DataFrame) -> pd.DataFrame:
    """Per pair, whether v saw it after u (`later`) or before (`earlier`): per aligned
    vantage and host pair, the direction whose differences run higher has v downstream.
    A direction without its reverse says nothing (one-way traffic) and is left out."""
    med = pairs.groupby(["vantage", "src", "dst"])["d"].median()
    back = med.copy()
    back.index = back.index.set_names(["vantage", "dst", "src"])
    back = back.reorder_levels([0, 2, 1])
    joined = med.to_frame("fwd").join(back.to_frame("rev"), how="inner")
    idx = pd.MultiIndex.from_frame(pairs[["vantage", "src", "dst"]])
    fwd = joined["fwd"].reindex(idx).to_numpy()
    rev = joined["rev"].reindex(idx).to_numpy()
    known = ~np.isnan(fwd) & ~np.isnan(rev)
    return pairs.assign(later=known & (fwd >= rev), earlier=known & (fwd <= rev))


def _fit(pairs: pd.DataFrame, slack: np.ndarray, pivot: int) -> ClockFit | None:
    """The line of one vantage against the aligned ones; None without two-way packets."""
    if len(pairs) == 0:
        return None
    p = _oriented(pairs)
    later, earlier = p["later"].to_numpy(), p["earlier"].to_numpy()
    if not later.any() or not earlier.any():
        return None
    tau = (p["t_u"].to_numpy() - pivot).astype(np.float64)
    line: Line = fit_line(tau, p["d"].to_numpy().astype(np.float64), later, earlier, slack)
    return ClockFit(line.theta, line.rho, pivot, line.uncertainty, len(p), line.margin)


def _unaligned(pairs: pd.DataFrame, first_ts: int, ref_first_ts: int, pivot: int) -> ClockFit:
    """No packet crossed both ways: the shared packets' median difference (or the captures'
    starts) stands for the offset, with no uncertainty to claim."""
    theta = float(np.median(pairs["d"])) if len(pairs) else float(first_ts - ref_first_ts)
    return ClockFit(theta, 0.0, pivot, None, len(pairs))


def fit_clocks(
    anchors: pd.DataFrame, slack_ns: Sequence[int], first_ts: Sequence[int], pivot_ns: int
) -> list[ClockFit]:
    """One ClockFit per vantage (vantage 0 is the reference). `slack_ns`: per vantage, how
    far its timestamps may be from the truth (resolution + jitter)."""
    fits: dict[int, ClockFit] = {0: reference(pivot_ns)}
    todo = list(range(1, len(slack_ns)))
    while todo:
        shared = {v: _pairs(anchors, fits, v) for v in todo}
        fitted = None
        for v in sorted(todo, key=lambda w: -len(shared[w])):
            fitted = _fit(shared[v], _slack(shared[v], v, slack_ns, fits), pivot_ns)
            if fitted is not None:
                fits[v] = fitted
                todo.remove(v)
                break
        if fitted is None:  # nothing left crosses both ways with an aligned vantage
            for v in todo:
                fits[v] = _unaligned(shared[v], first_ts[v], first_ts[0], pivot_ns)
            todo = []
    return [fits[v] for v in range(len(slack_ns))]


def _slack(
    pairs: pd.DataFrame, v: int, slack_ns: Sequence[int], fits: dict[int, ClockFit]
) -> np.ndarray:
    """Per pair, how far its time difference may be off: both clocks' slack and the
    uncertainty of the aligned vantage's fit."""
    unc = np.zeros(len(slack_ns))
    for w, f in fits.items():
        unc[w] = f.uncertainty_ns or 0.0
    u = pairs["vantage"].to_numpy()
    return np.asarray(slack_ns, np.float64)[u] + slack_ns[v] + unc[u]
