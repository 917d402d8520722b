"""Partition, then reduce: the analysis split by IP pair and joined again equals the
analysis of the whole capture (docs/scale.md). In memory here; streamed through Parquet
shards and Dask in test_scale_streaming.py."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest
from hard_cases import HARD_CASES

from rocetrace.analysis.nic_context import NO_MARGIN
from rocetrace.analysis.pipeline import analyze_packets, analyze_partition, shared_facts
from rocetrace.analysis.registry import REGISTRY, check_registry, partition_tables
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS
from rocetrace.capture import read_capture
from rocetrace.generate import generate
from rocetrace.scale.memory import analyze_in_partitions
from tests.conftest import SAMPLES, real_capture_paths

TABLES = ("flows", "retransmissions", "naks", "cnps", "anomalies", "findings", "udp_sports")


def captures() -> list[Path]:
    return sorted(SAMPLES.glob("*.pcap")) + real_capture_paths()


def assert_same_analysis(a: object, b: object) -> None:
    """Every table and the JSON summary equal (the packet tables are not compared)."""
    for name in TABLES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=name)
    assert json.dumps(a.summary(), sort_keys=True) == json.dumps(b.summary(), sort_keys=True)


@pytest.mark.parametrize("path", captures(), ids=lambda p: p.name)
def test_partitions_equal_the_whole(path: Path) -> None:
    cap = read_capture(path)
    whole = analyze_packets(cap.packets, cap.info, mads=cap.mads)
    for n in (2, 5):
        parts = analyze_in_partitions(cap.packets, cap.info, mads=cap.mads, partitions=n)
        assert_same_analysis(whole, parts)


def test_registry_is_consistent() -> None:
    assert check_registry() == []
    names = [s.name for s in REGISTRY]
    assert len(names) == len(set(names))
    assert {"flows", "retransmissions", "naks", "cnps", "anomalies"} <= set(partition_tables())


@pytest.mark.parametrize(
    ("margin", "value"),
    [
        ("timer_margin", "timer_ns"),
        ("floor_margin", "timer_floor_ns"),
        ("lo_margin", "timer_lo_ns"),
    ],
)
def test_timer_margin_is_where_the_timeout_matters(tmp_path: Path, margin: str, value: str) -> None:
    """The reduce step weighs a partition again only when the capture's ACK timeout lies
    outside the partition's timer margin (assumptions.stale): under every timeout inside
    it the episodes weigh exactly as under the partition's own, and just outside it at
    least one weighs otherwise. The capture is the first hard case with a slow answer a
    timer may have made (its rule reads the timeout). So too for the timer floor (the
    longest silence since a re-arm before a timeout: a timeout shorter since its progress
    is none) and the least timeout (the shortest such silence: the slow answers read it);
    below the IBTA minimum every floor or least timeout weighs as that minimum."""
    for k, (mix, seed) in enumerate(HARD_CASES):
        path = tmp_path / f"{k}.pcap"
        generate("clean", path, seed=seed, **mix)
        cap = read_capture(path)
        shared = shared_facts(cap.packets, cap.info, cap.mads, {"link_speed_bps": 100e9})
        own = analyze_partition(cap.packets, shared)
        lo, hi = getattr(own.assumed.nic, margin)
        floor = 0 if margin != "timer_margin" else MIN_ACK_TIMEOUT_NS
        if MIN_ACK_TIMEOUT_NS < hi < NO_MARGIN[1] and lo >= floor:
            break
    else:
        raise AssertionError("no hard case has a slow answer that reads the timeout")
    nic = own.assumed.nic

    def weighed(timeout: int) -> pd.DataFrame:
        given = shared.given(own.assumed.mtu, dataclasses.replace(nic, **{value: timeout}))
        return analyze_partition(cap.packets, given).tables["retransmissions"]

    same = own.tables["retransmissions"]
    least = max(lo, MIN_ACK_TIMEOUT_NS)
    for timeout in (least + 1, (least + hi) // 2, hi):
        pd.testing.assert_frame_equal(weighed(timeout), same)
    for timeout in (lo, hi + 1) if lo > MIN_ACK_TIMEOUT_NS else (hi + 1,):
        assert not weighed(timeout).equals(same), timeout
