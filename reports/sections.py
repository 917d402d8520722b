"""The report's figure sections (PSN timelines, throughput, ECN/CNP, PFC), built once each.

Why a Context: the packet columns are converted to numpy once and shared by every figure;
the top flows are chosen once so the figures and the tables agree on which are graphed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from markupsafe import Markup

from rocetrace.analysis.result import Analysis
from rocetrace.reports import tables
from rocetrace.reports.data import (
    PacketArrays,
    data_flows,
    flow_keys,
    ints,
    sorted_findings,
    time_origin_ns,
)
from rocetrace.reports.figures import TimeBins, ecn_figure, pfc_figure, throughput_figure
from rocetrace.reports.figures_psn import psn_figure, psn_graph

INTROS = {
    "psn": (
        "Sequence number against time per flow. A loss shows as a NAK (red X) and a burst of "
        "resent packets (red diamonds) stepping back below the line; PSN gaps (PSNs this "
        "capture point never saw) are purple crosses, CE marks orange rings, CNPs black "
        "triangles, the peer's ACKs green. Time is counted from the first RoCE frame."
    ),
    "throughput": (
        "Bytes on the wire per flow per time bin; black triangles are the CNPs that throttled "
        "that flow (DCQCN cuts the rate, then recovers in steps)."
    ),
    "ecn": (
        "Switches mark CE when a queue passes its threshold; the receiver answers with CNPs "
        "(at most one per QP per interval). CNPs with no mark before them come from "
        "out-of-sequence or slow-restart events."
    ),
    "pfc": (
        "Share of each time bin a priority was paused (a pause lasts its quanta at the link "
        "speed, or until the same port's next PFC frame); below, every PFC frame."
    ),
}
SECTION_FOR_CODE = {
    "pfc_storm": "pfc",
    "pfc_pause": "pfc",
    "cnp_without_ce": "ecn",
    "ecn_not_capable": "ecn",
    "cnp_priority": "ecn",
    "congestion": "ecn",
    "incast": "ecn",
}


@dataclass
class FigureBlock:
    id: str
    anchor: str
    json: Markup
    height: int


@dataclass
class Section:
    id: str
    title: str
    intro: str = ""
    figures: list[FigureBlock] = field(default_factory=list)
    tables: list[tables.Table] = field(default_factory=list)
    empty: str = ""  # a line for a section that has no figure or table of a kind


def figure_block(fig: go.Figure, fig_id: str, anchor: str = "") -> FigureBlock:
    """A figure as JSON safe inside <script type="application/json"> (no "</" sequences)."""
    text = pio.to_json(fig, validate=False, pretty=False).replace("</", "<\\/")
    height = int(fig.layout.height or 400)
    return FigureBlock(fig_id, anchor or f"{fig_id}-wrap", Markup(text), height)


@dataclass
class Context:
    """What every section builder needs, computed once."""

    analysis: Analysis
    origin_ns: int
    packets: PacketArrays
    keys: pd.Series
    top: pd.DataFrame  # data flows with a PSN graph, most eventful first
    others: int  # data flows without one
    bins: TimeBins

    @classmethod
    def of(cls, analysis: Analysis, top_flows: int) -> Context:
        origin = time_origin_ns(analysis)
        pk = PacketArrays.of(analysis.packets, origin)
        duration = float(pk.ms.max()) if pk.ms.size else 0.0
        ranked = data_flows(analysis.flows, analysis.packets)
        top = ranked.head(top_flows)
        keys = flow_keys(analysis.flows)
        return cls(analysis, origin, pk, keys, top, len(ranked) - len(top), TimeBins.over(duration))

    @property
    def graphed(self) -> set[int]:
        return set(ints(self.top["flow_id"]).tolist())


def _peer_ack_rows(ctx: Context, flow: pd.Series) -> np.ndarray:
    """Rows of the ACKs (AETH syndrome kind 00) the peer sent about this flow."""
    f = ctx.analysis.flows
    none = np.zeros(0, dtype=np.int64)
    if "peer_qp" not in f or pd.isna(flow.get("peer_qp")):
        return none
    back = f[
        (f["src_ip"].astype(str) == str(flow["dst_ip"]))
        & (f["dst_ip"].astype(str) == str(flow["src_ip"]))
        & (ints(f["dest_qp"]) == int(flow["peer_qp"]))
    ]
    if back.empty:
        return none
    rows = ctx.packets.rows_of(int(back["flow_id"].iloc[0]))
    syn = ctx.packets.syndrome[rows]
    return rows[(syn >= 0) & ((syn >> 5) == 0)]


def _of_flow(table: pd.DataFrame, fid: int) -> pd.DataFrame:
    return table[ints(table["flow_id"]) == fid] if len(table) else table


def _mode_text(mode: object) -> str:
    if not isinstance(mode, str) or mode == "none":
        return "no retransmissions"
    return f"recovery: {mode}"


def psn_figure_of(ctx: Context, fid: int) -> go.Figure:
    """The tcptrace-style graph of one flow, titled with its key, role, size and mode."""
    a = ctx.analysis
    flow = a.flows[ints(a.flows["flow_id"]) == fid].iloc[0]
    acks = _peer_ack_rows(ctx, flow)
    naks, cnps = _of_flow(a.naks, fid), _of_flow(a.cnps, fid)
    graph = psn_graph(ctx.packets, flow, acks, naks, cnps, ctx.origin_ns)
    parts = [str(ctx.keys.get(fid, fid)), str(flow.get("role", ""))]
    parts += [f"{int(flow['packets']):,} packets", _mode_text(flow.get("retransmission_mode"))]
    return psn_figure(graph, " · ".join(parts))


def psn_section(ctx: Context) -> Section | None:
    """One tcptrace-style graph per top flow (none: no flow carries requests)."""
    if ctx.top.empty:
        return None
    sec = Section("psn", "PSN timelines", INTROS["psn"])
    for fid in ints(ctx.top["flow_id"]).tolist():
        fig = psn_figure_of(ctx, fid)
        sec.figures.append(figure_block(fig, f"fig-psn-{fid}", f"psn-{fid}"))
    if ctx.others > 0:
        sec.intro += (
            f" The {len(ctx.top)} most eventful flows are drawn;"
            f" {ctx.others} more are in the flow table."
        )
    return sec


def throughput_section(ctx: Context) -> Section | None:
    if ctx.top.empty:
        return None
    sec = Section("throughput", "Throughput", INTROS["throughput"])
    a = ctx.analysis
    fig = throughput_figure(ctx.packets, ctx.top, ctx.keys, a.cnps, ctx.bins, ctx.origin_ns)
    sec.figures.append(figure_block(fig, "fig-throughput"))
    return sec


def ecn_section(ctx: Context) -> Section | None:
    a = ctx.analysis
    if not ctx.packets.ce.any() and a.cnps.empty:
        return None
    sec = Section("ecn", "ECN and CNP", INTROS["ecn"])
    fig = ecn_figure(ctx.packets, a.cnps, ctx.bins, ctx.origin_ns)
    sec.figures.append(figure_block(fig, "fig-ecn"))
    return sec


def pfc_section(ctx: Context) -> Section | None:
    a = ctx.analysis
    if a.pfc.empty:
        return None
    sec = Section("pfc", "PFC", INTROS["pfc"])
    sec.figures.append(figure_block(pfc_figure(a.pfc, ctx.bins, ctx.origin_ns), "fig-pfc"))
    sec.tables.append(tables.pfc_table(a.pfc))
    return sec


def ordered_sections(ctx: Context) -> list[Section]:
    """The panels that have data, the one of the most severe finding first, so the problem
    is on first view."""
    built = (psn_section(ctx), throughput_section(ctx), ecn_section(ctx), pfc_section(ctx))
    sections = [s for s in built if s is not None]
    findings = sorted_findings(ctx.analysis.findings)
    if len(findings):
        lead = SECTION_FOR_CODE.get(str(findings["code"].iloc[0]), "psn")
        sections.sort(key=lambda s: s.id != lead)
    return sections
