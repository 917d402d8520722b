"""Where a vantage merge runs: in memory (the fast default for small inputs, as for one
capture) or streamed through shards partitioned by connection (above the memory limit, or
when workers, a scheduler, a work folder or partitions are asked for): the same rule as
rocetrace.scale.input_plan, applied to every vantage's files together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rocetrace.analysis.api import parse_link_speed
from rocetrace.capture.gunzip import MAX_GZIP_RATIO
from rocetrace.scale.input_plan import ScaleOptions, wants_streaming
from rocetrace.vantage.merged_analysis import MergedAnalysis
from rocetrace.vantage.vantage_api import Progress, analyze_vantages
from rocetrace.vantage.vantage_inputs import Vantage, vantages_of

SCALE_KEYS = ("workers", "scheduler", "workdir", "memory_limit", "partitions")


def scale_options(options: dict[str, Any]) -> ScaleOptions:
    """The scale keywords of `rocetrace.analyze({...}, workers=2, ...)`, taken out of options."""
    given = {k: options.pop(k) for k in SCALE_KEYS if k in options}
    if given.get("workdir") is not None:
        given["workdir"] = Path(given["workdir"])
    return ScaleOptions(quiet=True, **given)


def streams(vantages: Sequence[Vantage], scale: ScaleOptions) -> bool:
    """Whether the merge streams: asked for, or too large for memory (all files together)."""
    if scale.partitions is not None:
        return True
    return wants_streaming([str(f) for v in vantages for f in v.files], scale)


def analyze_vantage_inputs(
    spec: Mapping[str, Any] | Sequence[Vantage],
    scale: ScaleOptions | None = None,
    *,
    link_speed: str | float = "100G",
    roce_port: int = 4791,
    max_gzip_ratio: float = MAX_GZIP_RATIO,
    progress: Progress | None = None,
    **options: Any,
) -> MergedAnalysis:
    """The merged analysis of the vantages, in memory or streamed as `scale` and the
    files' sizes say (the result is the same)."""
    vantages = vantages_of(spec)
    scale = scale or ScaleOptions(quiet=True)
    if not streams(vantages, scale):
        return analyze_vantages(
            vantages, link_speed=link_speed, roce_port=roce_port,
            max_gzip_ratio=max_gzip_ratio, progress=progress, **options,
        )  # fmt: skip
    from rocetrace.scale.progress import stage_bars
    from rocetrace.vantage.vantage_stream import analyze_vantages_streaming

    with stage_bars(scale.quiet) as bars:
        return analyze_vantages_streaming(
            vantages, workdir=scale.workdir, workers=scale.workers, scheduler=scale.scheduler,
            partitions=scale.partitions, link_speed_bps=parse_link_speed(link_speed),
            roce_port=roce_port, max_gzip_ratio=max_gzip_ratio, stages=bars,
        )  # fmt: skip
