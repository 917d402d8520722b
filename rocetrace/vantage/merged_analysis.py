"""The merged analysis: an Analysis of the merged table (each packet once) with the vantage
tables beside it, and each vantage's own analysis on request."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from rocetrace.analysis.result import Analysis
from rocetrace.analysis.summary import plain


class PerVantage(Mapping[str, Analysis]):
    """Each vantage's own analysis (its capture alone, its own clock), computed on first
    access: `analysis.per_vantage["rx"]`."""

    def __init__(self, names: list[str], run: Callable[[str], Analysis]) -> None:
        self._names, self._run = names, run
        self._done: dict[str, Analysis] = {}

    def __getitem__(self, name: str) -> Analysis:
        if name not in self._names:
            raise KeyError(name)
        if name not in self._done:
            self._done[name] = self._run(name)
        return self._done[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


VANTAGE_KEYS = (
    "name",
    "files",
    "offset_ns",
    "drift_ppm",
    "offset_uncertainty_ns",
    "matched_packets",
    "pivot_ns",
    "missed",
    "pfc_frames",
    "pfc_held_s",
    "malformed_packets",
)
LOSS_KEYS = (
    "flow_id",
    "src_ip",
    "dst_ip",
    "dest_qp",
    "psn",
    "opcode_name",
    "last_seen_at",
    "missing_at",
    "ts_ns",
    "file",
    "frame",
    "packet",
    "resent",
)


def _rows(df: pd.DataFrame, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        {k: (list(r[k]) if isinstance(r[k], list) else plain(r[k])) for k in keys}
        for r in df.to_dict("records")
    ]


@dataclass(repr=False)  # Analysis' own short repr, not every table
class MergedAnalysis(Analysis):
    """`packets` is the merged table (rocetrace.schema.vantage_columns.MERGED_PACKET_EXTRAS): flows,
    episodes and findings are computed on it. Vantage tables: rocetrace.vantage.vantage_tables."""

    vantages: pd.DataFrame = field(default_factory=pd.DataFrame)
    losses: pd.DataFrame = field(default_factory=pd.DataFrame)
    segments: pd.DataFrame = field(default_factory=pd.DataFrame)
    segment_totals: pd.DataFrame = field(default_factory=pd.DataFrame)
    sightings: pd.DataFrame = field(default_factory=pd.DataFrame)
    per_vantage: Mapping[str, Analysis] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The JSON summary with the keys `vantages` and `losses` (docs/summary-schema.md)."""
        out = super().summary()
        out["vantages"] = _rows(self.vantages, VANTAGE_KEYS)
        out["losses"] = _rows(self.losses, LOSS_KEYS)
        return out
