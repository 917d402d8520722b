"""Synthetic RoCE captures with exact ground truth: `generate(scenario, out_path, seed)`.

The scenario model (`sim`, `requester`, `responder`, `network`) decides packet by packet; the
bulk path (`bulk`) builds fault-free traffic with numpy; both feed the same frame builder
(`frames`) and truth (`truth`, `episodes`, `sidecar`). See docs/generator.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocetrace.generate.clock import Clock
from rocetrace.generate.presets import PRESETS
from rocetrace.generate.scenario import Loss, PfcOnLoss, PfcStorm, Scenario

if TYPE_CHECKING:
    from rocetrace.generate.run import Truth, generate, truth_path

_LAZY = {"Truth", "generate", "truth_path"}  # pull in numpy/numba/the writer only when used


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from rocetrace.generate import run

        return getattr(run, name)
    raise AttributeError(f"module 'rocetrace.generate' has no attribute {name!r}")


__all__ = [
    "PRESETS", "Clock", "Loss", "PfcOnLoss", "PfcStorm", "Scenario", "Truth", "generate",
    "truth_path",
]  # fmt: skip
