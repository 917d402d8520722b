"""`a.plot.psn()`, `a.plot.timeline()`, `a.plot.cnp()`, `a.plot.pfc()`: the report's figures
as plotly figures, on demand (a notebook shows them; `.write_html()` saves one).

Built by the report's own figure code (rocetrace.reports), so a notebook and the report
draw the same thing: PSN graphs mark only the analysis' gaps and resends, time counts from
the first RoCE frame, QPs read in hex.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocetrace.keywords import reject_unknown

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from rocetrace.analysis.result import Analysis


class Plots:
    """The figures of one analysis (or selection); each call returns a new figure."""

    def __init__(self, analysis: Analysis) -> None:
        self._a = analysis

    def _context(self, top: int) -> Any:
        from rocetrace.reports.sections import Context

        return Context.of(self._a, top)

    def psn(self, flow: Any = None, **unknown: Any) -> go.Figure:
        """The PSN-versus-time graph of one flow (a key "src>dst/0xQP" or a flow id; by
        default the most eventful flow that carries requests or responses), with its
        resends, gaps, CE marks, the peer's ACKs and NAKs and the CNPs that throttle it."""
        reject_unknown("psn", unknown, ("flow",))
        from rocetrace.notebook.selection import flow_id_of
        from rocetrace.reports.sections import psn_figure_of

        ctx = self._context(top=len(self._a.flows) or 1)
        if ctx.top.empty:
            raise ValueError("no flow here carries requests or responses: no PSN graph")
        fid = int(ctx.top["flow_id"].iloc[0]) if flow is None else flow_id_of(self._a.flows, flow)
        return psn_figure_of(ctx, fid)

    def timeline(self, top: int = 8, **unknown: Any) -> go.Figure:
        """Throughput per flow over time (the `top` most eventful; the rest as one line),
        with the CNPs each flow received: when things happened, and DCQCN's reaction."""
        reject_unknown("timeline", unknown, ("top",))
        from rocetrace.reports.figures import throughput_figure

        ctx = self._context(top)
        a = self._a
        return throughput_figure(ctx.packets, ctx.top, ctx.keys, a.cnps, ctx.bins, ctx.origin_ns)

    def cnp(self, **unknown: Any) -> go.Figure:
        """CE-marked packets and CNPs over time, and the interval between CNPs to one QP."""
        reject_unknown("cnp", unknown, ())
        from rocetrace.reports.figures import ecn_figure

        ctx = self._context(1)
        return ecn_figure(ctx.packets, self._a.cnps, ctx.bins, ctx.origin_ns)

    def pfc(self, **unknown: Any) -> go.Figure:
        """Share of time each priority was paused, and every PFC frame."""
        reject_unknown("pfc", unknown, ())
        from rocetrace.reports.figures import pfc_figure

        if self._a.pfc.empty:
            raise ValueError("no PFC frames here: no PFC figure")
        ctx = self._context(1)
        return pfc_figure(self._a.pfc, ctx.bins, ctx.origin_ns)
