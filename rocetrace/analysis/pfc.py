"""PFC per priority: pause and resume frames, pause time, and continuous pauses (storms).

Each PFC frame sets a priority's pause timer anew (0 quanta = resume), so a priority stays
paused without interruption while each frame's pause outlasts the gap to the next frame.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.dissectors.pfc import pause_seconds

PFC_COLUMNS = ["frame", "ts_ns", "src_mac", "priority", "quanta", "pause", "paused_s"]
STORM_S = 0.100  # a priority paused for this long without a break is a PFC storm


def pfc_table(packets: pd.DataFrame, link_bps: float) -> pd.DataFrame:
    """One row per (PFC frame, enabled priority)."""
    frames = packets[packets["encap"] == "pfc"]
    if frames.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in PFC_COLUMNS})
    enable = frames["pfc_class_enable"].to_numpy(dtype=np.int64, na_value=0)
    parts = []
    for p in range(8):
        on = (enable >> p) & 1 == 1
        quanta = frames[f"pfc_quanta_{p}"].to_numpy(dtype=np.int64, na_value=0)[on]
        parts.append(
            pd.DataFrame(
                {
                    "frame": frames["frame"].to_numpy(np.int64)[on],
                    "ts_ns": frames["ts_ns"].to_numpy(np.int64)[on],
                    "src_mac": frames["src_mac"].astype(object).to_numpy()[on],
                    "priority": p,
                    "quanta": quanta,
                }
            )
        )
    table = pd.concat(parts, ignore_index=True).sort_values(["frame", "priority"], kind="stable")
    table["pause"] = table["quanta"] > 0
    table["paused_s"] = pause_seconds(1, link_bps) * table["quanta"]
    return table.reset_index(drop=True)


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
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
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
    frames = int((packets["encap"] == "pfc").sum())
    per_frame = table.groupby("frame")["pause"].any() if not table.empty else pd.Series(dtype=bool)
    by_priority: dict[str, dict[str, Any]] = {}
    groups: Any = _held(table).groupby("priority") if not table.empty else []
    for p, g in groups:
        by_priority[str(int(p))] = {
            "pause_frames": int(g["pause"].sum()),
            "resume_frames": int((~g["pause"]).sum()),
            "quanta_total": int(g["quanta"].sum()),
            "paused_s": float(g["held_ns"].sum()) / 1e9,
            "quanta_s": float(g["paused_s"].sum()),
        }
    return {
        "frames": frames,
        "pause_frames": int(per_frame.sum()),
        "resume_frames": int((~per_frame).sum()),
        "by_priority": by_priority,
    }
