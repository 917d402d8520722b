"""Ground truth, counted from what the capture point holds, with the names and meanings of the
analysis summary contract (schema rocetrace.summary/2, issue "Per-QP analysis").

Counts that depend on the vantage point (retransmitted packets, PSN gaps, CE marks, CNPs
without CE, episode packets and delays) are computed on the captured frames in capture order;
what only the model knows (why a resend happened, what was lost) comes from the simulation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rocetrace.dissectors.aeth import AckKind, NakCode
from rocetrace.generate.hosts import Hosts
from rocetrace.generate.model import PSN_HALF, PSN_MOD, Conn, Message
from rocetrace.generate.wire_table import MALFORMED, ROCE, ROLE_REQUEST, ROLE_RESPONSE, PacketTable

NAK_NAMES = {
    NakCode.PSN_SEQUENCE_ERROR: "psn_sequence_error",
    NakCode.INVALID_REQUEST: "invalid_request",
    NakCode.REMOTE_ACCESS_ERROR: "remote_access_error",
    NakCode.REMOTE_OPERATIONAL_ERROR: "remote_operational_error",
}
NAK_KEYS = (
    "psn_sequence_error",
    "rnr",
    "invalid_request",
    "remote_access_error",
    "remote_operational_error",
)
READ_RESPONSES = (0x0D, 0x0E, 0x0F, 0x10)
CNP = 0x81
FlowKey = tuple[str, str, int]


def unwrap_seq(psn: np.ndarray) -> np.ndarray:
    """Unwrap 24-bit PSNs taken in order: each step is read modulo 2^24 as a signed step."""
    if len(psn) == 0:
        return psn.astype(np.int64)
    p = psn.astype(np.int64)
    steps = (np.diff(p) + PSN_HALF) % PSN_MOD - PSN_HALF
    return np.concatenate([[p[0]], p[0] + np.cumsum(steps)])


def retransmitted(psn: np.ndarray, span: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(retransmitted mask, PSNs skipped before each packet) over PSN-consuming packets."""
    u = unwrap_seq(psn)
    end = u + span.astype(np.int64) - 1
    prev = np.maximum.accumulate(np.concatenate([[u[0] - 1 if len(u) else 0], end]))[:-1]
    again = u <= prev
    skipped = np.where(again, 0, u - prev - 1)
    if len(skipped):
        skipped[0] = 0
    return again, skipped


@dataclass
class FlowRows:
    """Indices (into the captured table) of one flow's packets and of what relates to it."""

    key: FlowKey
    conn: int
    role: int
    rows: np.ndarray


def flow_key(hosts: Hosts, table: PacketTable, i: int) -> FlowKey:
    return (
        hosts.ip_str(int(table["src"][i])),
        hosts.ip_str(int(table["dst"][i])),
        int(table["dest_qp"][i]),
    )


def group_by_key(table: PacketTable, mask: np.ndarray) -> list[np.ndarray]:
    """Row indices of each (src, dst, dest_qp) among the masked rows, by first appearance."""
    idx = np.flatnonzero(mask)
    key = table["src"][idx].astype(np.int64) << 40 | table["dst"][idx].astype(np.int64) << 24
    key |= table["dest_qp"][idx].astype(np.int64)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(inverse, kind="stable")
    groups = np.split(idx[order], np.flatnonzero(np.diff(inverse[order])) + 1) if len(idx) else []
    return [groups[g] for g in np.argsort(first, kind="stable")]


def find_flows(table: PacketTable, hosts: Hosts) -> list[FlowRows]:
    """Flows in order of first appearance: RoCE frames other than CNPs, by (src, dst, qp)."""
    in_flow = (table["kind"] == ROCE) | ((table["kind"] == MALFORMED) & (table["malformed"] == 1))
    in_flow &= table["opcode"] != CNP
    return [
        FlowRows(
            flow_key(hosts, table, int(v[0])), int(table["conn"][v[0]]), int(table["role"][v[0]]), v
        )
        for v in group_by_key(table, in_flow)
    ]


def read_gaps(table: PacketTable, rows: np.ndarray, messages: list[Message]) -> int:
    """Response PSNs skipped within each READ (a later response of the same READ came first).
    Vectorized over all READs of the flow: a running maximum per READ, in capture order."""
    resp = rows[np.isin(table["opcode"][rows], READ_RESPONSES)]
    if not len(resp):
        return 0
    reads, group = np.unique(table["msg"][resp], return_inverse=True)
    first = np.array([messages[int(m)].first for m in reads], dtype=np.int64)[group]
    k = (table["psn"][resp].astype(np.int64) - first) % PSN_MOD
    order = np.argsort(group, kind="stable")
    g, k = group[order].astype(np.int64), k[order]
    lift = 2 * PSN_MOD * g  # each READ's offsets above every earlier READ's: one running max
    hi = np.maximum.accumulate(k + lift) - lift
    prev = np.concatenate([[-1], hi[:-1]])
    prev[np.concatenate([[True], g[1:] != g[:-1]])] = -1
    return int(np.clip(k - prev - 1, 0, None).sum())


def nak_counts(table: PacketTable, rows: np.ndarray) -> dict[str, int]:
    counts = dict.fromkeys(NAK_KEYS, 0)
    acks = rows[table["opcode"][rows] == 0x11]
    for syn in table["syndrome"][acks]:
        kind = (int(syn) >> 5) & 0x3
        if kind == AckKind.RNR_NAK:
            counts["rnr"] += 1
        elif kind == AckKind.NAK and (int(syn) & 0x1F) in NAK_NAMES:
            counts[NAK_NAMES[NakCode(int(syn) & 0x1F)]] += 1
    return counts


def cnp_counts(table: PacketTable, rows: np.ndarray, cnps: np.ndarray) -> tuple[int, int]:
    """(CNPs, CNPs with no CE-marked packet of the flow since the previous CNP)."""
    ce = rows[table["ecn"][rows] == 3]
    events = sorted([(int(i), True) for i in ce] + [(int(i), False) for i in cnps])
    without, seen_ce = 0, False
    for _, is_ce in events:
        if is_ce:
            seen_ce = True
        else:
            without += not seen_ce
            seen_ce = False
    return len(cnps), without


def psn_or_none(values: np.ndarray) -> int | None:
    return int(values[0]) if len(values) else None


def flow_truth(
    table: PacketTable, f: FlowRows, conns: list[Conn], ctx: dict[str, Any]
) -> dict[str, Any]:
    """One entry of `flows`, counted at the capture point."""
    rows = f.rows
    consuming = rows[table["span"][rows] > 0]
    again, skipped = retransmitted(table["psn"][consuming], table["span"][consuming])
    ctx["retransmitted"].update(int(i) for i in consuming[again])
    conn = conns[f.conn] if f.conn >= 0 else None
    reverse = ctx["by_key"].get((f.key[1], f.key[0], _peer(conn, f.role)), None)
    cnp_rows = ctx["cnps"].get((f.key[1], f.key[0], _peer(conn, f.role)), np.zeros(0, int))
    cnps, without = cnp_counts(table, rows, cnp_rows)
    gaps = (
        read_gaps(table, rows, ctx["messages"]) if f.role == ROLE_RESPONSE else int(skipped.sum())
    )
    return {
        "src_ip": f.key[0], "dst_ip": f.key[1], "dest_qp": f.key[2],
        "peer_qp": _peer(conn, f.role), "role": _role_name(f.role, conn),
        "transport": conn.transport if conn else "RC",
        "packets": len(rows), "bytes": int(table["wire_len"][rows].sum()),
        "packets_sent": ctx["sent"].get((f.conn, f.role), len(rows)),
        "first_psn": psn_or_none(table["psn"][rows]), "last_psn": int(table["psn"][rows][-1]),
        "retransmitted_packets": int(again.sum()), "psn_gaps": gaps,
        "naks": nak_counts(table, reverse.rows) if reverse is not None and f.role == ROLE_REQUEST
        else dict.fromkeys(NAK_KEYS, 0),
        "ecn_ce_packets": int((table["ecn"][rows] == 3).sum()),
        "cnps": cnps, "cnps_without_ce": without,
    }  # fmt: skip


def _peer(conn: Conn | None, role: int) -> int | None:
    if conn is None or conn.transport == "UC":
        return None
    return conn.qp_a if role == ROLE_REQUEST else conn.qp_b


def _role_name(role: int, conn: Conn | None) -> str:
    if conn is None:
        return "unknown"
    return "requester" if role == ROLE_REQUEST else "responder"
