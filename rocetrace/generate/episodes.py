"""Retransmission episodes as the capture point shows them.

The model knows every episode it performed; an episode is listed when at least one of its
packets is captured and counts as retransmitted there (PSN not beyond the highest seen).
Its trigger follows the contract's reading: a NAK-triggered resend whose NAK was not
captured looks like (and is listed as) a timeout.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rocetrace.generate.model import Episode, wire
from rocetrace.generate.table import ROLE_REQUEST, PacketTable
from rocetrace.generate.truth import FlowRows

NS = 1e-9


def _silence(table: PacketTable, flow: FlowRows, before: int) -> float:
    """Seconds since the flow's previous captured packet (capture index < before)."""
    prev = flow.rows[flow.rows < before]
    return float(table["ts"][before] - table["ts"][prev[-1]]) * NS if len(prev) else 0.0


def episode_truth(
    table: PacketTable,
    ep: Episode,
    counted: set[int],
    flow_of: dict[int, FlowRows],
    index_of: dict[int, int],
) -> dict[str, Any] | None:
    """One `retransmissions` entry, or None when the capture shows none of its resends."""
    mine = np.flatnonzero((table["episode"] == ep.idx) & (table["conn"] == ep.conn))
    resent = [int(i) for i in mine if int(table["role"][i]) == ep.role and int(i) in counted]
    if not resent:
        return None
    first = resent[0]
    flow = flow_of[first]
    start_at = first
    if ep.role != ROLE_REQUEST:  # READ re-issue: the new READ request opens the episode
        requests = [int(i) for i in mine if int(table["role"][i]) == ROLE_REQUEST]
        start_at = requests[0] if requests and requests[0] < first else first
    trigger, nak_psn = ep.trigger, None
    nak_at = index_of.get(ep.trigger_row, -1)
    if trigger in ("nak", "rnr") and nak_at < 0:
        trigger = "timeout"
    if trigger in ("nak", "rnr"):
        delay = float(table["ts"][start_at] - table["ts"][nak_at]) * NS
        nak_psn = int(table["psn"][nak_at]) if trigger == "nak" else None
    else:
        delay = _silence(table, flow, start_at)
    return {
        "src_ip": flow.key[0], "dst_ip": flow.key[1], "dest_qp": flow.key[2],
        "ts": float(table["ts"][start_at]) * NS, "ts_ns": int(table["ts"][start_at]),
        "trigger": trigger, "nak_psn": nak_psn,
        "start_psn": int(table["psn"][first]) if ep.role == ROLE_REQUEST else wire(ep.start_psn),
        "packets": len(resent), "mode": ep.mode, "delay_s": round(delay, 9),
    }  # fmt: skip
