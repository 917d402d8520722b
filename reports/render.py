"""render_report: one self-contained HTML file from an `Analysis` (never from packet bytes).

plotly.js is embedded once for the whole page (or linked from the CDN on request); each
figure is a JSON block that a small script draws with Plotly.newPlot, visible ones first.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import plotly.offline
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from plotly.io._utils import plotly_cdn_url

from rocetrace import __version__
from rocetrace.analysis.result import Analysis
from rocetrace.analysis.verdict import verdict
from rocetrace.output import write_text
from rocetrace.reports import tables
from rocetrace.reports.capture_facts import capture_facts, capture_mapping, headline
from rocetrace.reports.finding_views import finding_views
from rocetrace.reports.sections import Context, ordered_sections
from rocetrace.reports.vantage_section import with_vantage_section

DEFAULT_TOP_FLOWS = 8
PlotlyJs = Literal["inline", "cdn"]

TABLE_INTROS = {
    "flows": (
        "One row per direction of traffic to one QP. Highlighted rows lost or resent packets. "
        "Click a header to sort, type to filter."
    ),
    "episodes": "Every retransmission episode: what triggered it and how the sender recovered.",
    "qos": (
        "RoCE data usually rides DSCP 24/26 (priority 3) and must be ECN-capable; CNPs belong "
        "in a higher, strict-priority class (e.g. DSCP 48)."
    ),
    "entropy": "The RoCEv2 UDP source port is a flow's ECMP entropy.",
}


def _table_sections(ctx: Context) -> list[dict[str, Any]]:
    a = ctx.analysis
    built = [
        ("flows", "Flows", tables.flows_table(a.flows, ctx.graphed)),
        (
            "episodes",
            "Retransmission episodes",
            tables.episodes_table(a.retransmissions, ctx.keys, ctx.origin_ns),
        ),
        ("qos", "QoS", tables.qos_table(a.flows, a.cnps)),
        ("entropy", "ECMP entropy (UDP source ports)", tables.entropy_table(a.flows)),
    ]
    return [{"id": i, "title": t, "intro": TABLE_INTROS[i], "table": tb} for i, t, tb in built]


def build_context(
    analysis: Analysis, top_flows: int = DEFAULT_TOP_FLOWS, title: str | None = None
) -> dict[str, Any]:
    """Everything the template needs, from the analysis tables only."""
    ctx = Context.of(analysis, top_flows)
    a = analysis
    sections = with_vantage_section(ctx, ordered_sections(ctx))
    cap = capture_mapping(a.capture)
    file = cap.get("path") or cap.get("file")
    findings = finding_views(a.findings, a.retransmissions, ctx.keys, ctx.graphed, ctx.origin_ns)
    facts = capture_facts(a.capture, a.packets)
    return {
        "title": title or f"rocetrace: {Path(str(file)).name if file else 'capture'}",
        "version": __version__,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "headline": headline(facts),
        "facts": facts,
        "verdict": verdict(a),
        "findings": findings,
        "sections": sections,
        "table_sections": _table_sections(ctx),
        "figure_count": sum(len(s.figures) for s in sections),
    }


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("rocetrace.reports", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(
    analysis: Analysis,
    *,
    plotlyjs: PlotlyJs = "inline",
    top_flows: int = DEFAULT_TOP_FLOWS,
    title: str | None = None,
) -> str:
    """The report as a string (see render_report)."""
    if plotlyjs not in ("inline", "cdn"):
        raise ValueError(f"plotlyjs must be 'inline' or 'cdn', not {plotlyjs!r}")
    context = build_context(analysis, top_flows, title)
    if plotlyjs == "inline":
        context["plotlyjs_inline"] = Markup(plotly.offline.get_plotlyjs())
    else:
        context["plotlyjs_src"] = plotly_cdn_url()
    return _environment().get_template("report.html.j2").render(**context)


CAPTURE_SUFFIXES = {".gz", ".pcap", ".pcapng", ".cap", ".dmp", ".json", ".rocetrace", ".zip"}


def default_report_path(source: str | Path) -> Path:
    """`<capture stem>.html` in the current directory (x.pcap.gz -> x.html)."""
    name = Path(source).name
    while Path(name).suffix.lower() in CAPTURE_SUFFIXES:
        name = Path(name).stem
    return Path((name or "report") + ".html")


def render_report(
    analysis: Analysis,
    out_path: str | Path,
    *,
    plotlyjs: PlotlyJs = "inline",
    top_flows: int = DEFAULT_TOP_FLOWS,
    title: str | None = None,
) -> Path:
    """Write the self-contained HTML report for `analysis` to `out_path`; return the path.

    plotlyjs: "inline" embeds plotly.js once (works offline, about 4.8 MB); "cdn" links it.
    top_flows: how many of the most eventful flows get a full PSN graph (the rest are rows
    of the flow table and one "all other flows" line in the throughput graph).
    Raises OutputError (exit status 6) when the file cannot be written; a failed write
    leaves no partial file.
    """
    html = render_html(analysis, plotlyjs=plotlyjs, top_flows=top_flows, title=title)
    return write_text(out_path, html)  # whole or not at all: rocetrace.output
