"""The time-series panels: throughput per flow with CNPs, ECN/CNP, PFC pause per priority.

Each function takes analysis tables (never packets bytes) and returns one plotly figure;
every per-packet step is a numpy bincount, never a Python loop per packet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocetrace.reports.data import PacketArrays, bools, ints, rel_ms
from rocetrace.reports.figstyle import MARKERS, PRIORITY_COLORS, axis, layout, scatter

BINS = 400
# A bin must hold many packets or a rate spikes past the link speed: one 1 KiB frame in a
# 30 ns bin reads as 280 Gb/s. 2 us holds ~24 such frames at 100 Gb/s.
MIN_BIN_MS = 0.002


@dataclass(frozen=True)
class TimeBins:
    """Equal time bins over the capture, in ms since its first RoCE frame."""

    edges: np.ndarray

    @classmethod
    def over(cls, duration_ms: float, bins: int = BINS) -> TimeBins:
        span = max(duration_ms, MIN_BIN_MS)
        count = int(min(bins, max(1, span // MIN_BIN_MS)))
        return cls(np.linspace(0.0, span, count + 1))

    @property
    def centers(self) -> np.ndarray:
        return (self.edges[:-1] + self.edges[1:]) / 2

    @property
    def width_ms(self) -> float:
        return float(self.edges[1] - self.edges[0])

    def index(self, ms: np.ndarray) -> np.ndarray:
        return np.clip(np.searchsorted(self.edges, ms, side="right") - 1, 0, self.edges.size - 2)

    def count(self, ms: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(self.index(ms), weights=weights, minlength=self.edges.size - 1)


def throughput_figure(
    pk: PacketArrays,
    top: pd.DataFrame,
    keys: pd.Series,
    cnps: pd.DataFrame,
    bins: TimeBins,
    origin_ns: int,
) -> go.Figure:
    """Gb/s per top flow (the rest summed) with the CNPs that throttled each: DCQCN's reaction."""
    fig = go.Figure()
    to_gbps = 8 / (bins.width_ms * 1e-3) / 1e9
    top_ids = ints(top["flow_id"])
    in_top = np.isin(pk.flow_id, top_ids)
    for fid in top_ids:
        rows = pk.flow_id == fid
        rate = bins.count(pk.ms[rows], pk.wire_len[rows].astype(float)) * to_gbps
        fig.add_trace(
            go.Scatter(
                x=bins.centers,
                y=rate,
                mode="lines",
                name=keys.get(fid, str(fid)),
                legendgroup=str(fid),
            )
        )
        mine = cnps[ints(cnps["flow_id"]) == fid] if len(cnps) else cnps
        if len(mine):
            x = rel_ms(mine["ts_ns"], origin_ns)
            label, marker = MARKERS["cnp"]
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=rate[bins.index(x)],
                    mode="markers",
                    marker=marker,
                    name=f"{label} → {keys.get(fid, fid)}",
                    legendgroup=str(fid),
                    customdata=ints(mine["frame"]),
                    hovertemplate="CNP frame %{customdata}<br>%{x:.4f} ms<extra></extra>",
                )
            )
    rest = (pk.flow_id >= 0) & ~in_top
    if rest.any():
        rate = bins.count(pk.ms[rest], pk.wire_len[rest].astype(float)) * to_gbps
        fig.add_trace(
            go.Scatter(
                x=bins.centers,
                y=rate,
                mode="lines",
                name="all other flows",
                line={"dash": "dot", "color": "#999"},
            )
        )
    fig.update_layout(layout(f"Throughput per flow ({bins.width_ms:.3g} ms bins) with CNPs", 400))
    fig.update_xaxes(axis("time since the first RoCE frame (ms)"))
    fig.update_yaxes(axis("Gb/s"))
    return fig


def ecn_figure(pk: PacketArrays, cnps: pd.DataFrame, bins: TimeBins, origin_ns: int) -> go.Figure:
    """CE marks and CNPs over time, and (when two CNPs went to one QP) the interval
    between CNPs to the same QP; no empty histogram."""
    intervals = _cnp_intervals_us(cnps) if len(cnps) else np.zeros(0)
    both = intervals.size > 0
    fig = make_subplots(
        rows=1,
        cols=2 if both else 1,
        column_widths=[0.65, 0.35] if both else None,
        horizontal_spacing=0.1,
        subplot_titles=["CE-marked packets and CNPs per bin"]
        + (["interval between CNPs to one QP"] if both else []),
    )
    fig.add_trace(
        go.Bar(
            x=bins.centers,
            y=bins.count(pk.ms[pk.ce]),
            name="CE-marked packets",
            marker_color=MARKERS["ce"][1]["color"],
        ),
        row=1,
        col=1,
    )
    cnp_ms = rel_ms(cnps["ts_ns"], origin_ns) if len(cnps) else np.zeros(0)
    fig.add_trace(
        go.Scatter(
            x=bins.centers, y=bins.count(cnp_ms), mode="lines", name="CNPs", line={"color": "#000"}
        ),
        row=1,
        col=1,
    )
    if len(cnps):
        lone = ~bools(cnps["ce_before"]) if "ce_before" in cnps else np.zeros(len(cnps), bool)
        if lone.any():
            fig.add_trace(
                go.Scatter(
                    x=cnp_ms[lone],
                    y=np.zeros(int(lone.sum())),
                    mode="markers",
                    name="CNP with no CE before it",
                    marker={"color": "#d62728", "symbol": "triangle-down", "size": 9},
                    customdata=ints(cnps["frame"])[lone],
                    hovertemplate="CNP frame %{customdata} (no CE)<br>%{x:.4f} ms<extra></extra>",
                ),
                row=1,
                col=1,
            )
    if both:
        fig.add_trace(
            go.Histogram(x=intervals, nbinsx=60, name="CNP interval (µs)", marker_color="#555"),
            row=1,
            col=2,
        )
    fig.update_layout(layout("ECN marks and CNPs", 360, bargap=0))
    fig.update_xaxes(axis("time since the first RoCE frame (ms)"), row=1, col=1)
    fig.update_yaxes(axis("per bin"), row=1, col=1)
    if both:
        fig.update_xaxes(axis("µs between CNPs (same destination QP)"), row=1, col=2)
        fig.update_yaxes(axis("CNPs"), row=1, col=2)
    return fig


def _cnp_intervals_us(cnps: pd.DataFrame) -> np.ndarray:
    """Time between consecutive CNPs to the same (destination IP, QP)."""
    c = cnps.assign(_t=ints(cnps["ts_ns"]), _q=ints(cnps["dest_qp"]), _d=cnps["dst_ip"].astype(str))
    c = c.sort_values(["_d", "_q", "_t"])
    t, q, d = c["_t"].to_numpy(), c["_q"].to_numpy(), c["_d"].to_numpy()
    same = (q[1:] == q[:-1]) & (d[1:] == d[:-1])
    return (np.diff(t)[same]) / 1e3


def pfc_figure(pfc: pd.DataFrame, bins: TimeBins, origin_ns: int) -> go.Figure:
    """Share of each bin that each priority was paused (summed over ports), and the frames."""
    fig = make_subplots(
        rows=2, cols=1, shared_xaxes=True, row_heights=[0.65, 0.35], vertical_spacing=0.06
    )
    prio = ints(pfc["priority"])
    start = rel_ms(pfc["ts_ns"], origin_ns)
    for p in np.unique(prio):
        mine = prio == p
        covered = _paused_ms(pfc[mine], start[mine], bins)
        color = PRIORITY_COLORS[int(p) % 8]
        line = go.Scatter(
            x=bins.centers,
            y=100 * covered / bins.width_ms,
            mode="lines",
            name=f"priority {p}",
            line={"color": color, "shape": "hv"},
            legendgroup=f"p{p}",
        )
        fig.add_trace(line, row=1, col=1)
        for trace in _pfc_frame_traces(pfc[mine], start[mine], int(p), color):
            fig.add_trace(trace, row=2, col=1)
    fig.update_layout(layout("PFC: share of time paused per priority", 420))
    fig.update_yaxes(axis("% of bin paused", range=[0, 105]), row=1, col=1)
    fig.update_yaxes(axis("priority", dtick=1, range=[-0.5, 7.5]), row=2, col=1)
    fig.update_xaxes(axis("time since the first RoCE frame (ms)"), row=2, col=1)
    return fig


def _pfc_frame_traces(frames: pd.DataFrame, x: np.ndarray, p: int, color: str) -> list[Any]:
    """Pause frames as ticks, resume frames (quanta 0) as rings, on the priority's row."""
    pause = bools(frames["pause"])
    traces = []
    for kind, mask, symbol in (("pause", pause, "line-ns-open"), ("resume", ~pause, "circle")):
        n = int(mask.sum())
        if n == 0:
            continue
        hover = f"priority {p} {kind}<br>frame %{{customdata[0]}}<br>quanta %{{customdata[1]}}"
        traces.append(
            scatter(n)(
                x=x[mask],
                y=np.full(n, p),
                mode="markers",
                showlegend=False,
                legendgroup=f"p{p}",
                marker={"color": color, "size": 9, "symbol": symbol, "line": {"width": 2}},
                customdata=np.stack([ints(frames["frame"])[mask], ints(frames["quanta"])[mask]], 1),
                hovertemplate=hover + "<br>%{x:.4f} ms<extra></extra>",
            )
        )
    return traces


def _paused_ms(frames: pd.DataFrame, start: np.ndarray, bins: TimeBins) -> np.ndarray:
    """Paused time per bin: each pause lasts as long as it held (`held_s`: its quanta or
    until the same port's next frame, the analysis' one paused time), else its quanta."""
    held = "held_s" if "held_s" in frames else "paused_s"
    dur = pd.to_numeric(frames[held], errors="coerce").fillna(0).to_numpy() * 1e3
    dur = np.where(bools(frames["pause"]), dur, 0.0)
    mac = frames["src_mac"].astype(str).to_numpy()
    order = np.lexsort((start, mac))
    s, d, m = start[order], dur[order], mac[order]
    nxt = np.append(s[1:], np.inf)
    nxt[np.append(m[1:] != m[:-1], True)] = np.inf
    end = np.minimum(s + d, nxt)
    return _covered(np.sort(s), np.sort(end), bins.edges)


def _covered(starts: np.ndarray, ends: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Total interval length inside each bin: F(e) = sum(e - start) - sum(e - end) before e."""

    def before(points: np.ndarray) -> np.ndarray:
        k = np.searchsorted(points, edges, side="right")
        csum = np.concatenate([[0.0], np.cumsum(points)])
        return k * edges - csum[k]

    total = before(starts) - before(ends)
    return np.diff(total)
