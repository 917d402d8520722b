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


def _shows_mode(
    table: PacketTable, ep: Episode, resent: list[int], flow: FlowRows, counted: set[int]
) -> bool:
    """Does the capture show which policy resent? Not when both would have resent the same
    packets; go-back-N shows itself by three or more resends in a row, selective repeat by a
    skip (its last PSN resent too) or by new data right after its only captured resend."""
    if ep.either_policy or ep.role != ROLE_REQUEST:
        return not ep.either_policy
    if ep.mode == "go-back-n":
        return len(resent) >= 3
    if ep.mode != "selective-repeat":
        return True
    after = flow.rows[flow.rows > resent[-1]]
    new_data = len(after) > 0 and int(after[0]) not in counted
    return len({int(table["psn"][i]) for i in resent}) >= 2 or new_data


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
        "packets": len(resent), "mode": ep.mode, "mode_basis": "resent_psns",
        "mode_certain": _shows_mode(table, ep, resent, flow, counted), "delay_s": round(delay, 9),
    }  # fmt: skip


def resolve_by_host(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Episodes either policy could have sent are reported as the sending host's policy:
    selective repeat when the capture shows one certain selective-repeat episode from that
    host (a NIC-wide setting), else the IBTA default go-back-N (analysis contract)."""
    certain = [e for e in episodes if e["mode_certain"]]
    hosts_sr = {e["src_ip"] for e in certain if e["mode"] == "selective-repeat"}
    hosts_known = {e["src_ip"] for e in certain}
    for e in episodes:
        if not e["mode_certain"]:
            e["mode"] = "selective-repeat" if e["src_ip"] in hosts_sr else "go-back-n"
            e["mode_basis"] = "sending_host" if e["src_ip"] in hosts_known else "default"
    return episodes
