"""The result of an analysis: tables a person can slice, plots on demand, the JSON summary.

Every table is declared in rocetrace/schema/ (docs/tables.md). In a notebook an Analysis
shows its verdict, top findings and busiest flows; `.flow(key)` and `.select(...)` give a
smaller Analysis; `.plot` draws; `.save(folder)` / `rocetrace.load(folder)` keep it whole.
The methods are thin: the work is in rocetrace.notebook and rocetrace.store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rocetrace.keywords import reject_unknown

if TYPE_CHECKING:
    from rocetrace.notebook.plots import Plots

SELECT_OPTIONS = ("qp", "src", "dst", "t0", "t1")


@dataclass(repr=False)
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
    # The CM connections of the capture (rocetrace.schema.CM_CONNECTIONS).
    cm_connections: pd.DataFrame = field(default_factory=pd.DataFrame)
    # The capture's clock as measured on it (rocetrace.analysis.tolerances.Tolerances).
    tolerances: Any = None
    # Named protocol anomalies (rocetrace.schema.ANOMALY_TABLE).
    anomalies: pd.DataFrame = field(default_factory=pd.DataFrame)
    # `packets` holds a sample (a streamed analysis): its link-level frames and the frames
    # its report draws (rocetrace.analysis.report_sample), not every frame.
    packets_sampled: bool = False

    def frame_count(self) -> int:
        """Frames analysed: where `packets` is only a sample, the capture's count, or for a
        selection of flows its flows' frames (a time window of a sample counts the sampled
        frames in it: `frames_are_sampled()` says so)."""
        if not self.packets_sampled or self.frames_are_sampled():
            return len(self.packets)
        if "selection" in self.options:
            return int(self.flows["packets"].sum())
        packets = getattr(self.capture, "packets", None)
        return len(self.packets) if packets is None else int(packets)

    def frames_are_sampled(self) -> bool:
        """Whether frame_count() counts sampled frames only (a time window of a sample)."""
        selection = self.options.get("selection") or {}
        windowed = selection.get("t0") is not None or selection.get("t1") is not None
        return self.packets_sampled and windowed

    def summary(self) -> dict[str, Any]:
        """The JSON summary (schema rocetrace.summary/2, docs/summary-schema.md)."""
        from rocetrace.analysis.summary import build_summary

        return build_summary(self)

    def flow(self, key: Any) -> Analysis:
        """One flow and its reverse direction: a key "10.0.0.1>10.0.0.2/0x11" (the QP in
        hex or decimal) or a flow id. KeyError names the closest keys."""
        from rocetrace.notebook.selection import flow_id_of, select, with_reverse

        fid = flow_id_of(self.flows, key)
        return select(self, with_reverse(self.flows, np.array([fid])), None, None)

    def select(self, **criteria: Any) -> Analysis:
        """The flows that match every criterion, with their reverse flows, and the events
        in a time window: `qp` (either end's QP), `src`, `dst` (IP addresses), `t0`, `t1`
        (a timestamp, UTC unless it says otherwise, or seconds since the first RoCE frame)."""
        from rocetrace.notebook.selection import matching_flows, select, with_reverse

        reject_unknown("select", criteria, SELECT_OPTIONS)
        get = criteria.get
        ids = None
        if any(get(k) is not None for k in ("qp", "src", "dst")):
            ids = with_reverse(
                self.flows, matching_flows(self.flows, get("qp"), get("src"), get("dst"))
            )
        return select(self, ids, get("t0"), get("t1"))

    @property
    def plot(self) -> Plots:
        """Figures on demand: `.psn(flow)`, `.timeline()`, `.cnp()`, `.pfc()` (plotly)."""
        from rocetrace.notebook.plots import Plots

        return Plots(self)

    def save(self, folder: str | Path) -> Path:
        """Every table (Parquet) and the capture's info (manifest.json) in a folder;
        `rocetrace.load(folder)` gives this analysis back."""
        from rocetrace.store import save

        return save(self, folder)

    def __repr__(self) -> str:
        from rocetrace.notebook.view import text_repr

        return text_repr(self)

    def _repr_html_(self) -> str:
        from rocetrace.notebook.view import html_repr

        return html_repr(self)
