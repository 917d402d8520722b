"""Shared look of every figure: marker styles per event kind, a lean layout, WebGL choice.

Why: the same event (a NAK, a CNP) must look the same in every panel, and the default plotly
template weighs 7 kB per figure; this one is a few hundred bytes.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

GL_THRESHOLD = 5_000  # points above which a trace uses WebGL (software WebGL is slow below)

# kind -> (legend label, marker dict)
MARKERS: dict[str, tuple[str, dict[str, Any]]] = {
    "sent": ("sent", {"color": "#4c78a8", "size": 4, "symbol": "circle"}),
    "retransmitted": ("retransmitted", {"color": "#e45756", "size": 7, "symbol": "diamond"}),
    "gap": ("PSN gap (missing here)", {"color": "#b279a2", "size": 10, "symbol": "x-thin-open"}),
    "ce": (
        "ECN CE mark",
        {"color": "#f58518", "size": 9, "symbol": "circle-open", "line": {"width": 2}},
    ),
    "ack": ("ACK", {"color": "#54a24b", "size": 5, "symbol": "triangle-up"}),
    "nak": (
        "NAK",
        {"color": "#d62728", "size": 14, "symbol": "x", "line": {"width": 1, "color": "#000"}},
    ),
    "rnr": ("RNR NAK", {"color": "#9d755d", "size": 13, "symbol": "hourglass"}),
    "cnp": ("CNP", {"color": "#000000", "size": 10, "symbol": "triangle-down"}),
}

PRIORITY_COLORS = (
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
)


LEGEND_WIDTH = 200  # px right of the plots: a legend there never covers data


def layout(title: str, height: int = 380, **extra: Any) -> dict[str, Any]:
    """A compact layout with no template: the legend in its own column right of the plots
    (a legend over the plot area hides points; one above it wraps into the title)."""
    base: dict[str, Any] = {
        "template": "none",
        "title": {"text": title, "x": 0.01, "font": {"size": 14}},
        "height": height,
        "margin": {"l": 70, "r": LEGEND_WIDTH, "t": 60, "b": 45},
        "legend": {
            "orientation": "v",
            "x": 1.01,
            "xanchor": "left",
            "y": 1,
            "yanchor": "top",
            "font": {"size": 11},
            "tracegroupgap": 2,
        },
        "hovermode": "closest",
        "plot_bgcolor": "#fff",
        "paper_bgcolor": "#fff",
        "font": {"family": "system-ui, sans-serif", "size": 12},
    }
    base.update(extra)
    return base


def axis(title: str, **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title}, "gridcolor": "#e5e5e5", "zeroline": False, **extra}


def scatter(points: int) -> type[go.Scatter] | type[go.Scattergl]:
    """WebGL for big figures (fast), SVG for small ones (each WebGL figure costs a context)."""
    return go.Scattergl if points > GL_THRESHOLD else go.Scatter
