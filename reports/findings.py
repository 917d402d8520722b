"""Findings in plain language with their evidence: flow, PSNs, times, frames for Wireshark.

Why separate: both the HTML report and the terminal summary list findings the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from rocetrace.reports.data import ints, seconds, sorted_findings

MAX_FRAMES = 20

CODE_TITLES = {
    "go_back_0_livelock": "Go-back-0 livelock",
    "pfc_storm": "PFC storm",
    "timeout_retransmission": "Retransmission after a timeout",
    "rnr_nak": "Receiver not ready (RNR NAK)",
    "psn_sequence_error": "Packet loss (NAK: PSN sequence error)",
    "cnp_without_ce": "CNPs without ECN marks",
    "ecn_not_capable": "RoCE traffic not ECN-capable",
    "cnp_priority": "CNPs not prioritised",
    "udp_sport_collision": "No ECMP entropy (UDP source port shared)",
    "bad_icrc": "Bad ICRC",
    "capture_gap": "Capture drops",
    "incomplete_tail": "Capture file cut off",
    "corrupt_records": "Corrupt records in the capture file",
    "malformed_frames": "Malformed RoCE frames",
}


@dataclass
class FindingView:
    severity: str
    code: str
    title: str
    message: str
    flow: str | None
    flow_anchor: str | None  # "#psn-<id>" when the flow has a PSN graph
    when: str  # ms since the first frame, and wall-clock UTC
    frames: list[int] = field(default_factory=list)
    more_frames: int = 0
    psns: str = ""  # NAKed / resent PSNs of the flow's episodes

    @property
    def wireshark_filter(self) -> str:
        return (
            "frame.number in {" + " ".join(str(f) for f in self.frames) + "}" if self.frames else ""
        )


def _when(ts: Any, origin_ns: int) -> str:
    t = seconds(ts)
    if t is None:
        return ""
    wall = datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    return f"{(t * 1e9 - origin_ns) / 1e6:,.4f} ms ({wall})"


def _episode_psns(retx: pd.DataFrame, flow_ids: pd.Series) -> dict[str, str]:
    """Per flow key: "NAK 4001 → resent from 4000 (13 pkts)" for its first few episodes."""
    out: dict[str, str] = {}
    if retx.empty:
        return out
    keys = pd.Series(ints(retx["flow_id"])).map(
        pd.Series(flow_ids.index, index=flow_ids.to_numpy())
    )
    for key, g in retx.assign(_key=keys.to_numpy()).groupby("_key"):
        parts = []
        for r in g.head(3).to_dict("records"):
            nak = r.get("nak_psn")
            lead = (
                f"NAK {int(nak)} → "
                if nak is not None and nak is not pd.NA
                else f"{r.get('trigger')}: "
            )
            parts.append(f"{lead}resent from PSN {int(r['start_psn'])} ({int(r['packets'])} pkts)")
        more = f" and {len(g) - 3} more episodes" if len(g) > 3 else ""
        out[str(key)] = "; ".join(parts) + more
    return out


def finding_views(
    findings: pd.DataFrame,
    retx: pd.DataFrame,
    keys: pd.Series,
    graphed: set[int],
    origin_ns: int,
) -> list[FindingView]:
    """Findings most severe first, each with its evidence ready to print."""
    key_to_id = pd.Series(keys.index, index=keys.to_numpy()) if len(keys) else pd.Series(dtype=int)
    key_to_id = key_to_id[~key_to_id.index.duplicated()]  # a flow key twice: the first
    psns = _episode_psns(retx, key_to_id) if len(key_to_id) else {}
    views = []
    for r in sorted_findings(findings).to_dict("records"):
        flow = r.get("flow") if isinstance(r.get("flow"), str) else None
        fid = key_to_id.get(flow) if flow else None
        frames = [int(f) for f in (r.get("frames") if r.get("frames") is not None else [])]
        views.append(
            FindingView(
                severity=str(r.get("severity")),
                code=str(r.get("code")),
                title=CODE_TITLES.get(str(r.get("code")), str(r.get("code")).replace("_", " ")),
                message=str(r.get("message")),
                flow=flow,
                flow_anchor=f"#psn-{fid}" if fid is not None and int(fid) in graphed else None,
                when=_when(r.get("first_ts"), origin_ns),
                frames=frames[:MAX_FRAMES],
                more_frames=max(len(frames) - MAX_FRAMES, 0),
                psns=psns.get(flow, "") if flow else "",
            )
        )
    return views
