"""PSN unwrapping and decimation: vectorized, every anomaly kept, clean stretches thinned."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rocetrace.psn import PSN_MOD, nearest_unwrapped, running_max_before, unwrap
from rocetrace.reports.decimate import breaks, keep_mask, thin


def test_unwrap_crosses_the_24_bit_wrap_per_group() -> None:
    psn = np.array([PSN_MOD - 2, PSN_MOD - 1, 0, 1, 5, 6, PSN_MOD - 1, 0])
    groups = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    assert unwrap(psn, groups).tolist() == [
        PSN_MOD - 2,
        PSN_MOD - 1,
        PSN_MOD,
        PSN_MOD + 1,
        5,
        6,
        PSN_MOD - 1,
        PSN_MOD,
    ]


@given(st.integers(0, PSN_MOD - 1), st.lists(st.integers(-1000, 1000), max_size=200))
def test_unwrap_inverts_modulo(start: int, steps: list[int]) -> None:
    true = start + np.cumsum([0, *steps])
    assert (unwrap(true % PSN_MOD) == true).all()


def test_running_max_does_not_leak_between_groups() -> None:
    values = np.array([5, 9, 3, 1, 2])
    groups = np.array([0, 0, 0, 1, 1])
    prev = running_max_before(values, groups)
    assert prev[1:3].tolist() == [5, 9] and prev[4] == 1
    assert prev[0] == prev[3] == np.iinfo(np.int64).min


def test_acks_land_on_the_flow_axis_after_a_wrap() -> None:
    assert nearest_unwrapped(np.array([3]), np.array([PSN_MOD + 1])).tolist() == [PSN_MOD + 3]


def test_breaks_mark_both_ends_of_a_jump_but_not_read_spans() -> None:
    psn = np.array([1, 2, 3, 10, 11, 5, 6])
    assert np.flatnonzero(breaks(psn)).tolist() == [2, 3, 4, 5]
    read = np.array([False, False, True, False, False, False, False])
    assert np.flatnonzero(breaks(psn, read)).tolist() == [4, 5]


def test_keep_mask_keeps_every_anomaly_and_respects_the_budget() -> None:
    n = 1_000_000
    rng = np.random.default_rng(0)
    must = np.zeros(n, bool)
    must[rng.integers(0, n, 300)] = True
    flagged = np.zeros(n, bool)
    flagged[rng.integers(0, n, 2_000)] = True
    start = time.perf_counter()
    keep, stride = keep_mask(must, flagged, budget=8_000)
    assert time.perf_counter() - start < 1.0
    assert keep[must].all() and keep[flagged].all()
    assert stride > 1 and keep.sum() < 12_000
    assert keep[0] and keep[-1]


def test_keep_mask_thins_even_anomalies_when_they_alone_flood_the_budget() -> None:
    flagged = np.ones(100_000, bool)
    keep, _ = keep_mask(np.zeros(100_000, bool), flagged, budget=1_000)
    assert keep.sum() <= 2_000


def test_small_flows_are_not_decimated() -> None:
    keep, stride = keep_mask(np.zeros(50, bool), np.zeros(50, bool), budget=100)
    assert keep.all() and stride == 1
    assert thin(10, 100).all() and thin(1000, 100).sum() <= 101


def test_time_bins_never_narrower_than_the_minimum() -> None:
    """Short captures get fewer, wider bins instead of 30 ns bins that spike past line rate."""
    from rocetrace.reports.figures import BINS, MIN_BIN_MS, TimeBins

    short = TimeBins.over(0.012)
    assert short.width_ms >= MIN_BIN_MS
    assert len(short.edges) - 1 == int(0.012 // MIN_BIN_MS)
    long = TimeBins.over(1000.0)
    assert len(long.edges) - 1 == BINS
