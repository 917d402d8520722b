"""Several vantages of one generated run: every drop located on the right segment, every
clock offset within its reported uncertainty, every packet counted once.

Truth comes from the generator (tests/vantage_truth.py): which wire packet each captured
frame is, where each drop happened, each vantage's clock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from vantage_truth import (
    ALL,
    distinct_roce,
    lost_wire_ids,
    run,
    segment_of,
    sender_hosts,
    true_offset_ns,
)

from rocetrace.generate import Loss

# Offsets up to +-1 s, drift up to +-50 ppm, microsecond and nanosecond clocks, jitter.
WIDE = {
    "receiver": "offset=+1s,drift=50ppm,res=us",
    "mirror": "offset=-1s,drift=-50ppm,jitter=100ns",
}
MIXED = {
    "sender": "offset=-1s,drift=-50ppm,res=us",
    "receiver": "offset=+300ms,drift=20ppm,res=us,jitter=500ns",
    "mirror": "offset=+1s,drift=50ppm",
}
# Drops on every segment: requests and responses, before and after the mirror.
EVERYWHERE = (
    Loss(rate=0.02),
    Loss(rate=0.02, before_mirror=True),
    Loss(rate=0.01, direction="response", kind="any"),
    Loss(rate=0.01, direction="response", kind="any", before_mirror=True),
)
SMALL = {"mtu": 256, "message_size": 2048, "messages": 30, "qps": 2, "losses": EVERYWHERE}
CASES = [
    ("gbn-loss", ALL, WIDE, 0, SMALL),
    ("gbn-loss", ALL, MIXED, 1, SMALL),
    ("gbn-loss", ("receiver", "mirror", "sender"), WIDE, 2, SMALL),
    ("gbn-loss", ("sender", "receiver"), MIXED, 3, SMALL),
    ("gbn-loss", ("mirror", "sender"), WIDE, 4, SMALL),
    ("gbn-loss", ("mirror", "receiver"), MIXED, 5, SMALL),
    ("read-loss", ALL, MIXED, 6, {"losses": EVERYWHERE[1:]}),
    ("selective-repeat", ALL, WIDE, 7, {}),
    ("incast", ALL, MIXED, 8, {"losses": EVERYWHERE[:2]}),
    ("bidirectional", ALL, WIDE, 9, {"losses": (Loss(conn=1, rate=0.05, before_mirror=True),)}),
]


def _id(case: tuple[Any, ...]) -> str:
    return f"{case[0]}-{'+'.join(case[1])}-seed{case[3]}"


@pytest.fixture(scope="module", params=CASES, ids=_id)
def merged(request: Any, tmp_path_factory: Any) -> tuple[Any, Any, tuple[str, ...]]:
    preset, vantages, clocks, seed, overrides = request.param
    truth, analysis = run(preset, tmp_path_factory.mktemp("v"), vantages, clocks, seed, **overrides)
    return truth, analysis, vantages


def test_every_drop_on_its_segment_and_no_other_loss(merged: Any) -> None:
    truth, a, vantages = merged
    senders = sender_hosts(truth)
    expected = {d["wire_id"]: segment_of(d, vantages, senders) for d in truth.data["drops"]}
    expected = {w: seg for w, seg in expected.items() if seg is not None}
    found = dict(
        zip(
            lost_wire_ids(truth, a.losses),
            zip(a.losses["last_seen_at"], a.losses["missing_at"], strict=True),
            strict=True,
        )
    )
    assert found == expected
    first = truth.wire["episode"][lost_wire_ids(truth, a.losses)] < 0  # not itself a resend
    requests = ~a.losses["opcode_name"].str.contains("ACKNOWLEDGE").to_numpy()
    assert a.losses["resent"].to_numpy()[requests & first].all()  # RC recovers these


def test_offsets_within_their_uncertainty(merged: Any) -> None:
    truth, a, vantages = merged
    ref = vantages[0]
    for r in a.vantages.to_dict("records"):
        truth_ns = true_offset_ns(truth, r["name"], ref, int(r["pivot_ns"]))
        assert np.isfinite(r["offset_uncertainty_ns"]), r
        assert abs(r["offset_ns"] - truth_ns) <= r["offset_uncertainty_ns"], (r, truth_ns)
        assert r["offset_uncertainty_ns"] < 5_000  # µs clocks and jitter: a few µs at most


def test_each_packet_counted_once(merged: Any) -> None:
    truth, a, vantages = merged
    distinct, frames = distinct_roce(truth, vantages)
    roce = a.packets["encap"].isin(["roce_v2", "roce_v1", "vxlan+roce_v2"]).to_numpy()
    assert a.capture_facts["roce_packets"] == distinct
    assert int(a.packets["sightings"].to_numpy()[roce].sum()) == frames
    if {"sender", "receiver"} <= set(vantages):  # every packet seen by its sending host
        assert int(a.flows["psn_gaps"].sum()) == 0


def test_no_packet_arrives_before_it_left(merged: Any) -> None:
    """Aligned one-way delays are never below zero by more than the two clocks can show."""
    _, a, _ = merged
    slack = a.vantages.set_index("name")[["ts_resolution_ns", "jitter_ns"]].sum(axis=1)
    seg = a.segments
    floor = -(slack[seg["from_vantage"]].to_numpy() + slack[seg["to_vantage"]].to_numpy())
    assert (seg["delay_min_ns"].to_numpy() >= floor).all()


def test_the_merge_reads_resends_as_the_sender_does(merged: Any) -> None:
    """Every resent request is counted once, as the requester's own capture counts them;
    each episode names the segment of a drop of its flow."""
    truth, a, vantages = merged
    if "sender" not in vantages:
        pytest.skip("the sender's capture is the reference for its resends")

    def resent(flows: pd.DataFrame) -> int:
        mine = flows["src_ip"].astype(str).isin(senders) & (flows["role"] == "requester")
        return int(flows["retransmitted_packets"][mine].sum())

    senders = sender_hosts(truth)
    assert resent(a.flows) == resent(a.per_vantage["sender"].flows)
    drops = pd.DataFrame(truth.data["drops"])
    for e in a.retransmissions.to_dict("records"):
        if e["lost_after"] is None:
            continue
        flow = a.flows[a.flows["flow_id"] == e["flow_id"]].iloc[0]
        same = drops[(drops["dest_qp"] == flow["dest_qp"]) & (drops["src_ip"] == flow["src_ip"])]
        segments = {segment_of(d, vantages, senders) for d in same.to_dict("records")}
        assert (e["lost_after"], e["lost_before"]) in segments


def test_sniffer_misses_are_told_apart(tmp_path: Path) -> None:
    """With sniffers that miss frames, every drop is still located; any other loss row is a
    frame the missing vantage's own capture missed, and most of those say resent=False
    (delivered: the requester never sent it again)."""
    truth, a = run("gbn-loss", tmp_path, ALL, WIDE, 11, capture_drop_rate=0.01, **SMALL)
    wire = lost_wire_ids(truth, a.losses)
    senders = sender_hosts(truth)
    dropped = {d["wire_id"]: segment_of(d, ALL, senders) for d in truth.data["drops"]}
    found = dict(
        zip(wire, zip(a.losses["last_seen_at"], a.losses["missing_at"], strict=True), strict=True)
    )
    seen = {w: seg for w, seg in dropped.items() if w in truth.captures[seg[0]].wire_ids}
    assert len(seen) >= len(dropped) - 2  # a drop no sniffer caught is nowhere to be found
    assert all(found.get(w) == seg for w, seg in seen.items())
    missed = [
        (w, m, r)
        for w, m, r in zip(wire, a.losses["missing_at"], a.losses["resent"], strict=True)
        if w not in dropped
    ]
    assert missed, "the scenario should make a sniffer miss a frame another vantage saw"
    assert all(w in truth.captures[m].drops["row"].tolist() for w, m, _ in missed)
    assert sum(not r for _, _, r in missed) > len(missed) / 2
