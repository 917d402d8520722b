"""The tcptrace-style PSN-versus-time graph of one flow.

Sent packets, retransmissions, PSN gaps, CE marks, the peer's ACKs and NAKs and the CNPs
that throttle the flow, each a distinct marker; hover shows frame, opcode and PSN. A second
panel zooms on the first anomaly so a go-back-N burst is visible on first view.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rocetrace.dissectors.opcodes import opcode_name
from rocetrace.psn import nearest_unwrapped, unwrap, wrap
from rocetrace.reports.data import READ_REQUEST_OPCODE, PacketArrays, ints, rel_ms
from rocetrace.reports.decimate import DEFAULT_BUDGET, breaks, keep_mask, thin
from rocetrace.reports.figstyle import GL_THRESHOLD, MARKERS, axis, layout, scatter

ZOOM_BEFORE, ZOOM_AFTER = 30, 60  # packets around the first anomaly in the zoom panel


@dataclass
class Series:
    """Points of one kind, ready to draw: x in ms, y unwrapped PSN, hover data."""

    kind: str
    x: np.ndarray
    y: np.ndarray
    frame: np.ndarray
    psn: np.ndarray
    opcode: np.ndarray

    def take(self, mask: np.ndarray, kind: str | None = None) -> Series:
        return Series(
            kind or self.kind,
            self.x[mask],
            self.y[mask],
            self.frame[mask],
            self.psn[mask],
            self.opcode[mask],
        )


@dataclass
class PsnGraph:
    """Everything drawn for one flow, and how much the clean stretches were thinned."""

    series: list[Series]
    stride: int
    focus_ms: float | None  # time of the first anomaly, None for a clean flow
    zoom: tuple[float, float] | None


def _flow_points(pk: PacketArrays, rows: np.ndarray) -> tuple[Series, np.ndarray, np.ndarray]:
    """The flow's own packets on an unwrapped PSN axis, with its jump and flag masks."""
    op = pk.opcode[rows]
    psn = pk.psn[rows]
    s = Series("sent", pk.ms[rows], unwrap(psn), pk.frame[rows], psn, op)
    must = breaks(psn, READ_REQUEST_OPCODE[op & 0xFF])
    flagged = pk.retransmitted[rows] | pk.ce[rows]
    return s, must, flagged


def _place(s: Series, x: np.ndarray, psn: np.ndarray) -> np.ndarray:
    """Other streams' PSNs (ACK, NAK) on this flow's unwrapped axis at their time."""
    if s.x.size == 0 or x.size == 0:
        return np.zeros(x.size, dtype=np.int64)
    ref = np.interp(x, s.x, s.y).astype(np.int64)
    return nearest_unwrapped(psn, ref)


def _events(s: Series, kind: str, x: np.ndarray, frame: np.ndarray, psn: Any) -> Series:
    """A series of peer events (ACK, NAK, CNP); `psn` None places them on the flow's line."""
    if psn is None:
        y = np.interp(x, s.x, s.y).round().astype(np.int64) if s.x.size else np.zeros(x.size)
        shown = wrap(y)
        return Series(kind, x, y, frame, shown, np.full(x.size, 0x81))
    y = _place(s, x, psn)
    return Series(kind, x, y, frame, psn, np.full(x.size, 0x11))


def psn_graph(
    pk: PacketArrays,
    flow: pd.Series,
    ack_rows: np.ndarray,
    naks: pd.DataFrame,
    cnps: pd.DataFrame,
    origin_ns: int,
    budget: int = DEFAULT_BUDGET,
) -> PsnGraph:
    """Collect the series of one flow's graph; clean stretches thinned to about `budget`."""
    rows = pk.rows_of(int(flow["flow_id"]))
    s, must, flagged = _flow_points(pk, rows)
    gap = pk.gap[rows]  # the analysis' PSN gaps only: a coalesced ACK's jump is none
    keep, stride = keep_mask(must | gap, flagged, budget)
    retx, ce = pk.retransmitted[rows], pk.ce[rows]
    series = [s.take(keep & ~retx), s.take(keep & retx, "retransmitted")]
    series += [s.take(gap, "gap"), s.take(keep & ce, "ce")]
    acks = ack_rows[thin(ack_rows.size, budget // 4)]
    series.append(_events(s, "ack", pk.ms[acks], pk.frame[acks], pk.psn[acks]))
    for kind in ("psn_sequence_error", "rnr"):
        k = naks[naks["kind"] == kind] if "kind" in naks else naks.iloc[0:0]
        x = rel_ms(k["ts_ns"], origin_ns)
        label = "nak" if kind == "psn_sequence_error" else "rnr"
        series.append(_events(s, label, x, ints(k["frame"]), ints(k["psn"], 0)))
    series.append(_events(s, "cnp", rel_ms(cnps["ts_ns"], origin_ns), ints(cnps["frame"]), None))
    focus = _focus(s, retx | ce | gap, series)
    return PsnGraph([x for x in series if x.x.size], stride, focus, _zoom(s, focus))


def _focus(s: Series, flagged: np.ndarray, series: list[Series]) -> float | None:
    """Time of the first anomaly: a flagged packet, a NAK or a CNP."""
    times = [s.x[flagged][:1]] + [e.x[:1] for e in series if e.kind in ("nak", "rnr", "cnp")]
    first = np.concatenate(times)
    return float(first.min()) if first.size else None


def _zoom(s: Series, focus: float | None) -> tuple[float, float] | None:
    """A window of about ZOOM_BEFORE + ZOOM_AFTER packets around the first anomaly."""
    if focus is None or s.x.size < 2:
        return None
    i = int(np.searchsorted(s.x, focus))
    lo, hi = s.x[max(i - ZOOM_BEFORE, 0)], s.x[min(i + ZOOM_AFTER, s.x.size - 1)]
    pad = (hi - lo) * 0.05 or 0.001
    return float(lo - pad), float(hi + pad)


def _traces(e: Series, gl: bool, col: int, legend: bool) -> list[Any]:
    """One trace per opcode (so hover can name it), grouped in the legend by kind."""
    label, marker = MARKERS[e.kind]
    cls = scatter(e.x.size if gl else 0)
    codes, inverse = np.unique(e.opcode, return_inverse=True)
    traces = []
    for i, code in enumerate(codes):
        m = inverse == i
        name = "CNP" if e.kind == "cnp" else opcode_name(int(code) & 0xFF)
        hover = f"<b>{label}</b> {name}<br>frame %{{customdata[0]}}<br>PSN %{{customdata[1]}}"
        traces.append(
            cls(
                x=e.x[m],
                y=e.y[m],
                mode="markers",
                marker=marker,
                name=label,
                legendgroup=e.kind,
                showlegend=legend and i == 0,
                customdata=np.stack([e.frame[m], e.psn[m]], axis=1).astype(np.uint32),
                hovertemplate=hover + "<br>%{x:.4f} ms<extra></extra>",
                xaxis=f"x{col if col > 1 else ''}",
                yaxis=f"y{col if col > 1 else ''}",
            )
        )
    return traces


def psn_figure(graph: PsnGraph, title: str) -> go.Figure:
    """The whole flow on the left, the zoom on its first anomaly on the right."""
    cols = 2 if graph.zoom else 1
    fig = make_subplots(
        rows=1,
        cols=cols,
        column_widths=[0.6, 0.4] if cols == 2 else None,
        horizontal_spacing=0.08,
        subplot_titles=["whole flow", "zoom: first anomaly"] if cols == 2 else None,
    )
    for e in graph.series:
        fig.add_traces(_traces(e, e.x.size > GL_THRESHOLD, 1, True))
    if graph.zoom:
        lo, hi = graph.zoom
        for e in graph.series:
            fig.add_traces(_traces(e.take((e.x >= lo) & (e.x <= hi)), False, 2, False))
        fig.update_xaxes(range=list(graph.zoom), row=1, col=2)
    if graph.stride > 1:
        title += f" (clean stretches: 1 in {graph.stride} packets drawn)"
    fig.update_layout(layout(title, 420))
    fig.update_xaxes(axis("time since the first RoCE frame (ms)"))
    fig.update_yaxes(axis("PSN"), tickformat="d")
    return fig
