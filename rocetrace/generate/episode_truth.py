"""Retransmission episodes as the capture point shows them.

The model knows every episode it performed; an episode is listed when at least one of its
packets is captured and counts as retransmitted there (PSN not beyond the highest seen).
Its trigger follows the contract's reading: a NAK-triggered resend whose NAK was not
captured looks like (and is listed as) a timeout; the rest of a go-back-N that another
episode's resends cut in the capture is a run of its own, with trigger unknown.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rocetrace.generate.model import PSN_HALF, PSN_MOD, Episode, unwrap, wire
from rocetrace.generate.truth import FlowRows
from rocetrace.generate.wire_table import ROLE_REQUEST, PacketTable

NS = 1e-9
COVERAGE = 0.5  # resent share of a range at most which a skip shows selective repeat


def _silence(table: PacketTable, flow: FlowRows, before: int) -> float:
    """Seconds since the flow's previous captured packet (capture index < before)."""
    prev = flow.rows[flow.rows < before]
    return float(table["ts"][before] - table["ts"][prev[-1]]) * NS if len(prev) else 0.0


def _alternative(
    table: PacketTable,
    ep: Episode,
    resent: list[int],
    flow: FlowRows,
    counted: set[int],
    redone: dict[int, int],
) -> str:
    """The other policy the capture fits as well ("" when it shows the mode). Both resend
    the same packets; go-back-N shows itself by three or more resends in a row, selective
    repeat by a skip (its last PSN resent too) or new data right after its one resend."""
    if ep.either_policy:
        return "selective-repeat"
    if ep.role != ROLE_REQUEST:
        return ""
    if ep.mode == "go-back-n" and len(resent) < 3:
        return "selective-repeat"
    if ep.mode == "selective-repeat":
        after = flow.rows[flow.rows > resent[-1]]
        new_data = len(after) > 0 and int(after[0]) not in counted
        clear = _clear_skip(table, ep, resent, redone)
        return "" if clear or new_data else "selective-repeat"
    return ""


def _clear_skip(table: PacketTable, ep: Episode, resent: list[int], redone: dict[int, int]) -> bool:
    """Do the captured resends skip at least half the PSNs from the first to the last? A
    go-back-N would have had to lose most of its resends again to look like that
    (SR_COVERAGE in the analysis contract). A skip onto the PSN after the highest one the
    capture had shown acknowledged is what a go-back-N that the ACK overtook sends too."""
    rows = np.asarray(resent)
    first = [unwrap(int(p), ep.start_psn) for p in table["psn"][rows]]
    ends = [f + int(n) - 1 for f, n in zip(first, table["span"][rows], strict=True)]
    skips = [
        k for k in range(1, len(rows))
        if first[k] != ends[k - 1] + 1
        and first[k] != _acked_before(table, ep, int(rows[k]), redone) + 1
    ]  # fmt: skip
    units = int(table["span"][rows].sum())
    return bool(skips) and units <= COVERAGE * (max(ends) - min(first) + 1)


def _acked_before(table: PacketTable, ep: Episode, before: int, redone: dict[int, int]) -> int:
    """The highest PSN of the episode's connection the capture had shown acknowledged (ACK,
    or a NAK of a later PSN) before capture index `before`, unwrapped next to the episode's
    start PSN (start - PSN_HALF when none). A NAK the requester answered by redoing the
    message (`redone`: capture index -> restart PSN) acknowledges only what precedes that
    message."""
    rows = np.flatnonzero(
        (table["conn"][:before] == ep.conn)
        & (table["role"][:before] != ROLE_REQUEST)
        & np.isin(table["opcode"][:before], (0x11, 0x12))
    )
    nak = (table["syndrome"][rows].astype(np.int64) >> 5) & 0x3 != 0
    step = (table["psn"][rows].astype(np.int64) - nak - ep.start_psn + PSN_HALF) % PSN_MOD
    acked = ep.start_psn + step - PSN_HALF  # unwrapped next to the resend's PSN
    for k in np.flatnonzero(np.isin(rows, list(redone))):  # one per go-back-0 NAK
        acked[k] = redone[int(rows[k])] - 1
    return int(acked.max(initial=ep.start_psn - PSN_HALF))


def _pieces(
    table: PacketTable, ep: Episode, resent: list[int], flow: FlowRows, reissues: np.ndarray
) -> list[list[int]]:
    """The episode's captured resends cut where another episode's resends (a selective-repeat
    NAK's, a resent READ request too) come in between: the go-back-N it interrupted resumes
    as a run of its own. READ re-issues (`reissues`: their episode numbers) ask for
    responses and cut nothing."""
    rows = flow.rows[(flow.rows >= resent[0]) & (flow.rows <= resent[-1])]
    other = (table["episode"][rows] >= 0) & (table["episode"][rows] != ep.idx)
    other &= ~np.isin(table["episode"][rows], reissues)
    wanted = set(resent[1:])
    pieces, cut = [[resent[0]]], False
    for i, interrupted in zip(rows.tolist(), other.tolist(), strict=True):
        if interrupted:
            cut = True
        elif i in wanted:
            if cut:
                pieces.append([i])
            else:
                pieces[-1].append(i)
            cut = False
    return pieces


def _resumed_truth(
    table: PacketTable, ep: Episode, piece: list[int], flow: FlowRows
) -> dict[str, Any]:
    """A resumed go-back-N run: no NAK of its own in the capture, so its trigger is unknown."""
    first = piece[0]
    either = ep.mode == "go-back-n" and len(piece) < 3
    return {
        "src_ip": flow.key[0], "dst_ip": flow.key[1], "dest_qp": flow.key[2],
        "ts": float(table["ts"][first]) * NS, "ts_ns": int(table["ts"][first]),
        "trigger": "unknown", "nak_psn": None, "start_psn": int(table["psn"][first]),
        "packets": len(piece), "mode": ep.mode, "mode_basis": "resent_psns",
        "mode_certain": not either, "alternative": "selective-repeat" if either else "",
        "delay_s": round(_silence(table, flow, first), 9),
    }  # fmt: skip


def episode_truth(
    table: PacketTable,
    ep: Episode,
    counted: set[int],
    flow_of: dict[int, FlowRows],
    index_of: dict[int, int],
    redone: dict[int, int] | None = None,
    reissues: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """The `retransmissions` entries of one episode: none when the capture shows none of its
    resends, one per run when another episode's resends cut it (_pieces)."""
    mine = np.flatnonzero((table["episode"] == ep.idx) & (table["conn"] == ep.conn))
    resent = [int(i) for i in mine if int(table["role"][i]) == ep.role and int(i) in counted]
    if not resent:
        return []
    if ep.role == ROLE_REQUEST:
        no_cut = np.zeros(0, np.int64) if reissues is None else reissues
        pieces = _pieces(table, ep, resent, flow_of[resent[0]], no_cut)
    else:
        pieces = []
    rest = [_resumed_truth(table, ep, p, flow_of[p[0]]) for p in pieces[1:]]
    resent = pieces[0] if pieces else resent
    return [_entry(table, ep, resent, counted, flow_of, index_of, mine, redone or {}), *rest]


def _entry(
    table: PacketTable,
    ep: Episode,
    resent: list[int],
    counted: set[int],
    flow_of: dict[int, FlowRows],
    index_of: dict[int, int],
    mine: np.ndarray,
    redone: dict[int, int],
) -> dict[str, Any]:
    """The entry of the episode's first (usually only) run of resends."""
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
    alternative = _alternative(table, ep, resent, flow, counted, redone)
    below = trigger == "timeout" and ep.role == ROLE_REQUEST
    below = below and _acked_before(table, ep, start_at, redone) >= ep.start_psn
    alternative = alternative or ("go-back-0" if below else "")
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
        "mode_certain": not alternative, "alternative": alternative, "delay_s": round(delay, 9),
    }  # fmt: skip


def resolve_by_host(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An episode the capture shows as go-back-N or another policy is reported as the other
    one when a certain episode of the same sending host has it (the policy is a NIC
    setting), else as the IBTA default go-back-N (analysis contract)."""
    certain = [e for e in episodes if e["mode_certain"]]
    shown = {(e["src_ip"], e["mode"]) for e in certain}
    hosts_known = {e["src_ip"] for e in certain}
    for e in episodes:
        other = e.pop("alternative")
        if not e["mode_certain"]:
            e["mode"] = other if (e["src_ip"], other) in shown else "go-back-n"
            e["mode_basis"] = "sending_host" if e["src_ip"] in hosts_known else "default"
    return episodes
