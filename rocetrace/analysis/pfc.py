"""PFC per priority: pause and resume frames, pause time, and continuous pauses (storms).

Each PFC frame sets a priority's pause timer anew (0 quanta = resume), so a priority stays
paused without interruption while each frame's pause outlasts the gap to the next frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.dissectors.pfc_header import pause_seconds
from rocetrace.schema.conform import empty_frame

PFC_COLUMNS = ["frame", "ts_ns", "src_mac", "priority", "quanta", "pause", "paused_s", "held_s"]
STORM_S = 0.100  # a priority paused for this long without a break is a PFC storm


def pfc_rows(packets: pd.DataFrame) -> np.ndarray:
    """Row positions of the PFC frames; on a categorical encap column, one compare of its
    codes (no string compares, no filtered copy of the packet table)."""
    encap = packets["encap"]
    if not isinstance(encap.dtype, pd.CategoricalDtype):
        return np.flatnonzero(encap.astype(object).to_numpy() == "pfc")
    names = list(encap.cat.categories)
    if "pfc" not in names:
        return np.zeros(0, np.int64)
    return np.flatnonzero(encap.cat.codes.to_numpy() == names.index("pfc"))


def _ints(packets: pd.DataFrame, name: str, rows: np.ndarray) -> np.ndarray:
    """A column at `rows` as int64, nulls as 0."""
    return packets[name].take(rows).to_numpy(dtype=np.int64, na_value=0)


def pfc_table(packets: pd.DataFrame, link_bps: float) -> pd.DataFrame:
    """One row per (PFC frame, enabled priority), by frame then priority."""
    rows = pfc_rows(packets)
    if len(rows) == 0:
        return empty_frame(dict.fromkeys(PFC_COLUMNS, object))
    enable = _ints(packets, "pfc_class_enable", rows)
    quanta = np.column_stack([_ints(packets, f"pfc_quanta_{p}", rows) for p in range(8)])
    frame = packets["frame"].take(rows).to_numpy(np.int64)
    # Priority-major (frame, priority) pairs, then a stable sort by (frame, priority).
    priority, at = np.nonzero(((enable >> np.arange(8)[:, None]) & 1) == 1)
    by = np.lexsort((priority, frame[at]))
    priority, at = priority[by], at[by]
    src_mac = packets["src_mac"].take(rows).astype(object).to_numpy()[at]
    # str when every priority has a MAC, else object: as the former per-priority concat of
    # inferred columns made it (one without any string is object, and object wins)
    every = len(np.unique(priority[pd.notna(src_mac)])) == 8
    q = quanta[at, priority]
    table = pd.DataFrame(
        {
            "frame": frame[at],
            "ts_ns": packets["ts_ns"].take(rows).to_numpy(np.int64)[at],
            "src_mac": pd.Series(src_mac, dtype="str" if every else object),
            "priority": priority.astype(np.int64),
            "quanta": q,
            "pause": q > 0,
            "paused_s": pause_seconds(1, link_bps) * q,
        }
    )
    return table.assign(held_s=_held_s(table))


def _held_s(table: pd.DataFrame) -> np.ndarray:
    """Per row, how long its pause held (the one paused time every view reports)."""
    held = _held(table.assign(_row=np.arange(len(table))))
    out = np.zeros(len(table))
    out[held["_row"].to_numpy()] = held["held_ns"].to_numpy() / 1e9
    return out


def _held(table: pd.DataFrame) -> pd.DataFrame:
    """Sorted per (sender, priority) with `held_ns`: how long each frame's pause really
    lasted (its quanta, unless the sender's next frame for that priority came first)."""
    t = table.sort_values(["src_mac", "priority", "ts_ns"], kind="stable").reset_index(drop=True)
    same = (t["src_mac"] == t["src_mac"].shift()) & (t["priority"] == t["priority"].shift())
    nxt = t["ts_ns"].shift(-1).where(same.shift(-1, fill_value=False))
    held = np.minimum(t["paused_s"] * 1e9, (nxt - t["ts_ns"]).fillna(np.inf))
    t["held_ns"] = np.where(t["pause"], held, 0.0)
    t["same"] = same
    return t


def pause_runs(table: pd.DataFrame) -> pd.DataFrame:
    """Uninterrupted pauses per (sender, priority): start, duration and frames involved."""
    cols = ["src_mac", "priority", "start_ns", "duration_s", "frames", "first_frame"]
    if table.empty:
        return empty_frame(dict.fromkeys(cols, object))
    t = _held(table)
    same = t["same"]
    # A run continues while the previous frame paused up to this one.
    prev_held_to_here = (t["held_ns"].shift() >= (t["ts_ns"] - t["ts_ns"].shift())) & same
    t["run"] = (~prev_held_to_here).cumsum()
    paused = t[t["pause"] | prev_held_to_here]
    g = paused.groupby("run")
    runs = g.agg(
        src_mac=("src_mac", "first"),
        priority=("priority", "first"),
        start_ns=("ts_ns", "first"),
        last_ns=("ts_ns", "last"),
        frames=("frame", "size"),
        first_frame=("frame", "first"),
    )
    last_held = g["held_ns"].last()
    runs["duration_s"] = (runs["last_ns"] - runs["start_ns"] + last_held) / 1e9
    return runs[cols].reset_index(drop=True)


def pfc_summary(table: pd.DataFrame, packets: pd.DataFrame) -> dict:
    """The summary's pfc object."""
    frames = len(pfc_rows(packets))
    if table.empty:
        return {"frames": frames, "pause_frames": 0, "resume_frames": 0, "by_priority": {}}
    per_frame = table.groupby("frame")["pause"].any()
    by_priority: dict[str, dict[str, Any]] = {}
    for p, g in table.groupby("priority"):
        by_priority[str(p)] = {
            "pause_frames": int(g["pause"].sum()),
            "resume_frames": int((~g["pause"]).sum()),
            "quanta_total": int(g["quanta"].sum()),
            "paused_s": float(g["held_s"].sum()),
            "quanta_s": float(g["paused_s"].sum()),
        }
    return {
        "frames": frames,
        "pause_frames": int(per_frame.sum()),
        "resume_frames": int((~per_frame).sum()),
        "by_priority": by_priority,
    }


class PauseWindows:
    """When each priority was paused, per the capture's PFC frames: each pause frame holds
    its priority from its timestamp for its quanta or until the sender's next frame for
    that priority. A paused requester is silent without any timer firing, so the time a
    flow's priority spent paused is taken off its silences (episodes/)."""

    def __init__(self, table: pd.DataFrame) -> None:
        self._windows: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if table.empty:
            return
        t = _held(table)
        paused = t[t["pause"].to_numpy(bool) & (t["held_ns"].to_numpy(float) > 0)]
        for p in np.unique(paused["priority"].to_numpy(np.int64)):
            g = paused[paused["priority"].to_numpy(np.int64) == p]
            start = g["ts_ns"].to_numpy(np.int64)
            end = start + g["held_ns"].to_numpy(float).astype(np.int64)
            self._windows[int(p)] = _merged(start, end)

    def __bool__(self) -> bool:
        return bool(self._windows)

    def overlap(self, priority: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """Per (priority, t0, t1): ns of [t0, t1) during which that priority was paused;
        a priority of -1 (unknown) counts a pause of any priority."""
        out = np.zeros(len(t0), np.int64)
        for p, (start, end) in self._windows.items():
            mine = (priority == p) | (priority < 0)
            if mine.any():
                at = np.flatnonzero(mine)
                out[at] = np.maximum(out[at], _covered(start, end, t0[at], t1[at]))
        return out


def _merged(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint, sorted intervals covering the union of [start, end)."""
    order = np.argsort(start, kind="stable")
    start, end = start[order], np.maximum.accumulate(end[order])
    new = np.ones(len(start), bool)
    new[1:] = start[1:] > end[:-1]
    groups = np.cumsum(new) - 1
    return start[new], np.maximum.reduceat(end, np.flatnonzero(new)) if len(groups) else end


def _covered(start: np.ndarray, end: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
    """Per query, how much of [t0, t1) the disjoint sorted intervals cover."""
    before = np.concatenate(([0], np.cumsum(end - start)))

    def paused_until(t: np.ndarray) -> np.ndarray:
        k = np.searchsorted(start, t, side="right")  # intervals starting at or before t
        inside = np.clip(t - start[np.maximum(k - 1, 0)], 0, None)
        last = np.minimum(inside, (end - start)[np.maximum(k - 1, 0)])
        return before[np.maximum(k - 1, 0)] + np.where(k > 0, last, 0)

    return np.maximum(paused_until(np.maximum(t1, t0)) - paused_until(t0), 0)
