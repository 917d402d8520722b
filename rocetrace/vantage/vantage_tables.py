"""The vantage tables a person reads (columns declared once here): the vantages and their
clocks, the packets lost between two vantages, per flow and segment the losses, delays and
reordering, and every sighting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.vantage.clocks import ClockFit
from rocetrace.vantage.vantage_inputs import VantageTable

VANTAGE_COLUMNS: dict[str, tuple[str, str]] = {
    "name": ("object", "the vantage's name"),
    "files": ("object", "its files (list of paths), earliest first"),
    "offset_ns": (
        "Int64",
        "added to this vantage's timestamps (at pivot_ns) it puts them on "
        "the first vantage's clock",
    ),
    "drift_ppm": ("float64", "how much faster this clock runs than the first's, ppm"),
    "offset_uncertainty_ns": (
        "float64",
        "how far the aligned times may be from the truth, "
        "over the capture (NaN: not aligned: no packet crossed both ways)",
    ),
    "pivot_ns": ("int64", "the time (first vantage's clock) where offset_ns holds"),
    "matched_packets": ("int64", "distinct RoCE packets it saw that another vantage saw too"),
    "packets": ("int64", "frames in its files"),
    "missed": ("int64", "packets a vantage after it on the path saw and it did not"),
    "pfc_frames": (
        "int64",
        "PFC frames it captured (its links' pauses; one seen by two vantages is one merged row)",
    ),
    "pfc_held_s": (
        "float64",
        "how long the pauses it captured held, summed over its links and priorities",
    ),
    "malformed_packets": (
        "int64",
        "its malformed frames (never matched: each is a merged row of its own vantage)",
    ),
    "ts_resolution_ns": ("int64", "its clock's resolution"),
    "jitter_ns": ("int64", "its clock's jitter, as measured on its capture"),
}
LOSS_COLUMNS: dict[str, tuple[str, str]] = {
    "packet": ("int64", "the lost packet's frame in the merged table"),
    "flow_id": ("Int64", "its flow in the merged analysis"),
    "src_ip": ("object", "source"),
    "dst_ip": ("object", "destination"),
    "dest_qp": ("int64", "destination QP"),
    "psn": ("int64", "PSN"),
    "opcode_name": ("object", "opcode"),
    "last_seen_at": ("object", "the last vantage on its path that saw it"),
    "missing_at": ("object", "the next vantage on its path, which did not (while capturing)"),
    "ts_ns": ("int64", "when the last vantage saw it (first vantage's clock)"),
    "file": ("object", "the file of the last vantage that holds it"),
    "frame": ("int64", "its frame number in that file"),
    "resent": ("bool", "the same PSN of the flow was sent again later (the loss was real)"),
}
SEGMENT_COLUMNS: dict[str, tuple[str, str]] = {
    "flow_id": ("Int64", "flow in the merged analysis"),
    "src_ip": ("object", "source"),
    "dst_ip": ("object", "destination"),
    "dest_qp": ("int64", "destination QP"),
    "from_vantage": ("object", "segment start: a vantage on the flow's path"),
    "to_vantage": ("object", "segment end: the next vantage on the path"),
    "packets": ("int64", "packets that passed from_vantage (seen at both ends, or lost between)"),
    "losses": ("int64", "packets lost on the segment"),
    "delay_min_ns": (
        "float64",
        "one-way delay, smallest (aligned clocks; < 0: received before "
        "sent, within the clocks' resolution and jitter)",
    ),
    "delay_p50_ns": ("float64", "one-way delay, median"),
    "delay_p99_ns": ("float64", "one-way delay, 99th percentile"),
    "delay_max_ns": ("float64", "one-way delay, largest"),
    "reordered": ("int64", "packets a later one overtook on the segment"),
}
SIGHTING_OUT_COLUMNS: dict[str, tuple[str, str]] = {
    "packet": ("int64", "frame of the packet in the merged table"),
    "vantage": ("category", "where it was seen"),
    "frame": ("int64", "frame at that vantage (its files numbered on)"),
    "file": ("int16", "index of the vantage's file holding it"),
    "file_frame": ("int64", "frame number within that file"),
    "ts_ns": ("int64", "the vantage's own timestamp"),
    "aligned_ns": ("int64", "the same on the first vantage's clock"),
}


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


def typed(data: dict[str, Any], columns: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """A table with exactly the declared columns, in order and dtype."""
    return pd.DataFrame({k: pd.Series(data[k], dtype=t) for k, (t, _) in columns.items()})


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
    """VANTAGE_COLUMNS, one row per vantage in the order given; `links`: link_frames."""
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
    return typed(data, VANTAGE_COLUMNS)


def sighting_table(b: Built) -> pd.DataFrame:
    """SIGHTING_OUT_COLUMNS: one row per frame of every vantage, by merged frame."""
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
    out = typed(data, SIGHTING_OUT_COLUMNS)
    return out.sort_values(["packet", "aligned_ns"], kind="stable").reset_index(drop=True)
