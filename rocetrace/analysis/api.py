"""`analyze(path_or_capture, **options) -> Analysis`: the one library call behind the CLI.

Works in a notebook: no printing, no plotting; progress only through an optional callback.
"""

from __future__ import annotations

from collections.abc import Callable
from os import PathLike
from typing import Any

import pandas as pd

from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.analysis.result import Analysis
from rocetrace.keywords import reject_unknown
from rocetrace.link import parse_link_speed

# Keyword options analyze() passes on to the pipeline.
OPTIONS = ("link_speed", "roce_port", "progress", "ts_resolution_ns")

__all__ = ["OPTIONS", "analyze", "parse_link_speed"]  # parse_link_speed: rocetrace.link


def analyze(
    path_or_capture: str | PathLike[str] | Any,
    *,
    link_speed: str | float = "100G",
    roce_port: int = 4791,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> Analysis:
    """Read a capture (a path, several paths as one capture merged by time, a folder of
    capture files, a `Capture`, or a packet-table DataFrame) and analyse it. Options beyond
    these: `ts_resolution_ns` (the clock's resolution when the file does not say it); any
    other keyword is a TypeError naming the closest option."""
    reject_unknown("analyze", options, OPTIONS)
    bps = parse_link_speed(link_speed)
    mads = None  # a bare packet table holds no MAD bytes: no CM pairing
    if isinstance(path_or_capture, pd.DataFrame):
        packets, info = path_or_capture, None
    elif hasattr(path_or_capture, "packets"):
        cap: Any = path_or_capture
        packets, info, mads = cap.packets, cap.info, getattr(cap, "mads", None)
    else:
        from rocetrace.capture.files import read_inputs

        if progress:
            progress("decode")
        cap = read_inputs(path_or_capture, roce_port=roce_port)
        packets, info, mads = cap.packets, cap.info, cap.mads
    return analyze_packets(
        packets,
        info,
        link_speed_bps=bps,
        progress=progress,
        roce_port=roce_port,
        mads=mads,
        **options,
    )
