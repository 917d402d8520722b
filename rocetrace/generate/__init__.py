"""Synthetic RoCE captures with exact ground truth: `generate(scenario, out_path, seed)`.

The scenario model (`sim`, `requester`, `responder`, `network`) decides packet by packet; the
bulk path (`bulk`) builds fault-free traffic with numpy; both feed the same frame builder
(`frames`) and truth (`truth`, `episodes`, `sidecar`). See docs/generator.md.
"""

from rocetrace.generate.presets import PRESETS
from rocetrace.generate.run import Truth, generate, truth_path
from rocetrace.generate.scenario import Loss, PfcStorm, Scenario

__all__ = ["PRESETS", "Loss", "PfcStorm", "Scenario", "Truth", "generate", "truth_path"]
