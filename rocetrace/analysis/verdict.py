"""The verdict: what happened, in one line, from the analysis tables themselves.

It never says "clean" when the capture shows NAKs, resends, PSN gaps, timeouts, stalls or
named anomalies, whatever the findings' severities: a reviewer reads this line first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class Verdict:
    level: str  # "critical" | "warning" | "info" | "clean"
    title: str  # what happened, one line
    detail: str  # findings by severity


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _episodes(eps: pd.DataFrame) -> str | None:
    """'3 retransmission episodes (go-back-N after NAK) on 2 QPs'."""
    if eps is None or eps.empty:
        return None
    kinds = (eps["mode"].astype(str) + " after " + eps["trigger"].astype(str)).value_counts()
    how = ", ".join(_kind(str(k), int(n), len(eps)) for k, n in kinds.items())
    qps = eps["flow_id"].nunique()
    return f"{_count(len(eps), 'retransmission episode')} ({how}) on {_count(qps, 'QP')}"


def _kind(kind: str, n: int, total: int) -> str:
    mode, trigger = kind.split(" after ")
    name = {"go-back-n": "go-back-N", "go-back-0": "go-back-0"}.get(mode, mode)
    trigger = {"nak": "NAK", "rnr": "RNR NAK", "read_reissue": "READ re-issue"}.get(
        trigger, trigger
    )
    text = f"{name} after {trigger}" if trigger != "unknown" else f"{name}, cause unknown"
    return text if n == total else f"{n} {text}"


def _flow_total(flows: pd.DataFrame, column: str) -> int:
    return int(flows[column].sum()) if flows is not None and column in flows else 0


def _parts(a: Any) -> list[str]:
    """What happened, most telling first."""
    flows = a.flows
    parts = [p for p in (_episodes(a.retransmissions),) if p]
    resent = _flow_total(flows, "retransmitted_packets")
    if resent:
        parts.append(f"{_count(resent, 'packet')} resent")
    gaps = _flow_total(flows, "psn_gaps")
    if gaps:
        parts.append(_count(gaps, "PSN gap"))
    naks = sum(_flow_total(flows, c) for c in flows.columns if c.startswith("naks_"))
    if naks:
        parts.append(_count(naks, "NAK"))
    anomalies = getattr(a, "anomalies", None)
    if anomalies is not None and len(anomalies):
        for code, n in anomalies["code"].value_counts().items():
            parts.append(_count(int(n), str(code).replace("_", " ")))
    cnps = len(a.cnps) if a.cnps is not None else 0
    if cnps:
        parts.append(_count(cnps, "CNP"))
    pfc = len(a.pfc_pauses) if a.pfc_pauses is not None else 0
    parts.append(f"{_count(pfc, 'PFC pause')}" if pfc else "no PFC")
    return parts


def _roce_packets(a: Any) -> int | None:
    """RoCE packets in the capture, from its facts (None when they do not say)."""
    for facts in (getattr(a, "capture_facts", None), a.capture):
        count = facts.get("roce_packets") if isinstance(facts, dict) else None
        count = getattr(facts, "roce_packets", count) if not isinstance(facts, dict) else count
        if isinstance(count, int):
            return count
    return None


def verdict(a: Any) -> Verdict:
    """The one-line verdict of an analysis (`rocetrace.analysis.result.Analysis`)."""
    findings = a.findings
    counts = findings["severity"].value_counts() if len(findings) else pd.Series(dtype=int)
    detail = ", ".join(f"{int(counts[s])} {s}" for s in SEVERITY_RANK if s in counts)
    if _roce_packets(a) == 0:
        level = next((s for s in SEVERITY_RANK if counts.get(s, 0)), "clean")
        detail = f"the capture holds no RoCE packets; {detail or 'no findings'}"
        return Verdict(level, "No RoCE traffic", detail)
    parts = _parts(a)
    eventful = len(parts) > 1 or parts[0] != "no PFC"
    level = next((s for s in SEVERITY_RANK if counts.get(s, 0)), "clean")
    if level == "clean" and eventful:
        level = "info"
    if eventful:
        title = "; ".join(parts)
    else:
        quiet = "no loss, no retransmission, no congestion signal"
        title = f"Clean: {quiet}" if level == "clean" else quiet[0].upper() + quiet[1:]
    return Verdict(level, title, detail or "no findings")
