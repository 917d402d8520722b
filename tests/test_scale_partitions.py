"""Partition, then reduce: the analysis split by IP pair and joined again equals the
analysis of the whole capture (docs/scale.md). In memory here; streamed through Parquet
shards and Dask in test_scale_streaming.py."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.analysis.registry import REGISTRY, check_registry, partition_tables
from rocetrace.capture import read_capture
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
