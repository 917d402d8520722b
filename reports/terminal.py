"""The short summary `rocetrace analyze` prints: verdict, top findings, counts, report path.

Plain text (no colour codes) so it reads the same in a terminal, a CI log or a ticket;
wrapped to the terminal's width (never cut), the verdict line the report and JSON carry.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from rocetrace.analysis.advice import entry, plural
from rocetrace.analysis.result import Analysis
from rocetrace.analysis.verdict import verdict
from rocetrace.reports.data import bools, ints, sorted_findings

TOP_FINDINGS = 5
MIN_WIDTH, DEFAULT_WIDTH = 60, 100
INDENT = " " * 11


def width() -> int:
    """The terminal's width (COLUMNS, else the tty's, else 100), at least 60."""
    return max(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns, MIN_WIDTH)


def _counts(a: Analysis) -> list[str]:
    """The numbers a reviewer checks first."""
    flows = a.flows

    def total(col: str) -> int:
        return int(ints(flows[col], 0).sum()) if col in flows else 0

    pause = int(bools(a.pfc["pause"]).sum()) if "pause" in a.pfc else 0
    ce = int(bools(a.packets["ce"]).sum()) if "ce" in a.packets else 0
    episodes = len(a.retransmissions)
    return [
        f"{plural(a.frame_count(), 'frame')}, {plural(len(flows), 'flow')}",
        f"{plural(total('retransmitted_packets'), 'retransmitted packet')} in "
        f"{plural(episodes, 'episode')}, {plural(total('psn_gaps'), 'PSN gap')}",
        f"{plural(len(a.naks), 'NAK')}, {plural(ce, 'CE mark')}, {plural(len(a.cnps), 'CNP')}, "
        f"{plural(pause, 'PFC pause frame')}",
    ]


def _wrapped(text: str, columns: int, first: str = "", rest: str = INDENT) -> list[str]:
    return textwrap.wrap(text, columns, initial_indent=first, subsequent_indent=rest) or [first]


def _finding_lines(r: dict[str, object], columns: int) -> list[str]:
    """A finding in a few wrapped lines: severity and title, what was seen, cause, advice."""
    title = r.get("title") if isinstance(r.get("title"), str) else entry(str(r.get("code"))).title
    lines = _wrapped(
        f"{title} [{r.get('code')}]", columns, f"  {str(r.get('severity')).upper():<8} "
    )
    lines += _wrapped(str(r.get("message")), columns, INDENT)
    for label, key in (("cause: ", "cause"), ("do: ", "advice")):
        value = r.get(key)
        if isinstance(value, str) and value:
            lines += _wrapped(label + value, columns, INDENT)
    return lines


def terminal_summary(
    analysis: Analysis, report_path: str | Path | None = None, columns: int | None = None
) -> str:
    """A few lines that fit the terminal (or `columns`): verdict, the most severe findings
    with their cause and advice, counts, and where the report is."""
    columns = columns or width()
    v = verdict(analysis)
    lines = _wrapped(f"{v.title} ({v.detail})", columns, "", "  ")
    findings = sorted_findings(analysis.findings)
    for r in findings.head(TOP_FINDINGS).to_dict("records"):
        lines += _finding_lines(r, columns)
    if len(findings) > TOP_FINDINGS:
        lines.append(f"  … and {len(findings) - TOP_FINDINGS} more findings in the report")
    for count in _counts(analysis):
        lines += _wrapped(count, columns, "", "  ")
    if report_path is not None:
        lines.append(f"Report: {Path(report_path)}")
    return "\n".join(lines)
