"""The numpy building blocks of the analysis against plain-Python references, and the
paths only taken by captures whose timestamps go backwards or repeat."""

from __future__ import annotations

import numpy as np
from analysis_builder import A, B, ack, at, packet_table, req
from hypothesis import given, settings
from hypothesis import strategies as st

from rocetrace.analysis.flows import majority
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


def stream_reference(psn: list[int], span: list[int]) -> dict[str, list]:
    """A request stream row by row, as the summary defines it: unwrap each PSN next to the
    previous one, then resent = not beyond the highest PSN occupied before, gap = PSNs
    skipped just before it."""
    out: dict[str, list] = {"resent": [], "gap": []}
    high = None
    ext = 0
    for i, p in enumerate(psn):
        ext = p if i == 0 else ext + (p - psn[i - 1] + (1 << 23)) % (1 << 24) - (1 << 23)
        end = ext + span[i] - 1
        out["resent"].append(high is not None and ext <= high)
        out["gap"].append(0 if high is None else max(ext - high - 1, 0))
        high = end if high is None else max(high, end)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, (1 << 24) - 1), st.integers(1, 8)), min_size=1, max_size=40),
    st.booleans(),
)
def test_request_stream_matches_a_row_by_row_reference(data: list, reads: bool) -> None:
    """The state machine's resends and gaps on one flow of SENDs, or of READs spanning
    several response PSNs (10 us apart: no late original, no reordering)."""
    psn = [p for p, _ in data]
    span = [n if reads else 1 for _, n in data]
    op = "READ_REQUEST" if reads else "SEND_ONLY"
    rows = [req(p, op, reth_dma_length=n * 1024) for p, n in zip(psn, span, strict=True)]
    a = analyze_packets(packet_table(at(rows, step_ns=10_000)))
    want = stream_reference(psn, span)
    assert a.packets["retransmitted"].tolist() == want["resent"]
    assert int(a.flows["psn_gaps"].sum()) == sum(want["gap"])


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
