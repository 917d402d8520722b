"""The HTML report and the terminal summary, rendered from analysis results only.

from rocetrace.reports import render_report, terminal_summary
path = render_report(analysis, "capture.html")
print(terminal_summary(analysis, report_path=path))
"""

from rocetrace.reports.render import render_report
from rocetrace.reports.terminal import terminal_summary

__all__ = ["render_report", "terminal_summary"]
