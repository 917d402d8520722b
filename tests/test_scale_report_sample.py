"""A streamed analysis keeps, beside its link-level frames, the packets its report draws
(rocetrace.analysis.report_sample): the same report sections and PSN graphs as the
in-memory analysis, every anomaly of a graphed flow kept when clean stretches are thinned,
and the frame count of the whole capture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rocetrace
from rocetrace.analysis import report_sample
from rocetrace.analysis.result import Analysis
from rocetrace.reports.sections import Context, ordered_sections
from rocetrace.reports.terminal import terminal_summary
from rocetrace.scale.engine import analyze_streaming
from tests.conftest import SAMPLES

SAMPLED = ("gbn-loss", "ecn-cnp", "pfc-storm", "incast", "selective-repeat")


def sections(a: Analysis) -> list[tuple[str, list[str], int]]:
    """Each report section: its id, its figures' ids and its tables."""
    return [
        (s.id, [f.id for f in s.figures], len(s.tables)) for s in ordered_sections(Context.of(a, 8))
    ]


def anomaly_frames(a: Analysis) -> set[int]:
    """Frames of resent packets, PSN gaps and CE marks in the graphed flows."""
    p = a.packets
    graphed = set(Context.of(a, 8).graphed)
    flow = p["flow_id"].to_numpy(np.int64, na_value=-1)
    marked = p["retransmitted"].to_numpy(bool, na_value=False)
    marked |= p["psn_gap"].to_numpy(np.int64, na_value=0) > 0
    marked |= p["ce"].to_numpy(bool, na_value=False)
    rows = np.flatnonzero(marked & np.isin(flow, list(graphed)))
    return set(p["frame"].to_numpy(np.int64)[rows].tolist())


@pytest.mark.parametrize("name", SAMPLED)
def test_streamed_report_has_the_in_memory_sections(name: str) -> None:
    path = SAMPLES / f"{name}.pcap"
    whole, streamed = rocetrace.analyze(path), analyze_streaming([str(path)], partitions=3)
    assert streamed.packets_sampled and not whole.packets_sampled
    assert sections(streamed) == sections(whole)
    assert streamed.frame_count() == whole.frame_count() == len(whole.packets)
    assert terminal_summary(streamed, columns=100) == terminal_summary(whole, columns=100)


@pytest.mark.parametrize("name", ["gbn-loss", "selective-repeat", "ecn-cnp"])
def test_thinned_sample_keeps_every_anomaly(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a budget of 10 rows per flow the clean stretches go, every anomaly stays."""
    monkeypatch.setattr(report_sample, "FLOW_BUDGET", 10)
    path = SAMPLES / f"{name}.pcap"
    whole, streamed = rocetrace.analyze(path), analyze_streaming([str(path)], partitions=2)
    assert len(streamed.packets) < len(whole.packets)
    assert anomaly_frames(whole) <= set(streamed.packets["frame"].to_numpy(np.int64).tolist())
    assert sections(streamed) == sections(whole)
    kept = streamed.packets.dropna(subset=["flow_id"]).set_index("frame")
    same = whole.packets.set_index("frame").loc[kept.index]
    for column in ("retransmitted", "psn_gap", "ce", "psn", "ts_ns"):
        assert kept[column].tolist() == same[column].tolist(), column


def test_thinned_keeps_the_ends_and_about_the_budget() -> None:
    must = np.zeros(10_000, bool)
    must[[5, 500, 9_000]] = True
    keep = report_sample.thinned(must, budget=100)
    assert keep[[0, 5, 500, 9_000, 9_999]].all()
    assert 90 <= keep.sum() <= 110


def test_saved_streamed_analysis_counts_every_frame(tmp_path: Path) -> None:
    path = SAMPLES / "gbn-loss.pcap"
    streamed = analyze_streaming([str(path)], partitions=2)
    back = rocetrace.load(streamed.save(tmp_path / "saved"))
    assert back.packets_sampled and back.frame_count() == streamed.frame_count()


def test_a_selection_of_a_streamed_analysis_counts_its_own_frames() -> None:
    """A flow selected in a notebook counts its flows' frames, not the whole capture's; a
    time window of a sample says that its frames are sampled ones."""
    path = SAMPLES / "incast.pcap"  # 8 connections
    whole, streamed = rocetrace.analyze(path), analyze_streaming([str(path)], partitions=2)
    key = str(whole.flows["flow"].iloc[0])
    assert streamed.flow(key).frame_count() == whole.flow(key).frame_count()
    assert streamed.flow(key).frame_count() < streamed.frame_count()
    window = streamed.select(t0=0, t1=1e-3)
    assert window.frames_are_sampled() and "sampled frame" in repr(window)
    assert not streamed.frames_are_sampled() and not whole.select(t0=0).frames_are_sampled()
