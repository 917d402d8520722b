"""rocetrace: a RoCEv2 protocol analyzer for packet captures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

__version__ = "0.1.0"


def analyze(path: Any, **options: Any) -> Analysis:
    """Analyse a capture: see rocetrace.analysis.api.analyze (imported lazily: fast CLI start)."""
    from rocetrace.analysis.api import analyze as _analyze

    return _analyze(path, **options)
