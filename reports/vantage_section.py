"""The vantage section of a merged analysis (rocetrace.vantage): the clocks, per-segment
loss and delay, the lost packets, and one flow's timeline with a lane per vantage.

Why a Section like the others: the page renders any Section (figures, then tables), so the
merged analysis needs no template of its own; a single-capture analysis has no section.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rocetrace.reports.data import ints, rel_ms
from rocetrace.reports.figstyle import axis, layout, scatter
from rocetrace.reports.sections import Context, Section, figure_block
from rocetrace.reports.tables import Table, num, text

INTRO = (
    "The same packets captured at several points. Clocks are aligned to the first vantage's "
    "from packets that crossed both ways (offset ± uncertainty); each packet is counted once. "
    "A packet seen at one vantage and missing at the next one on its path was lost between "
    "them; 'resent' says the sender sent it again (a real loss, not a capture's miss)."
)
MAX_LOSS_ROWS = 200
MAX_TIMELINE_PACKETS = 1_500


def _us(v: Any) -> Any:
    return None if v is None or pd.isna(v) else float(v) / 1e3


def clock_table(vantages: pd.DataFrame) -> Table:
    rows = [
        [
            text(r["name"]),
            text(", ".join(r["files"])),
            num(_us(r["offset_ns"]), "{:,.3f}"),
            num(r["drift_ppm"], "{:+.2f}"),
            num(_us(r["offset_uncertainty_ns"]), "{:,.3f}"),
            num(int(r["matched_packets"])),
            num(int(r["missed"])),
        ]
        for r in vantages.to_dict("records")
    ]
    headers = ["vantage", "files", "offset µs", "drift ppm", "± µs", "matched", "missed"]
    note = "offset: added to a vantage's timestamps, it puts them on the first vantage's clock"
    return Table("vantages", headers, rows, {2, 3, 4, 5, 6}, note)


def segment_table(totals: pd.DataFrame) -> Table:
    rows = [
        [
            text(r["from_vantage"]),
            text(r["to_vantage"]),
            num(int(r["flows"])),
            num(int(r["packets"])),
            num(int(r["losses"])),
            num(_us(r["delay_p50_ns"]), "{:,.3f}"),
            num(_us(r["delay_p99_ns"]), "{:,.3f}"),
            num(_us(r["delay_max_ns"]), "{:,.3f}"),
            num(int(r["reordered"])),
        ]
        for r in totals.to_dict("records")
    ]
    headers = [
        "from",
        "to",
        "flows",
        "packets",
        "lost",
        "delay p50 µs",
        "p99 µs",
        "max µs",
        "reordered",
    ]
    hot = [int(r["losses"]) > 0 for r in totals.to_dict("records")]
    return Table("segments", headers, rows, set(range(2, 9)), highlight=hot)


def loss_table(losses: pd.DataFrame) -> Table:
    shown = losses.head(MAX_LOSS_ROWS)
    rows = [
        [
            text(f"{r['src_ip']}>{r['dst_ip']}/{int(r['dest_qp'])}"),
            num(int(r["psn"])),
            text(r["opcode_name"]),
            text(r["last_seen_at"]),
            text(r["missing_at"]),
            text(r["file"]),
            num(int(r["frame"])),
            text("yes" if r["resent"] else "no"),
        ]
        for r in shown.to_dict("records")
    ]
    headers = ["flow", "PSN", "opcode", "last seen at", "missing at", "file", "frame", "resent"]
    more = len(losses) - len(shown)
    return Table(
        "losses", headers, rows, {1, 6}, f"{more} more in the JSON summary" if more else ""
    )


def chosen_flow(a: Any) -> int | None:
    """The flow the timeline shows: the one that lost most between vantages, else the
    busiest one seen at two vantages or more."""
    seg = a.segments[a.segments["flow_id"].notna()]
    if seg.empty:
        return None
    per = seg.groupby("flow_id")[["losses", "packets"]].sum()
    return int(per.sort_values(["losses", "packets"], ascending=False).index[0])


def _lanes(s: pd.DataFrame, ts: pd.Series) -> list[str]:
    """Vantages in path order: by their median delay after the packet's merged time."""
    lag = (s["aligned_ns"] - s["packet"].map(ts)).groupby(s["vantage"], observed=True).median()
    return [str(v) for v in lag.sort_values().index]


def _ladder(packet: np.ndarray, x: np.ndarray, lane: np.ndarray) -> tuple[Any, Any]:
    """Line coordinates joining the sightings of each packet (rows grouped by packet), a
    gap (None) between packets."""
    group = np.concatenate([[0], np.cumsum(packet[1:] != packet[:-1])])
    at = np.arange(len(packet)) + group
    lx = np.full(len(packet) + int(group[-1]) + 1 if len(packet) else 0, None, object)
    ly = lx.copy()
    lx[at], ly[at] = x, lane
    return lx.tolist(), ly.tolist()


def _lost_trace(lost: pd.DataFrame, origin_ns: int) -> go.Scatter:
    """A red X on the lane of the vantage that should have seen each lost packet next."""
    return go.Scatter(
        x=rel_ms(lost["ts_ns"], origin_ns),
        y=lost["missing_at"].astype(str),
        mode="markers",
        name="lost before here",
        text=[f"PSN {int(p)}" for p in lost["psn"]],
        marker={"color": "#d62728", "size": 12, "symbol": "x"},
        hoverinfo="x+y+text",
    )


def timeline_figure(a: Any, flow_id: int, origin_ns: int) -> go.Figure:
    """One lane per vantage: each sighting of the flow's packets at its aligned time, a
    line joining the sightings of one packet, a red X where a lost packet went missing."""
    pk = a.packets[ints(a.packets["flow_id"]) == flow_id].head(MAX_TIMELINE_PACKETS)
    ts = pd.Series(pk["ts_ns"].to_numpy(), index=pk["frame"].to_numpy())
    s = a.sightings[a.sightings["packet"].isin(ts.index)].sort_values(["packet", "aligned_ns"])
    lanes = _lanes(s, ts)
    x, lane = rel_ms(s["aligned_ns"], origin_ns), s["vantage"].astype(str).to_numpy()
    psn = s["packet"].map(pd.Series(ints(pk["psn"]), index=ts.index)).to_numpy()
    fig = go.Figure()
    lx, ly = _ladder(s["packet"].to_numpy(), x, lane)
    fig.add_trace(
        go.Scatter(
            x=lx,
            y=ly,
            mode="lines",
            name="one packet",
            line={"color": "#c7c7c7", "width": 1},
            hoverinfo="skip",
        )
    )
    fig.add_trace(
        scatter(len(x))(
            x=x,
            y=lane,
            mode="markers",
            name="sighting",
            marker={"color": "#4c78a8", "size": 5},
            text=[f"PSN {p}" for p in psn],
            hoverinfo="x+y+text",
        )
    )
    lost = a.losses[ints(a.losses["flow_id"]) == flow_id]
    if len(lost):
        fig.add_trace(_lost_trace(lost, origin_ns))
    flow = a.flows[ints(a.flows["flow_id"]) == flow_id].iloc[0]
    title = f"{flow['src_ip']}>{flow['dst_ip']}/{int(flow['dest_qp'])}: sightings per vantage"
    fig.update_layout(
        **layout(title, height=160 + 70 * len(lanes)),
        xaxis=axis("ms (first vantage's clock)"),
        yaxis=axis("", categoryorder="array", categoryarray=lanes[::-1]),
    )
    return fig


def vantage_section(ctx: Context) -> Section | None:
    """The section, or None for an analysis of one capture."""
    a = ctx.analysis
    vantages = getattr(a, "vantages", None)
    if vantages is None or len(vantages) == 0:
        return None
    sec = Section("vantages", "Vantage points", INTRO)
    flow = chosen_flow(a)
    if flow is not None:
        fig = timeline_figure(a, flow, ctx.origin_ns)
        sec.figures.append(figure_block(fig, "fig-vantage-timeline"))
    sec.tables.append(clock_table(vantages))
    sec.tables.append(segment_table(a.segment_totals))
    if len(a.losses):
        sec.tables.append(loss_table(a.losses))
    else:
        sec.empty = "No packet was lost between two vantages."
    return sec


def with_vantage_section(ctx: Context, sections: list[Section]) -> list[Section]:
    """The vantage section first when it locates losses (the question after 'was there
    loss?' is 'where?'), else after the others."""
    sec = vantage_section(ctx)
    if sec is None:
        return sections
    lost = len(getattr(ctx.analysis, "losses", ())) > 0
    return [sec, *sections] if lost else [*sections, sec]
