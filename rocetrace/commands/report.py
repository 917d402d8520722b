"""`rocetrace report SOURCE -o report.html`: (re-)render the HTML report.

SOURCE is a capture (analysed first), a results bundle written by `--save-bundle` (full
report without the capture), or a JSON summary from `rocetrace analyze --json` (findings and
tables, no graphs). See docs/report.md.
"""

from __future__ import annotations

from pathlib import Path

import click

from rocetrace.reports import render_report, terminal_summary
from rocetrace.reports.bundle import load_analysis, save_bundle
from rocetrace.reports.render import DEFAULT_TOP_FLOWS, PlotlyJs, default_report_path


@click.command()
@click.argument("source", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Report file [default: SOURCE's name with .html, in the current directory].",
)
@click.option(
    "--plotlyjs",
    type=click.Choice(["inline", "cdn"]),
    default="inline",
    show_default=True,
    help="Embed plotly.js (works offline) or link it from the plotly CDN (smaller file).",
)
@click.option(
    "--top-flows",
    type=click.IntRange(min=0),
    default=DEFAULT_TOP_FLOWS,
    show_default=True,
    help="Flows drawn with a full PSN graph (most eventful first).",
)
@click.option(
    "--save-bundle",
    "bundle_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also save the analysis results to this file, to re-render later without the capture.",
)
@click.option("--link-speed", default="100G", show_default=True, help="For captures: PFC quanta.")
def report(
    source: Path,
    output: Path | None,
    plotlyjs: str,
    top_flows: int,
    bundle_path: Path | None,
    link_speed: str,
) -> None:
    """Render the HTML report of a capture, a saved bundle or a JSON summary."""
    analysis = load_analysis(source, link_speed=link_speed)
    if bundle_path is not None:
        save_bundle(analysis, bundle_path)
    out = output or default_report_path(source)
    js: PlotlyJs = "cdn" if plotlyjs == "cdn" else "inline"
    path = render_report(analysis, out, plotlyjs=js, top_flows=top_flows)
    click.echo(terminal_summary(analysis, report_path=path))
