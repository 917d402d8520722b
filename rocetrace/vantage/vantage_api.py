"""`analyze_vantages({"sender": "a.pcap", "rx": ["b1.pcap", "b2.pcap"]}) -> MergedAnalysis`:
several captures of the same traffic, one story.

The stages, each a module: read each vantage (inputs), key every frame as a sighting
(match), fit the clocks on the packets matched beyond doubt (clocks, lines), match every
sighting by aligned time, build the merged table (merge) and analyse it with the ordinary
pipeline, then follow each packet along its path (paths, losses) and add the findings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.api import parse_link_speed
from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.analysis.result import Analysis
from rocetrace.analysis.tolerances import Tolerances, measure
from rocetrace.capture.gunzip import MAX_GZIP_RATIO
from rocetrace.vantage import paths
from rocetrace.vantage.clocks import ClockFit, fit_clocks
from rocetrace.vantage.loss_findings import episode_segments, with_vantage_findings
from rocetrace.vantage.losses import loss_table, segment_tables
from rocetrace.vantage.match import anchor_sample, anchors, match, sightings
from rocetrace.vantage.merge import departures, merged_info, merged_mads, merged_packets
from rocetrace.vantage.merged_analysis import MergedAnalysis, PerVantage
from rocetrace.vantage.vantage_inputs import Vantage, VantageTable, read_vantage, vantages_of
from rocetrace.vantage.vantage_tables import Built, link_frames, sighting_table, vantage_table

Progress = Callable[[str], None]


def analyze_vantages(
    spec: Mapping[str, Any] | Sequence[Vantage],
    *,
    link_speed: str | float = "100G",
    roce_port: int = 4791,
    max_gzip_ratio: float = MAX_GZIP_RATIO,
    progress: Progress | None = None,
    **options: Any,
) -> MergedAnalysis:
    """Read every vantage's files and analyse them as one merged capture."""
    step = progress or (lambda _name: None)
    step("decode")
    tables = [
        read_vantage(v, roce_port=roce_port, max_gzip_ratio=max_gzip_ratio)
        for v in vantages_of(spec)
    ]
    return analyze_tables(
        tables, link_speed=link_speed, roce_port=roce_port, progress=progress, **options
    )


def _tolerances(tables: Sequence[VantageTable], s: pd.DataFrame) -> list[Tolerances]:
    """Each vantage's clock as its own capture shows it (rocetrace.analysis.tolerances)."""
    out = []
    for v, t in enumerate(tables):
        part = s[s["vantage"].to_numpy() == v]
        wire = t.packets["wire_len"].to_numpy(np.int64)
        out.append(
            measure(
                part["ts_ns"].to_numpy(),
                part["src"].to_numpy(np.int64),
                part["dst"].to_numpy(np.int64),
                wire,
                t.info.ts_resolution_ns,
            )
        )
    return out


def align(s: pd.DataFrame, tols: Sequence[Tolerances]) -> tuple[list[ClockFit], np.ndarray]:
    """Every vantage's clock fit, and every sighting's time on the reference clock."""
    ts, vantage = s["ts_ns"].to_numpy(), s["vantage"].to_numpy()
    ref = ts[vantage == 0]
    pivot = int(ref.min() + (ref.max() - ref.min()) // 2) if len(ref) else 0
    first = [int(ts[vantage == v].min(initial=0)) for v in range(len(tols))]
    fits = fit_clocks(anchor_sample(anchors(s)), [t.slack_ns for t in tols], first, pivot)
    aligned = np.empty(len(s), np.int64)
    for v, fit in enumerate(fits):
        at = vantage == v
        aligned[at] = fit.to_reference(ts[at])
    return fits, aligned


def match_window(
    s: pd.DataFrame, aligned: np.ndarray, fits: Sequence[ClockFit], tols: Sequence[Tolerances]
) -> int:
    """How far apart two sightings of one packet may be in aligned time: twice the widest
    spread of the anchors' sightings, plus the clocks' errors."""
    a = anchors(s)
    spread = 0
    if len(a):
        t = pd.Series(aligned[a.index.to_numpy()])
        per = t.groupby([a["conn"].to_numpy(), a["key"].to_numpy()])
        spread = int((per.max() - per.min()).max())
    unc = max((f.uncertainty_ns or 0.0) for f in fits)
    return int(2 * spread + 2 * unc + 2 * max(t.slack_ns for t in tols) + 1000)


def per_vantage(
    vantages: Sequence[Vantage], bps: float, options: dict[str, Any], read: Any = None
) -> PerVantage:
    """Each vantage's own analysis on first use: its table (`read(name)`, else decoded
    again from its files)."""
    by_name = {v.name: v for v in vantages}

    def run(name: str) -> Analysis:
        if read is not None:
            t = read(name)
        else:
            port = int(options.get("roce_port", 4791))
            t = read_vantage(by_name[name], roce_port=port)
        return analyze_packets(t.packets, t.info, link_speed_bps=bps, mads=t.mads, **options)

    return PerVantage(list(by_name), run)


def saved_per_vantage(vantages: pd.DataFrame, options: dict[str, Any]) -> PerVantage:
    """A loaded merged analysis' per-vantage views: each vantage's files decoded and
    analysed again on first use (a file no longer there raises the usual capture error)."""
    found = [
        Vantage(str(r["name"]), tuple(Path(f) for f in r["files"]))
        for r in vantages.to_dict("records")
    ]
    speed = float(options.get("link_speed_bps", 100e9))
    rest = {k: v for k, v in options.items() if k not in ("link_speed_bps",)}
    return per_vantage(found, speed, rest)


def clocks_and_window(
    s: pd.DataFrame, tols: Sequence[Tolerances]
) -> tuple[list[ClockFit], np.ndarray, list[int], int]:
    """The capture-wide step: the clock fits, aligned times, the order vantages are matched
    in (reference first, then by uncertainty) and the matching window."""
    fits, aligned = align(s, tols)
    known = sorted(range(1, len(fits)), key=lambda v: fits[v].uncertainty_ns or np.inf)
    return fits, aligned, [0, *known], match_window(s, aligned, fits, tols)


def analyze_tables(
    tables: Sequence[VantageTable],
    *,
    link_speed: str | float = "100G",
    roce_port: int = 4791,
    progress: Progress | None = None,
    **options: Any,
) -> MergedAnalysis:
    """The merged analysis of vantage tables already read (vantage 0: the reference clock)."""
    step = progress or (lambda _name: None)
    bps = parse_link_speed(link_speed)
    step("match")
    s, _ = sightings(tables)
    tols = _tolerances(tables, s)
    fits, aligned, order, window = clocks_and_window(s, tols)
    packet = match(s, aligned, order, window)
    options = {"roce_port": roce_port, **options}
    matched = Matched(list(tables), s, packet, aligned, fits, tols)
    by_name = {t.name: t for t in tables}
    pv = per_vantage([t.vantage for t in tables], bps, options, by_name.__getitem__)

    def build(carrier: np.ndarray, when: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
        return merged_packets(tables, s, packet, carrier, when)

    return merged_analysis(matched, build, bps, options, pv, progress)


@dataclass
class Matched:
    """Every sighting matched: what the in-memory and the streamed merge hand on alike."""

    tables: list[VantageTable]
    s: pd.DataFrame
    packet: np.ndarray
    aligned: np.ndarray
    fits: list[ClockFit]
    tols: list[Tolerances]


Build = Callable[[np.ndarray, np.ndarray], tuple[pd.DataFrame, np.ndarray]]
Analyse = Callable[[pd.DataFrame, Any, pd.DataFrame | None, dict[str, Any]], Analysis]


def merged_analysis(
    m: Matched,
    build: Build,
    bps: float,
    options: dict[str, Any],
    pv: PerVantage,
    progress: Progress | None = None,
    analyse: Analyse | None = None,
) -> MergedAnalysis:
    """Paths and departures, the merged table (`build(carrier, when)`), its analysis by the
    ordinary pipeline (in one partition, or `analyse(merged, info, mads, options)`) and the
    vantage tables."""
    step = progress or (lambda _name: None)
    pk = paths.matched(m.s, m.packet, m.aligned)
    order = paths.path_order(pk)
    carrier, when = departures(m.s, m.packet, m.aligned, pk, order)
    merged, row_of = build(carrier, when)
    mads = merged_mads(m.tables, m.s, m.packet, row_of, merged)
    info = merged_info(m.tables, merged)
    if analyse is not None:
        a = analyse(merged, info, mads, {"link_speed_bps": bps, **options})
    else:
        a = analyze_packets(
            merged, info, link_speed_bps=bps, progress=progress, mads=mads, **options
        )
    step("vantages")
    b = Built(m.tables, m.s, m.packet, m.aligned, row_of)
    return _merged_result(a, b, pk, order, (m.fits, m.tols), pv)


def _merged_result(
    a: Analysis,
    b: Built,
    pk: pd.DataFrame,
    order: pd.DataFrame,
    clocks: tuple[list[ClockFit], list[Tolerances]],
    per_vantage: PerVantage,
) -> MergedAnalysis:
    """Follow the packets along their paths; the vantage tables beside the analysis."""
    fits, tols = clocks
    along = paths.along_paths(pk, order)
    cov = paths.coverage(along)
    lost = paths.vanished(along, cov)
    losses = loss_table(b, lost, a.packets)
    segments, totals = segment_tables(b, along, order, lost, a.packets)
    links = link_frames(b.names, a.pfc, a.packets)
    vt = vantage_table(b, fits, paths.missed(along, cov, len(b.tables)), tols, links)
    eps = episode_segments(a.retransmissions, losses)
    base = {f.name: getattr(a, f.name) for f in fields(a)}
    base |= {"retransmissions": eps, "findings": with_vantage_findings(a.findings, losses, vt, eps)}
    return MergedAnalysis(
        **base,
        vantages=vt,
        losses=losses,
        segments=segments,
        segment_totals=totals,
        sightings=sighting_table(b),
        per_vantage=per_vantage,
    )
