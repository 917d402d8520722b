"""The short summary `rocetrace analyze` prints: verdict, top findings, counts, report path.

Plain text (no colour codes) so it reads the same in a terminal, a CI log or a ticket.
"""

from __future__ import annotations

from pathlib import Path

from rocetrace.analysis.result import Analysis
from rocetrace.reports.data import bools, ints, roce_packets, sorted_findings, verdict

TOP_FINDINGS = 5
WIDTH = 120


def _counts(a: Analysis) -> list[str]:
    """The numbers a reviewer checks first."""
    flows = a.flows

    def total(col: str) -> int:
        return int(ints(flows[col], 0).sum()) if col in flows else 0

    pause = int(bools(a.pfc["pause"]).sum()) if "pause" in a.pfc else 0
    ce = int(bools(a.packets["ce"]).sum()) if "ce" in a.packets else 0
    return [
        f"{len(a.packets):,} frames, {len(flows):,} flows",
        f"{total('retransmitted_packets'):,} retransmitted packets in "
        f"{len(a.retransmissions):,} episodes, {total('psn_gaps'):,} PSN gaps",
        f"{len(a.naks):,} NAKs, {ce:,} CE marks, {len(a.cnps):,} CNPs, {pause:,} PFC pauses",
    ]


def _finding_line(r: dict[str, object]) -> str:
    flow = f" [{r['flow']}]" if isinstance(r.get("flow"), str) else ""
    line = f"  {str(r.get('severity')).upper():<8} {r.get('code')}{flow}: {r.get('message')}"
    return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"


def terminal_summary(analysis: Analysis, report_path: str | Path | None = None) -> str:
    """A few lines: verdict, the most severe findings, counts, and where the report is."""
    v = verdict(analysis.findings, roce_packets(analysis))
    lines = [f"{v.title} ({v.detail})"]
    findings = sorted_findings(analysis.findings)
    for r in findings.head(TOP_FINDINGS).to_dict("records"):
        lines.append(_finding_line(r))
    if len(findings) > TOP_FINDINGS:
        lines.append(f"  … and {len(findings) - TOP_FINDINGS} more findings in the report")
    lines += _counts(analysis)
    if report_path is not None:
        lines.append(f"Report: {Path(report_path)}")
    return "\n".join(lines)
