"""rocetrace: a RoCEv2 protocol analyzer for packet captures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

__version__ = "0.1.0"


def analyze(path: Any, **options: Any) -> Analysis:
    """Analyse a capture: see rocetrace.analysis.api.analyze (imported lazily: fast CLI start).
    A mapping {vantage name: path or [rotated paths]} is several captures of the same
    traffic, merged: see rocetrace.vantage.api.analyze_vantages."""
    if isinstance(path, Mapping):
        from rocetrace.vantage.api import analyze_vantages

        return analyze_vantages(path, **options)
    from rocetrace.analysis.api import analyze as _analyze

    return _analyze(path, **options)
