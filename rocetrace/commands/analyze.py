"""`rocetrace analyze CAPTURE`: run the analysis, write the HTML report and/or the JSON
summary, print a short verdict, map findings to an exit status.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from rocetrace import collector
from rocetrace.commands.options import gzip_ratio_option, report_options
from rocetrace.commands.scale_options import parse_size, scale_options
from rocetrace.errors import ExitStatus
from rocetrace.output import STDIO, check_outputs, write_text
from rocetrace.scale.input_plan import ScaleOptions

SEVERITIES = (
    "info",
    "warning",
    "critical",
)  # as rocetrace.analysis.findings; no pandas import here


@contextmanager
def stage_progress(quiet: bool = False) -> Iterator[Callable[[str], None] | None]:
    """A rich spinner with the current stage on stderr, only when stderr is a terminal."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("analyze", total=None)
        yield lambda stage: bar.update(task, description=f"analyze: {stage}")


def write_json(summary: dict[str, Any], path: str) -> None:
    """Write the summary to PATH (whole or not at all), or to stdout (and nothing else
    there) for '-'."""
    text = json.dumps(summary, indent=2, allow_nan=False)
    if path == STDIO:
        click.echo(text)
        return
    write_text(path, text + "\n")


def exit_status(findings_severities: list[str], fail_on: str | None) -> ExitStatus:
    """FINDINGS when any finding is at or above the --fail-on severity."""
    if fail_on is None:
        return ExitStatus.OK
    floor = SEVERITIES.index(fail_on)
    hit = any(SEVERITIES.index(s) >= floor for s in findings_severities)
    return ExitStatus.FINDINGS if hit else ExitStatus.OK


def wants_report(output: Path | None, json_path: str | None) -> bool:
    """The report is the default product; --json alone is for machines and skips it."""
    return output is not None or json_path is None


def run_analysis(
    captures: list[Path], speed: float, roce_port: int, max_gzip_ratio: float, scale: Any
) -> Any:
    """Read the captures (with the gzip ratio guard asked for) and analyse them, in memory
    or streamed (rocetrace.scale.input_plan), the stages shown on a terminal."""
    from rocetrace.scale.input_plan import analyze_inputs, load_analysis_early, streamed

    if scale.workers and not scale.scheduler:  # before any thread starts (it sets os.environ)
        from rocetrace.scale.executor import start_worker_forkserver

        start_worker_forkserver(scale.workers)
    load_analysis_early()
    inputs = [str(c) for c in captures]
    quiet = scale.quiet or streamed(inputs, scale)  # streaming shows its own bars
    with stage_progress(quiet) as progress:
        return analyze_inputs(
            inputs, scale, link_speed_bps=speed, roce_port=roce_port,
            max_gzip_ratio=max_gzip_ratio, progress=progress,
        )  # fmt: skip


def parsed_vantages(specs: tuple[str, ...]) -> list[Any]:
    """--vantage NAME=PATH[,PATH...] options as rocetrace.vantage.vantage_inputs.Vantage objects."""
    from rocetrace.vantage.vantage_inputs import parse_vantage, vantages_of

    try:
        return vantages_of([parse_vantage(spec) for spec in specs])
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--vantage") from exc


def analyse_vantages(
    specs: tuple[str, ...],
    outputs: tuple[Path | None, str | None, Path | None],
    speed: float,
    roce_port: int,
    max_gzip_ratio: float,
    scale: ScaleOptions,
) -> tuple[Path | None, Any]:
    """Several captures of the same traffic merged (rocetrace.vantage): the report path (the
    first capture's name with -merged.html, unless -o) and the analysis, in memory or
    streamed as the scale options and the files' sizes say. No output may be any vantage's
    file."""
    from rocetrace.vantage.vantage_plan import analyze_vantage_inputs, streams

    collector.resume()  # imports go on as it runs: collect as usual (rocetrace/collector.py)
    output, json_path, bundle_path = outputs
    vantages = parsed_vantages(specs)
    inputs = [f for v in vantages for f in v.files]
    named = inputs[0].with_name(f"{default_stem(inputs[0])}-merged")
    report = report_path(named, output, json_path)
    check_outputs(inputs, [json_path, bundle_path, report])
    quiet = scale.quiet or streams(vantages, scale)  # streaming shows its own bars
    with stage_progress(quiet) as progress:
        result = analyze_vantage_inputs(
            vantages, scale, link_speed=speed, roce_port=roce_port,
            max_gzip_ratio=max_gzip_ratio, progress=progress,
        )  # fmt: skip
    return report, result


def report_path(capture: Path, output: Path | None, json_path: str | None) -> Path | None:
    """Where the report goes: -o, else the capture's name with .html here (stdin.html for a
    capture read from stdin); None when only the JSON is wanted."""
    if not wants_report(output, json_path):
        return None
    from rocetrace.reports.render import default_report_path

    return output or default_report_path("stdin" if str(capture) == STDIO else capture)


def default_stem(path: Path) -> str:
    """A capture's name without its capture suffixes (x.pcap.gz -> x)."""
    from rocetrace.reports.render import default_report_path

    return default_report_path(path).stem


@click.command()
@click.argument("captures", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--vantage",
    "vantage_specs",
    multiple=True,
    metavar="NAME=PATH[,PATH...]",
    help="A capture point of the same traffic (repeat: sender, receiver, switch mirror...); "
    "several paths are the rotated pieces of one capture. Merged into one analysis.",
)
@click.option(
    "--json", "json_path", metavar="PATH", help="Write the JSON summary to PATH ('-' = stdout)."
)
@report_options
@click.option(
    "--roce-port",
    default=4791,
    show_default=True,
    type=click.IntRange(1, 65535),
    help="RoCEv2 UDP port.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    help="Exit with status 1 when a finding of this severity or worse is found.",
)
@gzip_ratio_option
@scale_options
def analyze(
    captures: tuple[Path, ...],
    json_path: str | None,
    output: Path | None,
    plotlyjs: str,
    top_flows: int,
    bundle_path: Path | None,
    link_speed: str,
    roce_port: int,
    fail_on: str | None,
    max_gzip_ratio: float,
    workers: int,
    scheduler: str | None,
    workdir: Path | None,
    memory_limit: str | None,
    quiet: bool,
    vantage_specs: tuple[str, ...] = (),
) -> int:
    """Analyse CAPTURES: flows, PSN gaps, NAKs, retransmissions, ECN/CNP, PFC, QoS.

    \b
    A capture is a file, or '-' for stdin (e.g. `tcpdump -w - | rocetrace analyze -`).
    Several files, a folder of them or a quoted glob ('x.pcap*') are one capture merged by
    time (tcpdump -C rotation, per-host captures); a shard folder from --workdir is
    re-analysed without decoding. Large captures stream in bounded memory (docs/scale.md).
    Writes CAPTURE's name with .html in the current directory (-o to choose) and prints
    a short verdict. With --json PATH the JSON summary is written too; --json alone
    (without -o) writes only the JSON. With --json - the summary is the only thing on
    stdout and the verdict goes to stderr.

    \b
    Several vantages instead of CAPTURE, e.g. captures at the sender, the receiver and a
    switch mirror of the same traffic:
      rocetrace analyze --vantage tx=a.pcap --vantage rx=b1.pcap,b2.pcap --vantage sw=c.pcapng
    match each packet's sightings, align the clocks to the first vantage's, count each
    packet once and say between which vantages each lost packet vanished.

    \b
    Exit status 0 whenever the analysis ran, whatever it found, unless --fail-on is given.
    """
    from rocetrace.link import parse_link_speed

    try:
        speed = parse_link_speed(link_speed)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--link-speed") from exc
    if bool(captures) == bool(vantage_specs):
        raise click.UsageError("give CAPTURE..., or --vantage NAME=PATH for each capture point")
    scale = ScaleOptions(
        workers, scheduler, workdir, parse_size(memory_limit) if memory_limit else None, quiet
    )
    if vantage_specs:
        outputs = (output, json_path, bundle_path)
        report, result = analyse_vantages(
            vantage_specs, outputs, speed, roce_port, max_gzip_ratio, scale
        )
    else:
        report = report_path(captures[0], output, json_path)
        check_outputs(captures, [json_path, bundle_path, report])
        result = run_analysis(list(captures), speed, roce_port, max_gzip_ratio, scale)
    if json_path:
        write_json(result.summary(), json_path)
    if bundle_path is not None:
        from rocetrace.reports.bundle import save_bundle

        save_bundle(result, bundle_path)
    if report is not None:
        from rocetrace.reports import render_report, terminal_summary

        js = "cdn" if plotlyjs == "cdn" else "inline"
        path = render_report(result, report, plotlyjs=js, top_flows=top_flows)
        click.echo(terminal_summary(result, report_path=path), err=json_path == STDIO)
    return int(exit_status(result.findings["severity"].tolist(), fail_on))
