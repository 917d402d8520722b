"""The partition key (rocetrace.scale.keys): an unordered IP pair hashes alike in either
direction, in any chunk's category order, through the pair table or row by row."""

from __future__ import annotations

import numpy as np
import pytest

from rocetrace.scale import keys

NAMES = [f"10.0.{i}.{j}" for i in range(6) for j in range(9)]


def row_by_row(src: keys.Coded, dst: keys.Coded) -> np.ndarray:
    return keys.pair_hash(keys.coded_hashes(*src), keys.coded_hashes(*dst))


@pytest.mark.parametrize("rows", [0, 1, 5_000])
def test_the_pair_table_gives_the_rows_hashes(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(rows)
    src = (rng.integers(-1, len(NAMES), rows).astype(np.int16), NAMES)
    dst = (rng.integers(-1, len(NAMES), rows).astype(np.int16), NAMES[::-1])
    got = keys.pairs_of(src, dst)
    assert np.array_equal(got, row_by_row(src, dst))
    assert np.array_equal(got, keys.pairs_of(dst, src))  # unordered
    assert ((got == -1) == ((src[0] < 0) | (dst[0] < 0))).all()  # no pair without both
    monkeypatch.setattr(keys, "PAIR_TABLE_MAX", 1)  # too many names: row by row
    assert np.array_equal(keys.pairs_of(src, dst), got)
