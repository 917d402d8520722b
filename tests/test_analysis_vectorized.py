"""The numpy building blocks of the analysis against plain-Python references, and the
paths only taken by captures whose timestamps go backwards or repeat."""

from __future__ import annotations

import bisect

import numpy as np
from analysis_builder import A, B, ack, at, packet_table, req
from hypothesis import given, settings
from hypothesis import strategies as st

from rocetrace.analysis import native
from rocetrace.analysis.flows import majority
from rocetrace.analysis.gaps import sorted_stream
from rocetrace.analysis.order import counts_by, flow_order, rank_in_group, stable_order
from rocetrace.analysis.pairing import dense_ids
from rocetrace.analysis.pipeline import analyze_packets

flow_ids = st.lists(st.integers(-1, 5), min_size=1, max_size=60)


@given(flow_ids)
def test_flow_order_keeps_capture_order_within_each_flow(ids: list[int]) -> None:
    flow_id = np.array(ids, np.int64)
    n = int(flow_id.max()) + 1
    order = flow_order(flow_id, n)
    expected = [i for f in range(n) for i in range(len(ids)) if ids[i] == f]
    assert order.rows.tolist() == expected
    assert order.flow.tolist() == [ids[i] for i in expected]
    assert np.diff(order.bounds).tolist() == [ids.count(f) for f in range(n)]


@given(flow_ids, st.lists(st.integers(0, 60), min_size=1, max_size=10))
def test_last_before_is_the_flows_latest_earlier_frame(ids: list[int], at_: list[int]) -> None:
    flow_id = np.array(ids, np.int64)
    n = int(flow_id.max()) + 1
    if n == 0:
        return
    order = flow_order(flow_id, n)
    flows = np.array([i % n for i in range(len(at_))], np.int64)
    got = order.last_before(flows, np.array(at_, np.int64)).tolist()
    want = [
        max((j for j in range(min(i, len(ids))) if ids[j] == f), default=-1)
        for f, i in zip(flows, at_, strict=True)
    ]
    assert got == want


@given(st.lists(st.integers(0, 70_000), min_size=1, max_size=40))
def test_stable_order_is_a_stable_argsort_on_either_side_of_the_radix_limit(v: list[int]) -> None:
    codes = np.array(v, np.int64)
    assert (
        stable_order(codes, int(codes.max())).tolist() == np.argsort(codes, kind="stable").tolist()
    )


def test_rank_in_group_counts_within_runs() -> None:
    assert rank_in_group(np.array([3, 3, 5, 5, 5, 7])).tolist() == [0, 1, 0, 1, 2, 0]


def test_counts_by_ignores_frames_outside_flows() -> None:
    counts = counts_by(np.array([0, 1, -1, 1]), 2, np.array([2, 0, 1, 2]), 3)
    assert counts.tolist() == [[0, 0, 1], [1, 0, 1]]


def test_majority_prefers_the_smallest_value_on_a_tie_and_skips_nulls() -> None:
    flow_id = np.array([0, 0, 0, 0, 1, 1, 2, -1])
    values = np.array([7, 5, 7, 5, -1, -1, 9, 3])
    assert majority(flow_id, flow_order(flow_id, 3), values).tolist() == [5, -1, 9]


def test_dense_ids_number_tuples_in_sorted_order() -> None:
    ids = dense_ids(np.array([2, 1, 2, 1]), np.array([0, 5, 0, 4]))
    assert ids.tolist() == [2, 1, 2, 0]


def test_unwrap_accepts_unsigned_psns() -> None:
    psn = np.array([0xFFFFFF, 0, 1], np.uint32)
    s = sorted_stream(np.arange(3), np.zeros(3, np.int64), psn, None)
    assert s.ext.tolist() == [0xFFFFFF, 1 << 24, (1 << 24) + 1]


def stream_reference(flow: list[int], psn: list[int], span: list[int]) -> dict[str, list]:
    """A PSN stream row by row, as the summary defines it: unwrap each PSN next to the
    previous one of its flow, then resent = not beyond the highest PSN occupied before."""
    out: dict[str, list] = {k: [] for k in ("ext", "end", "high", "resent", "gap")}
    for i, f in enumerate(flow):
        first = i == 0 or flow[i - 1] != f
        if first:
            ext, high = psn[i], None
        else:
            ext += (psn[i] - psn[i - 1] + (1 << 23)) % (1 << 24) - (1 << 23)
        end = ext + span[i] - 1
        out["ext"].append(ext)
        out["end"].append(end)
        out["high"].append(high)
        out["resent"].append(high is not None and ext <= high)
        out["gap"].append(0 if high is None else max(ext - high - 1, 0))
        high = end if high is None else max(high, end)
    return out


rows = st.lists(
    st.tuples(st.integers(0, 3), st.integers(0, (1 << 24) - 1), st.integers(1, 40)),
    min_size=1,
    max_size=80,
)


@given(rows, st.booleans())
def test_psn_stream_scan_matches_a_row_by_row_reference(data: list, spans: bool) -> None:
    data.sort(key=lambda r: r[0])  # sorted by flow, capture order kept within it
    flow, psn, span = (list(c) for c in zip(*data, strict=True))
    span = span if spans else [1] * len(data)
    s = sorted_stream(
        np.arange(len(data)), np.array(flow), np.array(psn), np.array(span) if spans else None
    )
    want = stream_reference(flow, psn, span)
    firsts = [h is None for h in want["high"]]
    assert s.first.tolist() == firsts
    assert s.ext.tolist() == want["ext"] and s.end.tolist() == want["end"]
    assert [h for h, f in zip(s.high_before.tolist(), firsts, strict=True) if not f] == [
        h for h in want["high"] if h is not None
    ]
    assert s.retransmitted.tolist() == want["resent"] and s.gap.tolist() == want["gap"]


def read_gaps_reference(reads: list, rows: list) -> list[int]:
    """Row by row: the READ with the last key at or before the row's (never before its
    flow's first READ); PSNs skipped since that READ's highest offset so far."""
    keys = [k for k, _, _ in reads]
    high: dict[int, int] = {}
    out = []
    for needle, ext, first_read in rows:
        at = max(bisect.bisect_right(keys, needle) - 1, first_read)
        offset = ext - reads[at][1]
        if offset < 0 or ext > reads[at][2]:
            out.append(0)
            continue
        out.append(max(offset - high.get(at, -1) - 1, 0))
        high[at] = max(high.get(at, -1), offset)
    return out


@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 30), st.integers(1, 8)), min_size=1),
    st.lists(st.tuples(st.integers(0, 2), st.integers(-2, 40)), min_size=5, max_size=120),
)
def test_read_gaps_match_a_row_by_row_reference(reads: list, responses: list) -> None:
    big = 1 << 42
    table = sorted({(f * big + start, start, start + span - 1) for f, start, span in reads})
    flows = [k // big for k, _, _ in table]
    rows = [(f * big + e, e, flows.index(f)) for f, e in responses if f in flows]
    if not rows:
        return
    cols = [np.array(c, np.int64) for c in zip(*table, strict=True)]
    needle, ext, first = (np.array(c, np.int64) for c in zip(*rows, strict=True))
    got = native.read_gaps(*cols, needle, ext, first)
    assert got.tolist() == read_gaps_reference(table, rows)


@settings(max_examples=30, deadline=None)
@given(st.permutations(list(range(8))))
def test_rtt_and_flow_times_when_timestamps_go_backwards(perm: list[int]) -> None:
    """Frames stay in capture order, their timestamps are shuffled: an answer pairs with the
    latest request of its PSN sent at or before it, in time."""
    rows = at([req(p) for p in range(10, 14)] + [ack(p) for p in range(10, 14)], step_ns=1000)
    stamps = [r["ts_ns"] for r in rows]
    for r, k in zip(rows, perm, strict=True):
        r["ts_ns"] = stamps[k]
    a = analyze_packets(packet_table(rows))
    f = a.flows.set_index("src_ip")
    ts = [r["ts_ns"] for r in rows]
    rtts = [ts[4 + i] - ts[i] for i in range(4) if ts[i] <= ts[4 + i]]
    assert f.loc[A, "rtt_samples"] == len(rtts)
    if rtts:
        assert f.loc[A, "rtt_min_s"] == min(rtts) / 1e9
        assert f.loc[A, "rtt_max_s"] == max(rtts) / 1e9
    assert f.loc[A, "first_ts_ns"] == min(ts[:4]) and f.loc[A, "last_ts_ns"] == max(ts[:4])
    assert f.loc[B, "first_ts_ns"] == min(ts[4:]) and f.loc[B, "last_ts_ns"] == max(ts[4:])
