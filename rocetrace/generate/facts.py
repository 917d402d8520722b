"""Truth v2: what the simulated NICs, links and clocks did, and nothing a capture point is
expected to infer (that is the tests' business). Packets are named by wire id: the index of
the packet in the run's list of everything sent (`Truth.wire`, column `row`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rocetrace.generate.hosts import Hosts
from rocetrace.generate.model import Conn, Episode, wire
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.sim import SimResult
from rocetrace.generate.vantage import VantageCapture
from rocetrace.generate.wire_table import (
    DELIVERED,
    LOST_BEFORE_MIRROR,
    ROLE_CNP,
    ROLE_OTHER,
    ROLE_PFC,
    ROLE_REQUEST,
    ROLE_RESPONSE,
    PacketTable,
)

ROLE_NAMES = {ROLE_REQUEST: "request", ROLE_RESPONSE: "response", ROLE_CNP: "cnp",
              ROLE_PFC: "pfc", ROLE_OTHER: "other"}  # fmt: skip
GSI_QP = 1


def host_facts(sc: Scenario, hosts: Hosts) -> list[dict[str, Any]]:
    """Every host and the switch (last), with the settings each NIC runs with."""
    out = []
    for i in range(hosts.count):
        role = "requester" if i < sc.requesters else "responder"
        entry: dict[str, Any] = {"index": i, "ip": hosts.ip_str(i), "mac": hosts.mac_str(i)}
        if i == hosts.count - 1:
            out.append(entry | {"role": "switch"})
            continue
        mtu = sc.responder_mtu if role == "responder" and sc.responder_mtu else sc.mtu
        out.append(entry | {
            "role": role, "recovery": sc.recovery, "mtu": mtu,
            "ack_timeout_ns": sc.ack_timeout_ns, "retry_cnt": sc.retry_cnt,
            "rnr_retry": sc.rnr_retry,
            "accepts_out_of_order": sc.responder_ooo and role == "responder",
        })  # fmt: skip
    return out


def connection_facts(conns: Sequence[Conn], hosts: Hosts) -> list[dict[str, Any]]:
    """One per simulated connection (one PSN space: a requester and its responder)."""
    reverse = {c.reverse_of: c for c in conns if c.reverse_of is not None}
    return [
        {"conn": c.idx, "requester_ip": hosts.ip_str(c.req_host),
         "responder_ip": hosts.ip_str(c.resp_host), "requester_qp": c.qp_a,
         "responder_qp": c.qp_b, "start_psn": wire(c.start_psn), "transport": c.transport,
         "generation": c.generation, "reverse_of": c.reverse_of,
         "responder_start_psn": wire(reverse[c.idx].start_psn) if c.idx in reverse else None,
         "cm_mads": c.qp_a == GSI_QP and c.qp_b == GSI_QP}
        for c in conns
    ]  # fmt: skip


def _episode_rows(w: PacketTable) -> dict[int, np.ndarray]:
    """Wire ids of each episode's packets, in send order (t_tx, then wire id)."""
    rows = np.flatnonzero(w["episode"] >= 0)
    rows = rows[np.lexsort((rows, w["t_tx"][rows]))]
    eps = w["episode"][rows]
    return {int(e): rows[eps == e] for e in np.unique(eps)}


def episode_facts(
    episodes: Sequence[Episode], conns: Sequence[Conn], w: PacketTable, hosts: Hosts
) -> list[dict[str, Any]]:
    """Every retransmission episode as the NIC performed it. `resent`: what the NIC sent
    for it (for a READ re-issue the new READ request); `answers`: what the responder sent
    again in answer (READ responses, atomic ACKs of resent requests)."""
    by_ep = _episode_rows(w)
    out = []
    for ep in episodes:
        c = conns[ep.conn]
        rows = by_ep.get(ep.idx, np.zeros(0, np.int64))
        mine = w["role"][rows] == ROLE_REQUEST
        nak_psn = ep.trigger_psn if ep.trigger in ("nak", "rnr") else None
        out.append({
            "id": ep.idx, "conn": ep.conn, "sender_ip": hosts.ip_str(c.req_host),
            "src_ip": hosts.ip_str(c.req_host), "dst_ip": hosts.ip_str(c.resp_host),
            "dest_qp": c.qp_b, "trigger": ep.trigger,
            "trigger_packet": ep.trigger_row if ep.trigger_row >= 0 else None,
            "nak_psn": None if nak_psn is None else wire(nak_psn),
            "start_psn": wire(ep.start_psn), "mode": ep.mode, "either_policy": ep.either_policy,
            "resent": rows[mine].tolist(), "answers": rows[~mine].tolist(),
        })  # fmt: skip
    return out


def drop_facts(w: PacketTable, hosts: Hosts) -> list[dict[str, Any]]:
    """Every packet the network dropped, and on which side of the mirror."""
    return [
        {"wire_id": int(i), "conn": int(w["conn"][i]), "role": ROLE_NAMES[int(w["role"][i])],
         "src_ip": hosts.ip_str(int(w["src"][i])), "dst_ip": hosts.ip_str(int(w["dst"][i])),
         "dest_qp": int(w["dest_qp"][i]), "psn": int(w["psn"][i]),
         "opcode": int(w["opcode"][i]),
         "where": "before_mirror" if w["lost"][i] == LOST_BEFORE_MIRROR else "after_mirror",
         "t_ns": int(w["t_tx"][i])}
        for i in np.flatnonzero(w["lost"] != DELIVERED)
    ]  # fmt: skip


def cnp_facts(res: SimResult) -> list[dict[str, Any]]:
    """Why each CNP was sent: the CE-marked or the out-of-sequence packet that caused it."""
    return [
        {"wire_id": c.wire_id, "cause": c.cause,
         "marked_wire_id": c.packet if c.cause == "ce" else None,
         "out_of_sequence_wire_id": c.packet if c.cause == "oos" else None}
        for c in res.ledger.cnp_causes
    ]  # fmt: skip


def pfc_facts(res: SimResult, hosts: Hosts, shift_ns: int) -> list[dict[str, Any]]:
    """The pause windows the model applied (moved by `shift_ns` like the rows: CM setup)."""
    return [
        {"host": hosts.ip_str(p.host), "port": p.port, "priority": p.priority,
         "start_ns": p.start_ns + shift_ns, "end_ns": p.end_ns + shift_ns,
         "sender_ip": hosts.ip_str(p.sender), "frames": list(p.frames)}
        for p in res.ledger.pauses
    ]  # fmt: skip


def overtaken(anomaly: dict[str, Any], w: PacketTable) -> dict[str, Any]:
    """A delayed (`reordered`) packet gets `overtaken_by`: how many packets its source sent
    later on the same connection and direction reached the destination NIC before it."""
    if anomaly["kind"] != "reordered":
        return anomaly
    i = anomaly["wire_id"]
    later = (w["conn"] == w["conn"][i]) & (w["role"] == w["role"][i]) & (w["src"] == w["src"][i])
    later &= (w["t_tx"] > w["t_tx"][i]) & (w["t_rx"] < w["t_rx"][i]) & (w["lost"] == DELIVERED)
    return anomaly | {"overtaken_by": int(later.sum())}


def clock_facts(shots: Sequence[VantageCapture]) -> list[dict[str, Any]]:
    """What each written capture's clock did (docs/generator.md, the formula)."""
    return [
        {"vantage": s.vantage, "offset_ns": s.clock.offset_ns,
         "drift_ppm": s.clock.drift_ppm, "resolution_ns": s.clock.resolution_ns,
         "jitter_ns": s.clock.jitter_ns, "seed": s.jitter_seed}
        for s in shots
    ]  # fmt: skip


def v2_facts(
    sc: Scenario, res: SimResult, w: PacketTable, hosts: Hosts,
    shots: Sequence[VantageCapture], shift_ns: int,
) -> dict[str, Any]:  # fmt: skip
    """The truth v2 keys. `capture_frames` is left out on the bulk path (millions of ids;
    `Truth.captures` holds them in memory)."""
    data: dict[str, Any] = {
        "hosts": host_facts(sc, hosts), "connections": connection_facts(res.conns, hosts),
        "nic_episodes": episode_facts(res.episodes, res.conns, w, hosts),
        "drops": drop_facts(w, hosts), "cnp_causes": cnp_facts(res),
        "pfc_windows": pfc_facts(res, hosts, shift_ns), "clock": clock_facts(shots),
        "anomalies": [overtaken(a, w) for a in res.ledger.anomalies],
    }  # fmt: skip
    if not sc.bulk:
        data["capture_frames"] = {s.vantage: s.wire_ids.tolist() for s in shots}
    return data
