"""`rocetrace analyze`'s options for captures of any size (docs/scale.md): where the work
runs (--workers, --scheduler), where the shards go (--workdir), when to stream
(--memory-limit), and whether to show progress (--quiet)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])
_SIZE = re.compile(r"^\s*([0-9.]+)\s*([kKmMgGtT]?)i?[bB]?\s*$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(value: str) -> int:
    """'2G', '512M', '1.5GiB' or a number of bytes -> bytes."""
    m = _SIZE.match(value)
    if not m:
        raise click.BadParameter(f"not a size: {value!r} (try 2G)", param_hint="--memory-limit")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def scale_options(func: F) -> F:
    """--workers, --scheduler, --workdir, --memory-limit, --quiet."""
    decorators = (
        click.option(
            "--workers",
            type=click.IntRange(min=0),
            default=0,
            help="Analyse in parallel on a local Dask cluster of N worker processes (streams).",
        ),
        click.option(
            "--scheduler",
            metavar="ADDRESS",
            help="Use the Dask cluster at ADDRESS (tcp://host:8786); captures and --workdir "
            "must be on storage every worker sees.",
        ),
        click.option(
            "--workdir",
            type=click.Path(file_okay=False, path_type=Path),
            help="Keep the Parquet shards here (streams); `rocetrace analyze DIR` re-analyses "
            "them without decoding.",
        ),
        click.option(
            "--memory-limit",
            metavar="SIZE",
            help="Stream (bounded memory) when the in-memory analysis would need more than "
            "SIZE (e.g. 2G) [default: a quarter of RAM, at most 4G].",
        ),
        click.option("-q", "--quiet", is_flag=True, help="No progress on stderr."),
    )
    for decorate in reversed(decorators):
        func = decorate(func)
    return func
