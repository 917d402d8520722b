"""Findings: what went wrong, why, and what to do about it, with the evidence to open in
Wireshark.

Rules (finding_rules_*.py) read the finished analysis tables and yield observations, one
per code and flow (or port, host pair, capture); observations of one code become ONE
finding listing every affected flow, so sixteen QPs of one host pair with the same problem
make one line, not sixteen. Each finding gets its title, cause and advice from advice.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.advice import entry, plural
from rocetrace.flowkey import flow_keys
from rocetrace.schema import MAX_FRAMES, SEVERITIES

RANK = {s: i for i, s in enumerate(SEVERITIES)}


@dataclass
class Tables:
    """What the rules read (DataFrames, typed Any: rules index rows loosely by label)."""

    flows: Any
    retransmissions: Any
    naks: Any
    cnps: Any
    pfc_runs: Any
    low_class_cnps: Any
    sports: Any
    bad_icrc_frames: list[int]
    capture: dict[str, Any]
    capture_gaps: Any = field(default_factory=pd.DataFrame)
    anomalies: Any = field(default_factory=pd.DataFrame)
    pfc: Any = field(default_factory=pd.DataFrame)


@dataclass
class Observation:
    """One rule's finding on one flow (flow_id), one port or the whole capture (None)."""

    code: str
    count: int  # events, in the unit advice.py's `noun` names
    detail: str  # what was seen there, one clause
    ts_ns: Any  # first evidence, ns since the epoch (None or NaN: none)
    frames: list[int]
    flow_id: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        known = self.ts_ns is not None and self.ts_ns == self.ts_ns
        self.ts_ns = int(self.ts_ns) if known else None

    @property
    def when(self) -> float:
        """For sorting: the first evidence, infinity when none."""
        return float("inf") if self.ts_ns is None else self.ts_ns


def _merged_facts(group: list[Observation]) -> dict[str, list[Any]]:
    facts: dict[str, list[Any]] = {}
    for o in group:
        for k, v in o.facts.items():
            facts.setdefault(k, []).append(v)
    facts.setdefault("message", []).extend(o.detail for o in group)
    return facts


def _message(code: str, group: list[Observation], flows: list[str], pairs: int) -> str:
    """'3 NAKs (PSN sequence error) on 2 QPs; most on 10.0.0.1>10.0.0.2/0x11: at PSN 7'."""
    advice, first = entry(code), group[0]
    count = sum(o.count for o in group)
    head = advice.head(_merged_facts(group), count)
    if flows:
        head += f" on {plural(len(flows), ('QP', 'QPs'))}"
        head += f" of {plural(pairs, ('host pair', 'host pairs'))}" if pairs > 1 else ""
        lead = f"most on {flows[0]}: " if len(flows) > 1 and first.flow_id is not None else ""
        return f"{head}; {lead}{first.detail}" if first.detail else head
    if len(group) == 1:
        return first.detail
    return f"{head}; first: {first.detail}; and {len(group) - 1} more"


def _location(facts: dict[str, list[Any]]) -> str | None:
    where = {v for v in facts.get("location", []) if v}
    return None if not where else ("both" if len(where) > 1 else where.pop())


def _finding(code: str, group: list[Observation], keys: dict[int, str]) -> dict[str, Any]:
    """One finding from every observation of its code."""
    group = sorted(group, key=lambda o: (-o.count, o.when))
    ids = list(dict.fromkeys(o.flow_id for o in group if o.flow_id in keys))
    flows = [keys[i] for i in ids]
    pairs = len({k.rpartition("/")[0] for k in flows})
    facts = _merged_facts(group)
    by_time = sorted(group, key=lambda o: o.when)
    frames = list(dict.fromkeys(int(f) for o in by_time for f in o.frames if f >= 0))
    frames = frames[:MAX_FRAMES]
    times = [o.ts_ns for o in group if o.ts_ns is not None]
    first = min(times) if times else None
    advice = entry(code)
    return {
        "severity": advice.severity,
        "code": code,
        "title": advice.title,
        "message": _message(code, group, flows, pairs),
        "cause": advice.text("cause", facts),
        "advice": advice.text("advice", facts),
        "flow_id": ids[0] if len(ids) == 1 else None,
        "flows": flows,
        "count": sum(o.count for o in group),
        "first_ts": None if first is None else first / 1e9,
        "first_ts_ns": None if first is None else int(first),
        "frames": frames,
        "loss_location": _location(facts),
    }


def _keys(flows: pd.DataFrame) -> dict[int, str]:
    """Flow id -> key, for the flows observations name."""
    if flows.empty:
        return {}
    keys = flow_keys(flows["src_ip"], flows["dst_ip"], flows["dest_qp"])
    return dict(zip(flows["flow_id"].to_numpy(np.int64).tolist(), keys.tolist(), strict=True))


def observations(t: Tables) -> Iterator[Observation]:
    from rocetrace.analysis import finding_rules_capture, finding_rules_loss, finding_rules_qos

    yield from finding_rules_loss.observations(t)
    yield from finding_rules_qos.observations(t)
    yield from finding_rules_capture.observations(t)


def build_findings(t: Tables) -> pd.DataFrame:
    """One finding per code, most severe first, then by time."""
    groups: dict[str, list[Observation]] = {}
    for o in observations(t):
        groups.setdefault(o.code, []).append(o)
    keys = _keys(t.flows)
    rows = [_finding(code, group, keys) for code, group in groups.items()]
    rows.sort(key=lambda r: (-RANK[r["severity"]], r["first_ts_ns"] is None, r["first_ts_ns"] or 0))
    return pd.DataFrame(rows, columns=list(rows[0]) if rows else None)
