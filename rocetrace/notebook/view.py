"""How an Analysis shows itself: a short text repr, and in a notebook an HTML summary
(verdict, capture facts, the top findings with their advice, the most eventful flows).

Why: the dataclass' default repr printed every table, a wall of text; a notebook user
wants the verdict first and the way in (flow keys to pass to `a.flow()`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import escape

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

TOP_FINDINGS, TOP_FLOWS = 5, 10
COLORS = {"critical": "#c62828", "warning": "#ef6c00", "info": "#1565c0", "clean": "#2e7d32"}
FLOW_COLUMNS = (
    ("flow", "flow"), ("role", "role"), ("packets", "packets"),
    ("resent", "retransmitted_packets"), ("PSN gaps", "psn_gaps"),
    ("NAKs", "naks_psn_sequence_error"), ("CE", "ecn_ce_packets"), ("CNPs", "cnps"),
    ("recovery", "retransmission_mode"),
)  # fmt: skip


def _source(a: Analysis) -> str:
    from rocetrace.reports.capture_facts import capture_mapping

    cap = capture_mapping(a.capture)
    return str(cap.get("path") or cap.get("file") or "a packet table")


def _facts(a: Analysis) -> str:
    """Frames, flows and the time they span (of the selection, for a selection)."""
    from rocetrace.analysis.advice import plural

    ts = a.packets["ts_ns"] if "ts_ns" in a.packets and len(a.packets) else None
    span = f" over {(int(ts.max()) - int(ts.min())) / 1e6:,.3f} ms" if ts is not None else ""
    frames = plural(a.frame_count(), "sampled frame" if a.frames_are_sampled() else "frame")
    return f"{frames}, {plural(len(a.flows), 'flow')}{span}"


def text_repr(a: Analysis) -> str:
    """Two lines: what was analysed, and the verdict."""
    from rocetrace.analysis.advice import plural
    from rocetrace.analysis.verdict import verdict

    v = verdict(a)
    selected = " (a selection)" if a.options.get("selection") else ""
    head = f"<rocetrace Analysis of {_source(a)}{selected}: {_facts(a)}, "
    return head + f"{plural(len(a.findings), 'finding')}>\n{v.level}: {v.title}"


def _findings_html(a: Analysis) -> str:
    from rocetrace.reports.data import sorted_findings

    items = []
    for r in sorted_findings(a.findings).head(TOP_FINDINGS).to_dict("records"):
        color = COLORS.get(str(r["severity"]), "#666")
        advice = f"<br><i>What to do:</i> {escape(r['advice'])}" if r.get("advice") else ""
        items.append(
            f'<li><b style="color:{color}">{escape(str(r["severity"]).upper())}</b> '
            f"<b>{escape(r.get('title') or r['code'])}</b> <code>{escape(r['code'])}</code><br>"
            f"{escape(r['message'])}{advice}</li>"
        )
    more = len(a.findings) - TOP_FINDINGS
    tail = f"<p>… and {more} more in <code>.findings</code></p>" if more > 0 else ""
    return f"<ol>{''.join(items)}</ol>{tail}" if items else "<p>No findings.</p>"


def _cell(value: Any) -> str:
    import pandas as pd

    return (
        "–"
        if value is None or value is pd.NA
        else escape(f"{value:,}" if isinstance(value, int) else value)
    )


def _flows_html(a: Analysis) -> str:
    from rocetrace.analysis.advice import plural
    from rocetrace.reports.data import data_flows

    ranked = data_flows(a.flows, a.packets) if len(a.packets) else a.flows
    top = (ranked if len(ranked) else a.flows).head(TOP_FLOWS)
    head = "".join(f"<th>{escape(h)}</th>" for h, _ in FLOW_COLUMNS)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for _, c in FLOW_COLUMNS) + "</tr>"
        for r in top.to_dict("records")
    )
    hidden = len(a.flows) - len(top)
    note = f"<p>{plural(hidden, 'more flow')} in <code>.flows</code></p>" if hidden > 0 else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{note}"


def html_repr(a: Analysis) -> str:
    """The notebook view: verdict, facts, top findings with advice, the most eventful flows."""
    from rocetrace.analysis.verdict import verdict

    v = verdict(a)
    color = COLORS.get(v.level, "#666")
    return (
        f'<div class="rocetrace-analysis"><div style="border-left:6px solid {color};'
        f'padding:2px 10px"><b>{escape(v.title)}</b><br><small>{escape(v.detail)}</small></div>'
        f"<p><code>{escape(_source(a))}</code>: {escape(_facts(a))}</p>"
        f"<h4>Findings</h4>{_findings_html(a)}<h4>Flows, most eventful first</h4>"
        f"{_flows_html(a)}<p><small>Tables: <code>.flows .retransmissions .naks .cnps .pfc "
        f".findings .packets</code>; <code>.flow(key)</code>, <code>.select(qp=, src=, dst=, "
        f"t0=, t1=)</code>; <code>.plot.psn(key)</code>, <code>.plot.timeline()</code>, "
        f"<code>.plot.cnp()</code>; <code>.save(folder)</code></small></p></div>"
    )
