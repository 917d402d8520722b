"""Options shared by the commands that write a report (`analyze`, `report`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_TOP_FLOWS = 8  # kept equal to rocetrace.reports.render.DEFAULT_TOP_FLOWS by a test
MAX_GZIP_RATIO = 200.0  # kept equal to rocetrace.capture.gunzip.MAX_GZIP_RATIO by a test


def report_options(func: F) -> F:
    """-o, --plotlyjs, --top-flows, --save-bundle, --link-speed."""
    decorators = (
        click.option(
            "-o",
            "--output",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Report file [default: the capture's name with .html, in the current directory].",
        ),
        click.option(
            "--plotlyjs",
            type=click.Choice(["inline", "cdn"]),
            default="inline",
            show_default=True,
            help="Embed plotly.js (works offline) or link it from the plotly CDN (smaller file).",
        ),
        click.option(
            "--top-flows",
            type=click.IntRange(min=0),
            default=DEFAULT_TOP_FLOWS,
            show_default=True,
            help="Flows drawn with a full PSN graph (most eventful first).",
        ),
        click.option(
            "--save-bundle",
            "bundle_path",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Also save the analysis results, to re-render later without the capture.",
        ),
        click.option(
            "--link-speed",
            default="100G",
            show_default=True,
            help="Link speed for PFC pause times and frame times on the wire (e.g. 25G, 400G).",
        ),
    )
    for decorate in reversed(decorators):
        func = decorate(func)
    return func


def gzip_ratio_option(func: F) -> F:
    """--max-gzip-ratio: the decompression-bomb guard of gzip captures (capture.gunzip)."""
    return click.option(
        "--max-gzip-ratio",
        type=click.FloatRange(min=0),
        default=MAX_GZIP_RATIO,
        show_default=True,
        help="Refuse a gzip capture expanding more than this many times its size (past 64 MiB;"
        " a decompression bomb); 0 lifts the limit.",
    )(func)
