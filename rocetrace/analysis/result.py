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
    capture: Any  # rocetrace.capture.CaptureInfo, or None for a packet table analysed directly
    options: dict[str, Any] = field(default_factory=dict)
    # Beyond the contract tables: continuous pauses per (sender, priority), UDP source-port
    # entropy per host pair, the capture facts the summary reports and the CM connections.
    pfc_pauses: pd.DataFrame = field(default_factory=pd.DataFrame)
    udp_sports: pd.DataFrame = field(default_factory=pd.DataFrame)
    capture_facts: dict[str, Any] = field(default_factory=dict)
    # The CM connections of the capture (rocetrace.analysis.cm.CONNECTION_DTYPES).
    cm_connections: pd.DataFrame = field(default_factory=pd.DataFrame)
    # The capture's clock as measured on it (rocetrace.analysis.tolerances.Tolerances).
    tolerances: Any = None
    # Named protocol anomalies (rocetrace.analysis.anomalies.ANOMALY_COLUMNS).
    anomalies: pd.DataFrame = field(default_factory=pd.DataFrame)

    def summary(self) -> dict[str, Any]:
        """The JSON summary (schema rocetrace.summary/2, docs/summary-schema.md)."""
        from rocetrace.analysis.summary import build_summary

        return build_summary(self)
