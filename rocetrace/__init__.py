"""rocetrace: a RoCEv2 protocol analyzer for packet captures."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

__version__ = "0.1.0"


def analyze(path: Any, **options: Any) -> Analysis:
    """Analyse a capture: see rocetrace.analysis.api.analyze (imported lazily: fast CLI start).
    A mapping {vantage name: path or [rotated paths]} is several captures of the same
    traffic, merged: see rocetrace.vantage.vantage_api.analyze_vantages; with `workers`,
    `scheduler`, `workdir`, `partitions` or `memory_limit` (bytes) it may stream
    (rocetrace.vantage.vantage_plan)."""
    if isinstance(path, Mapping):
        from rocetrace.vantage.vantage_plan import analyze_vantage_inputs, scale_options

        return analyze_vantage_inputs(path, scale_options(options), **options)
    from rocetrace.analysis.api import analyze as _analyze

    return _analyze(path, **options)


def load(folder: str | Path) -> Analysis:
    """An analysis saved with `Analysis.save(folder)`, every table and the capture's info."""
    from rocetrace.store import load as _load

    return _load(folder)


def __getattr__(name: str) -> ModuleType:
    """`rocetrace.psn` without an import of its own (and without numpy at CLI start-up)."""
    if name == "psn":
        return importlib.import_module("rocetrace.psn")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
