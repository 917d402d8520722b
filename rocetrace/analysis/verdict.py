"""The verdict: what happened, in one line, from the analysis tables themselves.

It never says "clean" when the capture shows NAKs, resends, PSN gaps, timeouts, stalls,
named anomalies, congestion signals, PFC pauses or any finding, whatever the findings'
severities: a reviewer reads this line first. The report, the terminal and the JSON
summary all print this one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from rocetrace.analysis.advice import entry

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


# Findings the counts below already tell; any other finding is named by its title.
COUNTED = {
    "psn_sequence_error", "rnr_nak", "timeout_retransmission", "read_reissue",
    "retransmission_unknown", "capture_gap", "congestion", "pfc_pause", "cnp_without_ce",
    "psn_reuse", "ack_unsent_psn", "stall", "qp_reuse", "reordering",
}  # fmt: skip


def _signals(a: Any) -> list[str]:
    """Congestion and PFC: CE marks, CNPs, pauses and how long they held."""
    parts = []
    ce = _flow_total(a.flows, "ecn_ce_packets")
    if ce:
        parts.append(_count(ce, "CE-marked packet"))
    cnps = len(a.cnps) if a.cnps is not None else 0
    if cnps:
        parts.append(_count(cnps, "CNP"))
    pauses = len(a.pfc_pauses) if a.pfc_pauses is not None else 0
    held = float(a.pfc["held_s"].sum()) if "held_s" in getattr(a.pfc, "columns", ()) else 0.0
    if pauses:
        parts.append(f"{_count(pauses, 'PFC pause')} ({held * 1e3:,.1f} ms paused)")
    return parts


def _named(findings: pd.DataFrame, told: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The titles of findings (but those whose code is in `told`), most severe first, with
    their QPs."""
    if findings is None or not len(findings) or "title" not in findings:
        return []
    out = []
    for r in findings.itertuples():
        if str(r.code) in told:
            continue
        listed: Any = getattr(r, "flows", None)
        flows = len(listed) if isinstance(listed, list) else 0
        title = _in_a_sentence(r.title if isinstance(r.title, str) else entry(str(r.code)).title)
        out.append(f"{title} on {_count(flows, 'QP')}" if flows else title)
    return out


def _in_a_sentence(title: str) -> str:
    """'Go-back-0 livelock' -> 'go-back-0 livelock'; 'PFC storm' and 'RoCE ...' stay."""
    word = title.split(" ", 1)[0]
    return title[0].lower() + title[1:] if word[1:] == word[1:].lower() else title


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
    return parts + _signals(a) + _named(a.findings, COUNTED)


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
    parts = _parts(a) or _named(findings)  # never "Clean" beside a finding
    level = next((s for s in SEVERITY_RANK if counts.get(s, 0)), "clean")
    if level == "clean" and parts:
        level = "info"
    if parts:
        return Verdict(level, "; ".join(parts) + ("" if _has_pfc(a) else "; no PFC"), detail)
    return Verdict(level, "Clean: no loss, no retransmission, no congestion signal", "no findings")


def _has_pfc(a: Any) -> bool:
    return a.pfc_pauses is not None and len(a.pfc_pauses) > 0
