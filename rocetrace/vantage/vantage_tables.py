"""The vantage tables a person reads (declared once in rocetrace.schema.vantage_columns):
the vantages and their clocks, the packets lost between two vantages, per flow and segment
the losses, delays and reordering, and every sighting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.schema.column import Table
from rocetrace.schema.vantage_columns import SIGHTINGS, VANTAGES
from rocetrace.vantage.clocks import ClockFit
from rocetrace.vantage.vantage_inputs import VantageTable


@dataclass
class Built:
    """What the vantage stage knows, for the tables: sightings, packet ids, aligned times."""

    tables: list[VantageTable]
    s: pd.DataFrame
    packet: np.ndarray
    aligned: np.ndarray
    row_of: np.ndarray  # per packet id, its row in the merged table

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.tables]

    def located(self, sightings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per sighting row: the path of its file, the file's index in its vantage's files
        and its frame number within that file."""
        v, row = self.s["vantage"].to_numpy()[sightings], self.s["row"].to_numpy()[sightings]
        path = np.empty(len(sightings), object)
        file, frame = np.zeros(len(sightings), np.int16), row + 1
        for k, t in enumerate(self.tables):
            at = v == k
            file[at], frame[at] = t.file[row[at]], t.file_frame[row[at]]
            path[at] = np.array([str(f) for f in t.vantage.files], object)[file[at]]
        return path, file, frame


def typed(data: dict[str, Any], table: Table) -> pd.DataFrame:
    """A table with exactly its declared columns (rocetrace.schema.vantage_columns), in
    order and dtype."""
    return pd.DataFrame({c.name: pd.Series(data[c.name], dtype=c.dtype) for c in table.columns})


def link_frames(
    names: list[str], pfc: pd.DataFrame, merged: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray]:
    """Per vantage, the PFC frames it captured and how long their pauses held: a pause
    frame is per link, so each vantage counts the ones of the links it saw (the merged
    PFC table counts each frame once)."""
    frames, held = np.zeros(len(names), np.int64), np.zeros(len(names))
    if not len(pfc):
        return frames, held
    at = pfc["frame"].to_numpy(np.int64) - 1
    for v, name in enumerate(names):
        seen = merged[f"frame_{name}"].notna().to_numpy()[at]
        frames[v] = len(np.unique(at[seen]))
        held[v] = float(pfc["held_s"].to_numpy(np.float64)[seen].sum())
    return frames, held


def vantage_table(
    b: Built,
    fits: list[ClockFit],
    missed: np.ndarray,
    tolerances: list[Any],
    links: tuple[np.ndarray, np.ndarray],
) -> pd.DataFrame:
    """VANTAGES (rocetrace.schema.vantage_columns), one row per vantage in the order given;
    `links`: link_frames."""
    roce = b.s["matchable"].to_numpy() & (b.s["opcode"].to_numpy() >= 0)
    shared = np.bincount(b.packet[roce], minlength=len(b.row_of)) >= 2
    matched = np.bincount(
        b.s["vantage"].to_numpy()[roce][shared[b.packet[roce]]], minlength=len(b.tables)
    )
    data = {
        "name": [t.name for t in b.tables],
        "files": [[str(f) for f in t.vantage.files] for t in b.tables],
        "offset_ns": [f.offset_ns for f in fits],
        "drift_ppm": [f.drift_ppm for f in fits],
        "offset_uncertainty_ns": [
            np.nan if f.uncertainty_ns is None else f.uncertainty_ns for f in fits
        ],
        "pivot_ns": [f.pivot_ns for f in fits],
        "matched_packets": matched,
        "packets": [len(t.packets) for t in b.tables],
        "missed": missed,
        "pfc_frames": links[0],
        "pfc_held_s": links[1],
        "malformed_packets": [t.info.malformed_packets for t in b.tables],
        "ts_resolution_ns": [tol.resolution_ns for tol in tolerances],
        "jitter_ns": [tol.jitter_ns for tol in tolerances],
    }
    return typed(data, VANTAGES)


def sighting_table(b: Built) -> pd.DataFrame:
    """SIGHTINGS: one row per frame of every vantage, by merged frame."""
    v, row = b.s["vantage"].to_numpy(), b.s["row"].to_numpy()
    _, file, file_frame = b.located(np.arange(len(row)))
    data = {
        "packet": b.row_of[b.packet] + 1,
        "vantage": pd.Categorical.from_codes(v.astype(np.int64), pd.Index(b.names)),
        "frame": row + 1,
        "file": file,
        "file_frame": file_frame,
        "ts_ns": b.s["ts_ns"].to_numpy(),
        "aligned_ns": b.aligned,
    }
    out = typed(data, SIGHTINGS)
    return out.sort_values(["packet", "aligned_ns"], kind="stable").reset_index(drop=True)
