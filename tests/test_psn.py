"""rocetrace.psn: the package's one PSN arithmetic, 24-bit wrap included."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from rocetrace import psn


def test_diff_of_a_uint32_arrow_column_crosses_the_wrap_without_overflow() -> None:
    col = pd.Series([16_777_214, 16_777_215, 0, 3, 2], dtype=pd.ArrowDtype(pa.uint32()))
    steps = psn.diff(col)
    assert steps.dtype == "Int64"
    assert steps.tolist() == [pd.NA, 1, 1, 3, -1]
    assert (steps.index == col.index).all()


def test_diff_leaves_steps_next_to_a_null_psn_null() -> None:
    col = pd.Series([5, None, 7, 8], dtype=pd.ArrowDtype(pa.uint32()))
    assert psn.diff(col).tolist() == [pd.NA, pd.NA, pd.NA, 1]


def test_delta_is_signed_modulo_2_24() -> None:
    assert psn.delta([0, 5, 2**23], [psn.PSN_MOD - 1, 9, 0]).tolist() == [1, -4, -(2**23)]


@given(st.integers(0, psn.PSN_MOD - 1), st.lists(st.integers(-1000, 100_000), max_size=50))
def test_unwrap_and_wrap_invert_each_other(start: int, steps: list[int]) -> None:
    true = start + np.cumsum([0, *steps])
    wrapped = psn.wrap(true)
    assert (psn.unwrap(wrapped) == true).all()
    assert (psn.diff(wrapped)[1:] == np.diff(true)).all()


def test_module_examples() -> None:
    assert doctest.testmod(psn).failed == 0
