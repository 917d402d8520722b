"""The packet table's conversion (prepared.py) and the per-flow sort (order.py) against plain
reference computations: the fast paths (counting sort, lazy columns, null fills from Arrow
buffers) must give exactly what the straightforward code gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from analysis_builder import A, B, ack, at, packet_table, req

from rocetrace.analysis.order import flow_order, stable_order
from rocetrace.analysis.prepared import _chunk_ints, prepare


@pytest.mark.parametrize("n_codes", [0, 3, 4096, 4097, 65535, 70000])
def test_stable_order_is_a_stable_argsort_in_every_range(n_codes: int) -> None:
    codes = np.random.default_rng(n_codes).integers(0, n_codes + 1, 20_000)
    assert np.array_equal(stable_order(codes, n_codes), np.argsort(codes, kind="stable"))


def test_flow_order_agrees_with_a_plain_sort() -> None:
    rng = np.random.default_rng(7)
    flow_id = rng.integers(-1, 40, 5000)
    order = flow_order(flow_id, 40)
    inside = np.flatnonzero(flow_id >= 0)
    rows = inside[np.argsort(flow_id[inside], kind="stable")]
    assert np.array_equal(order.rows, rows)
    assert np.array_equal(order.flow, flow_id[rows])
    assert np.array_equal(order.bounds, np.searchsorted(flow_id[rows], np.arange(41)))
    mask = rng.random(5000) < 0.3
    picked = rows[mask[rows]]
    assert [a.tolist() for a in order.select(mask)] == [picked.tolist(), flow_id[picked].tolist()]
    assert order.rows_of(np.array([3, 17])).tolist() == [r for r in rows if flow_id[r] in (3, 17)]
    fl, idx = rng.integers(0, 40, 300), rng.integers(0, 5001, 300)
    own = {f: rows[flow_id[rows] == f] for f in range(40)}
    before = [max((r for r in own[f] if r < i), default=-1) for f, i in zip(fl, idx, strict=True)]
    assert order.last_before(fl, idx).tolist() == before


def test_null_fill_reads_sliced_arrow_chunks() -> None:
    chunk = pa.array([5, None, 7, None, 255, 0, None, 9], pa.uint8()).slice(1)
    assert _chunk_ints(chunk, np.int16).tolist() == [-1, 7, -1, 255, 0, -1, 9]
    assert _chunk_ints(chunk, np.int64).dtype == np.int64


def _expected(df: pd.DataFrame, name: str) -> np.ndarray:
    return np.array([-1 if pd.isna(v) else int(v) for v in df[name]], np.int64)


def test_columns_converted_on_use_match_a_full_conversion() -> None:
    rows = [req(p, op="READ_REQUEST", reth_dma_length=4096 * p) for p in range(1, 6)]
    rows += [ack(3, src=B, dst=A), {"encap": "other"}, req(9, opcode=None)]
    one = packet_table(at(rows))
    df = pd.concat([one, one.assign(frame=one["frame"] + 100)], ignore_index=True)  # 2 chunks
    roce = (df["encap"] == "roce_v2").to_numpy() & df["opcode"].notna().to_numpy()
    some = np.array([0, 3, 5, 7, 11, 13])
    fresh = prepare(df)
    assert np.array_equal(fresh.frames_at(some), _expected(df, "frame")[some])
    assert np.array_equal(fresh.dma_length_at(some), _expected(df, "reth_dma_length")[some])
    pp = prepare(df)
    assert pp.frame.dtype == pp.opcode.dtype == pp.dma_length.dtype == np.int64
    assert np.array_equal(pp.frame, _expected(df, "frame"))
    assert np.array_equal(pp.opcode, np.where(roce, _expected(df, "opcode"), -1))
    assert np.array_equal(pp.dma_length, _expected(df, "reth_dma_length"))
    assert len(pp) == len(df)
