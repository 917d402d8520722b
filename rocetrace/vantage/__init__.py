"""Several vantage points, one story: captures of the same traffic at several points
(sender, receiver, a switch mirror) matched packet by packet, their clocks aligned, each
packet's path followed to say where it was lost (docs/vantages.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rocetrace.vantage.merged_analysis import MergedAnalysis


def analyze_vantages(spec: Any, **options: Any) -> MergedAnalysis:
    """See rocetrace.vantage.vantage_api.analyze_vantages (imported lazily)."""
    from rocetrace.vantage.vantage_api import analyze_vantages as run

    return run(spec, **options)
