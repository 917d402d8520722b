"""Joining the partitions' tables into the capture's: the reduce step's first move.

A partition numbers its flows by first appearance in its own rows; the capture numbers them
by first appearance in capture order. Each partition table therefore carries, per row, the
capture-order key of its frame (`_order_ts`, `_order_seq`; per flow, of its first frame):
flows are renumbered by those keys across partitions, every flow-id column follows, and the
joined rows are put in the order the registry declares (registry.Combine). The result is
the table one in-memory analysis of the whole capture gives.

Capture order is (`_order_ts`, `_order_seq`): for one file (0, frame); for several files
merged by time, the running maximum of each file's timestamps, then the file's rank and
the frame in its file (capture/files.py).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.registry import CAPTURE_ORDER, Combine, partition_tables

ORDER = ("_order_ts", "_order_seq")


@dataclass
class CaptureOrder:
    """The capture-order keys of a partition's frames, to key its tables' rows."""

    frames: np.ndarray  # the partition's frame numbers, sorted
    ts: np.ndarray  # per sorted frame: its keys
    seq: np.ndarray

    @classmethod
    def of(cls, frames: np.ndarray, ts: np.ndarray, seq: np.ndarray) -> CaptureOrder:
        by = np.argsort(frames, kind="stable")
        return cls(frames[by], ts[by], seq[by])

    def keys(self, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = np.clip(np.searchsorted(self.frames, frames), 0, max(len(self.frames) - 1, 0))
        if len(self.frames) == 0:
            return np.zeros(len(frames), np.int64), np.zeros(len(frames), np.int64)
        return self.ts[at], self.seq[at]


def keyed(table: pd.DataFrame, how: Combine, order: CaptureOrder) -> pd.DataFrame:
    """The table with the capture-order keys of each row's frame (when it is ordered by
    them)."""
    wants = how.order == CAPTURE_ORDER or CAPTURE_ORDER in how.order
    if not wants or not how.frame_column:
        return table
    ts, seq = order.keys(table[how.frame_column].to_numpy(np.int64))
    return table.assign(_order_ts=ts, _order_seq=seq)


def _renumber(col: pd.Series, new_id: np.ndarray) -> pd.Series:
    """Flow ids mapped to their capture-wide numbers, in the column's own dtype."""
    values = col.to_numpy(np.int64, na_value=-1)
    mapped = np.where(values >= 0, new_id[np.maximum(values, 0)], values)
    dtype: Any = col.dtype
    if hasattr(dtype, "numpy_dtype"):  # a nullable integer: NA stays NA
        data = np.maximum(mapped, 0).astype(dtype.numpy_dtype)
        return pd.Series(pd.arrays.IntegerArray(data, values < 0), index=col.index)
    return pd.Series(mapped.astype(dtype), index=col.index)


def flow_numbers(flows: list[pd.DataFrame]) -> list[np.ndarray]:
    """Per partition, its flow ids' capture-wide numbers: by first frame in capture order."""
    ts = np.concatenate([f["_order_ts"].to_numpy(np.int64) for f in flows])
    seq = np.concatenate([f["_order_seq"].to_numpy(np.int64) for f in flows])
    new_id = np.empty(len(ts), np.int64)
    new_id[np.lexsort((seq, ts))] = np.arange(len(ts))
    bounds = np.cumsum([0, *(len(f) for f in flows)])
    return [new_id[a:b] for a, b in itertools.pairwise(bounds)]


def _sorted(table: pd.DataFrame, how: Combine) -> pd.DataFrame:
    if len(table) == 0:
        return table.drop(columns=list(ORDER), errors="ignore")
    order = ("flow_id",) if how.order == "flow" else how.order
    if isinstance(order, str):
        order = (order,)
    keys: list[np.ndarray] = []
    for name in order:
        if name == CAPTURE_ORDER:
            keys += [table[c].to_numpy(np.int64) for c in ORDER]
        else:
            keys.append(table[name].to_numpy())
    rows = np.lexsort(tuple(reversed(keys)))
    return table.take(rows).drop(columns=list(ORDER), errors="ignore").reset_index(drop=True)


def _joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Row-wise join; empty tables are left out (their columns may be typed loosely)."""
    full = [f for f in frames if len(f)]
    if not full:
        return frames[0].drop(columns=list(ORDER), errors="ignore")
    return full[0] if len(full) == 1 else pd.concat(full, ignore_index=True)


def combine(parts: list[dict[str, pd.DataFrame]]) -> dict[str, pd.DataFrame]:
    """The capture's tables from every partition's (each keyed: `keyed`, flows by their
    first frame)."""
    numbers = flow_numbers([p["flows"] for p in parts])
    out = {}
    for name, how in partition_tables().items():
        frames = []
        for part, new_id in zip(parts, numbers, strict=True):
            table = part[name]
            renumbered = {c: _renumber(table[c], new_id) for c in how.flow_columns}
            frames.append(table.assign(**renumbered) if len(table) else table)
        out[name] = _sorted(_joined(frames), how)
    return out
