"""Findings as a person reads them: title, what was seen, the probable cause, what to do,
the affected flows (links to their PSN graphs), the PSNs of their episodes, when, and the
evidence frames with a Wireshark filter to paste.

Why separate: the HTML report and the notebook's `_repr_html_` list findings the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from rocetrace.analysis.advice import entry
from rocetrace.flowkey import parse_flow_key
from rocetrace.reports.data import ints, seconds, sorted_findings

MAX_FRAMES = 20
MAX_FLOWS = 8  # affected flows listed by name; the rest counted


@dataclass
class FindingView:
    severity: str
    code: str
    title: str
    message: str
    cause: str
    advice: str
    flows: list[tuple[str, str | None]]  # (key, "#psn-<id>" when it has a PSN graph)
    more_flows: int
    when: str  # ms since the first RoCE frame, and wall-clock UTC
    frames: list[int] = field(default_factory=list)
    more_frames: int = 0
    psns: str = ""  # NAKed / resent PSNs of the flow's episodes

    @property
    def flow(self) -> str | None:
        return self.flows[0][0] if self.flows else None

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


def _episode_psns(retx: pd.DataFrame, flow_id: int) -> str:
    """ "NAK 4001 → resent from PSN 4000 (13 pkts)" for the flow's first few episodes."""
    if retx.empty or "flow_id" not in retx:
        return ""
    mine = retx[ints(retx["flow_id"]) == flow_id]
    parts = []
    for r in mine.head(3).to_dict("records"):
        nak = r.get("nak_psn")
        lead = f"NAK {int(nak)} → " if pd.notna(nak) else f"{r.get('trigger')}: "
        parts.append(f"{lead}resent from PSN {int(r['start_psn'])} ({int(r['packets'])} pkts)")
    more = f" and {len(mine) - 3} more episodes" if len(mine) > 3 else ""
    return "; ".join(parts) + more


def _flow_ids(keys: pd.Series) -> dict[Any, int]:
    """(src, dst, qp) -> flow id: keys are matched parsed, so hex and decimal QPs agree
    (a flow key twice: the first)."""
    out: dict[Any, int] = {}
    for fid, key in zip(keys.index.tolist(), keys.tolist(), strict=True):
        out.setdefault(_parsed(str(key)), int(fid))
    return out


def _listed(row: dict[str, Any]) -> list[str]:
    """The finding's flows: its `flows` list, else its one `flow` (older summaries)."""
    flows = row.get("flows")
    if flows is not None and len(flows):
        return [str(f) for f in flows]
    return [row["flow"]] if isinstance(row.get("flow"), str) else []


def _text(row: dict[str, Any], key: str, fallback: str = "") -> str:
    value = row.get(key)
    return str(value) if isinstance(value, str) and value else fallback


def _view(r: dict[str, Any], ids: dict[Any, int], graphed: set[int], ctx: Any) -> FindingView:
    code = str(r.get("code"))
    keys = _listed(r)
    found = [(k, ids.get(_parsed(k))) for k in keys]
    flows = [(k, f"#psn-{i}" if i is not None and i in graphed else None) for k, i in found]
    first_id = next((i for _, i in found if i is not None), None)
    listed: Any = r.get("frames")
    frames = [int(f) for f in (listed if listed is not None else [])]
    return FindingView(
        severity=str(r.get("severity")),
        code=code,
        title=_text(r, "title", entry(code).title),
        message=str(r.get("message")),
        cause=_text(r, "cause"),
        advice=_text(r, "advice"),
        flows=flows[:MAX_FLOWS],
        more_flows=max(len(flows) - MAX_FLOWS, 0),
        when=_when(r.get("first_ts"), ctx.origin_ns),
        frames=frames[:MAX_FRAMES],
        more_frames=max(len(frames) - MAX_FRAMES, 0),
        psns=_episode_psns(ctx.retx, first_id) if len(keys) == 1 and first_id is not None else "",
    )


def _parsed(key: str) -> tuple[str, str, int] | None:
    try:
        return parse_flow_key(key)
    except ValueError:
        return None


@dataclass
class _Context:
    retx: pd.DataFrame
    origin_ns: int


def finding_views(
    findings: pd.DataFrame,
    retx: pd.DataFrame,
    keys: pd.Series,
    graphed: set[int],
    origin_ns: int,
) -> list[FindingView]:
    """Findings most severe first, each with its evidence ready to print."""
    ids: dict[Any, int] = _flow_ids(keys) if len(keys) else {}
    ctx = _Context(retx, origin_ns)
    return [_view(r, ids, graphed, ctx) for r in sorted_findings(findings).to_dict("records")]
