"""The result of an analysis: DataFrames a person can slice, plus the JSON summary.

Tables and their columns are the contract in docs/analysis-tables.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd


@dataclass
class Analysis:
    packets: pd.DataFrame
    flows: pd.DataFrame
    retransmissions: pd.DataFrame
    naks: pd.DataFrame
    cnps: pd.DataFrame
    pfc: pd.DataFrame
    findings: pd.DataFrame
    capture: Any  # rocetrace.capture.CaptureInfo
    options: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The JSON summary (schema rocetrace.summary/1, docs/summary-schema.md)."""
        from rocetrace.analysis.summary import build_summary

        return build_summary(self)
