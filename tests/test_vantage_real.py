"""The real NCCL ring captured on three nodes at once (../shared/captures/real/ring2_node*.pcap,
SOURCES.md): every RoCE packet is in two files, at its sender's node and its receiver's,
each stamped by its node's clock. Merged: 276 distinct packets in 552 sightings, no false
retransmission or gap, and after alignment no packet received before it was sent."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import REAL_CAPTURES

from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.capture import read_capture
from rocetrace.vantage.vantage_api import analyze_vantages
from rocetrace.vantage.vantage_inputs import concat_tables

NODES = {f"node{n}": REAL_CAPTURES / f"ring2_node{n}.pcap" for n in range(3)}
ROCE = ("roce_v2", "roce_v1", "vxlan+roce_v2")


@pytest.fixture(scope="module")
def ring() -> Any:
    if not all(p.exists() for p in NODES.values()):
        pytest.skip(f"the ring2 captures are not at {REAL_CAPTURES}")
    return analyze_vantages(NODES)


def test_each_packet_once_in_two_sightings(ring: Any) -> None:
    a = ring
    packets = a.packets
    roce = packets["encap"].isin(ROCE).to_numpy()
    assert a.capture_facts["roce_packets"] == 276
    assert int(packets["sightings"][roce].sum()) == 552
    assert (packets["sightings"][roce] == 2).all()
    vantages = a.vantages
    assert vantages["matched_packets"].tolist() == [184, 184, 184]


def test_no_false_retransmission_gap_or_loss(ring: Any) -> None:
    a = ring
    assert int(a.flows["retransmitted_packets"].sum()) == 0
    assert int(a.flows["psn_gaps"].sum()) == 0
    assert a.retransmissions.empty and a.naks.empty
    assert a.losses.empty
    assert (a.vantages["missed"] == 0).all()


def test_after_alignment_no_packet_received_before_sent(ring: Any) -> None:
    a = ring
    seg = a.segments
    assert len(seg) == 6  # each direction of each node pair: one hop
    assert (seg["delay_min_ns"] >= 0).all()
    v = a.vantages.set_index("name")
    assert v.loc["node0", "offset_ns"] == 0 and v.loc["node0", "offset_uncertainty_ns"] == 0
    for node in ("node1", "node2"):  # node clocks tens of µs apart (SOURCES.md)
        assert abs(v.loc[node, "offset_ns"]) < 200_000
        assert 0 < v.loc[node, "offset_uncertainty_ns"] < 100_000


def test_concatenating_the_captures_is_what_goes_wrong(ring: Any) -> None:
    """The problem the merge solves: the three files concatenated by time count every packet
    twice and read the second sighting as a retransmission."""
    tables = [read_capture(p).packets for p in NODES.values()]
    joined = concat_tables(tables).sort_values("ts_ns", kind="stable").reset_index(drop=True)
    joined["frame"] = range(1, len(joined) + 1)
    naive = analyze_packets(joined)
    assert naive.capture_facts["roce_packets"] == 552
    assert int(naive.flows["retransmitted_packets"].sum()) > 0


def test_each_node_alone_is_still_there(ring: Any) -> None:
    own = ring.per_vantage["node1"]
    assert own.capture_facts["roce_packets"] == 184
    assert int(own.flows["retransmitted_packets"].sum()) == 0
    assert sorted(ring.per_vantage) == sorted(NODES)


def test_summary_names_vantages_and_losses(ring: Any) -> None:
    summary = ring.summary()
    assert [v["name"] for v in summary["vantages"]] == list(NODES)
    assert summary["vantages"][0]["files"] == [str(NODES["node0"])]
    assert set(summary["vantages"][1]) >= {
        "name",
        "files",
        "offset_ns",
        "drift_ppm",
        "offset_uncertainty_ns",
        "matched_packets",
    }
    assert summary["losses"] == []
    assert summary["capture"]["roce_packets"] == 276
    json.dumps(summary, allow_nan=False)  # plain JSON types only
