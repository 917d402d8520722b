"""`rocetrace report SOURCE -o report.html`: (re-)render the HTML report.

SOURCE is a capture (analysed first), a results bundle written by `--save-bundle` (full
report without the capture), a JSON summary from `rocetrace analyze --json` (findings and
tables, no graphs), or a shard folder from `rocetrace analyze --workdir` (analysed again
without decoding, docs/scale.md). See docs/report.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rocetrace.commands.options import report_options
from rocetrace.output import check_outputs


@click.command()
@click.argument("source", type=click.Path(path_type=Path))
@report_options
def report(
    source: Path,
    output: Path | None,
    plotlyjs: str,
    top_flows: int,
    bundle_path: Path | None,
    link_speed: str,
) -> None:
    """Render the HTML report of a capture, a saved bundle or a JSON summary."""
    from rocetrace.reports import render_report, terminal_summary
    from rocetrace.reports.bundle import save_bundle
    from rocetrace.reports.render import default_report_path

    out = output or default_report_path(source)
    check_outputs([source], [out, bundle_path])
    analysis = _shards_or_results(source, link_speed)
    if bundle_path is not None:
        save_bundle(analysis, bundle_path)
    js = "cdn" if plotlyjs == "cdn" else "inline"
    path = render_report(analysis, out, plotlyjs=js, top_flows=top_flows)
    click.echo(terminal_summary(analysis, report_path=path))


def _shards_or_results(source: Path, link_speed: str) -> Any:
    """A shard folder (`analyze --workdir`) is analysed again without decoding; anything
    else is what load_analysis reads."""
    from rocetrace.scale.shard_folder import is_shard_folder

    if is_shard_folder(source):
        from rocetrace.link import parse_link_speed
        from rocetrace.scale.engine import analyze_shards

        return analyze_shards(source, link_speed_bps=parse_link_speed(link_speed))
    from rocetrace.reports.bundle import load_analysis

    return load_analysis(source, link_speed=link_speed)
