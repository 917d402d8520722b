"""The small tables built in numpy (RTT, source-port entropy, PFC) against plain-Python
references, including the paths the corpus rarely takes: resent PSNs, equal timestamps,
captures too long for RTT's packed sort."""

from __future__ import annotations

import statistics
from collections import Counter

import numpy as np
import pandas as pd
from analysis_builder import A, B, ack, packet_table, req
from hypothesis import given, settings
from hypothesis import strategies as st

from rocetrace.analysis.pfc import pfc_table
from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.analysis.qos import sport_entropy

# (is an ACK, PSN, ns since the previous frame): few PSNs, so requests are resent and ACKs
# repeat; 0 ns steps give equal timestamps.
frames = st.lists(
    st.tuples(st.booleans(), st.integers(0, 3), st.sampled_from([0, 1, 7, 1000])),
    min_size=1,
    max_size=30,
)


def rtt_reference(rows: list[dict]) -> list[int]:
    """Karn's rule, frame by frame in capture order: an ACK that acknowledges something new
    times the request of its PSN when that PSN was sent once (and not after the ACK, by
    the clock); an ACK of a PSN never sent, a repeated ACK or a resent PSN gives none."""
    sent: dict[int, list[int]] = {}  # PSN -> [copies, time of the first]
    high = acked = None
    rtts = []
    for r in rows:
        psn, ts = r["psn"], r["ts_ns"]
        if r["dst_ip"] == B:
            if psn in sent:
                sent[psn][0] += 1
            else:
                sent[psn] = [1, ts]
            high = psn if high is None else max(high, psn)
            continue
        if high is not None and psn > high:
            continue
        if acked is None or psn > acked:
            copies, first = sent.get(psn, [0, 0])
            if copies == 1 and first <= ts:
                rtts.append(ts - first)
            acked = psn
    return rtts


def check_rtt(rows: list[dict]) -> None:
    f = analyze_packets(packet_table(rows)).flows.set_index("src_ip")
    if A not in f.index:
        return
    want = rtt_reference(rows)
    assert f.loc[A, "rtt_samples"] == len(want)
    if want:
        got = f.loc[A, ["rtt_min_s", "rtt_median_s", "rtt_max_s"]].tolist()
        assert got == [min(want) / 1e9, statistics.median(np.array(want) / 1e9), max(want) / 1e9]


@given(frames, st.sampled_from([1, 3_600_000_000]))
@settings(max_examples=60, deadline=None)
def test_rtt_matches_a_frame_by_frame_reference(draw: list, scale: int) -> None:
    """scale stretches the gaps: hours-long captures no longer pack (flow, PSN, time) into
    one integer and take the two-argsort path."""
    t, rows = 1_000_000_000_000, []
    for is_ack, psn, step in draw:
        t += step * scale
        rows.append((ack(psn) if is_ack else req(psn)) | {"ts_ns": t})
    check_rtt(rows)


@given(frames, st.permutations(range(30)))
@settings(max_examples=40, deadline=None)
def test_rtt_when_timestamps_go_backwards(draw: list, perm: list[int]) -> None:
    stamps = [1_000_000_000_000 + 1000 * (k // 2) for k in perm[: len(draw)]]  # pairs tie
    rows = [
        (ack(psn) if is_ack else req(psn)) | {"ts_ns": ts}
        for (is_ack, psn, _), ts in zip(draw, stamps, strict=True)
    ]
    check_rtt(rows)


hosts = st.sampled_from(["10.0.0.1", "10.0.0.2", "10.0.0.10", "fe80::1"])


@given(st.lists(st.tuples(hosts, hosts, st.integers(-1, 4), st.integers(0, 2)), max_size=40))
def test_sport_entropy_matches_a_reference(rows: list) -> None:
    flows = pd.DataFrame(
        {
            "src_ip": [r[0] for r in rows],
            "dst_ip": [r[1] for r in rows],
            "udp_sport": np.array([r[2] for r in rows], np.int64),
            "requests": np.array([r[3] for r in rows], np.int64),
            "dest_qp": np.full(len(rows), 7, np.int64),
        }
    )
    got = sport_entropy(flows)
    ports: dict[tuple[str, str], Counter] = {}
    for src, dst, sport, requests in rows:
        if requests > 0 and sport >= 0:
            ports.setdefault((src, dst), Counter())[sport] += 1
    assert list(zip(got["src_ip"], got["dst_ip"], strict=True)) == sorted(ports)
    for row, pair in zip(got.itertuples(), sorted(ports), strict=True):
        qps = ports[pair]
        assert row.qps == sum(qps.values()) and row.distinct_sports == len(qps)
        assert row.colliding_qps == sum(n for n in qps.values() if n > 1)
        assert qps[row.busiest_sport] == max(qps.values())


@given(
    st.lists(
        st.tuples(st.integers(0, 255), st.lists(st.integers(0, 0xFFFF), min_size=8, max_size=8)),
        min_size=1,
        max_size=12,
    )
)
def test_pfc_table_has_one_row_per_frame_and_enabled_priority(frames_: list) -> None:
    base = {"encap": "pfc", "src_mac": "02:00:00:00:00:01"}
    rows = [
        base | {"pfc_class_enable": enable} | {f"pfc_quanta_{p}": q[p] for p in range(8)}
        for enable, q in frames_
    ]
    table = pfc_table(packet_table(rows), 100e9)
    want = [
        (i + 1, p, q[p])
        for i, (enable, q) in enumerate(frames_)
        for p in range(8)
        if enable >> p & 1
    ]
    assert list(zip(table["frame"], table["priority"], table["quanta"], strict=True)) == want
    assert table["pause"].tolist() == [q > 0 for _, _, q in want]
