"""The RDMA CM exchange of every RC/UC connection (`Scenario.cm`): REQ, REP, RTU before the
traffic, DREQ, DREP after it, as UD SEND ONLY MADs between the hosts' QP1s.

The MADs carry the QPNs and starting PSNs the model uses, so an analysis can pair the two
directions of each connection from them; the truth lists the pairs (`cm_connections`, the
columns of `rocetrace.analysis.cm.cm_connections`). The model's traffic is moved later by
the time the handshakes take; every truth count is taken from the captured table, so only
timestamps change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rocetrace.dissectors.mad import GSI_Q_KEY, GSI_QP, MAD_SIZE, CmAttr, encode_cm_mad
from rocetrace.generate.hosts import Hosts, make_hosts
from rocetrace.generate.model import Conn
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.sim import SimResult
from rocetrace.generate.wire_table import ROCE, ROLE_REQUEST, PacketTable
from rocetrace.psn import PSN_MOD

UD_SEND_ONLY = 0x64
CM_REPLY_NS = 5_000  # a CM agent's time to answer a MAD
HANDSHAKE_GAP_NS = 2_000  # between the REQs of successive connections
TCP_PORT_SPACE = 0x0000_0000_0106_0000  # RDMA CM service IDs: RDMA_PS_TCP << 16 | port
CM_PORT = 18515
IB_MTU = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
TIME_COLUMNS = ("t_tx", "t_sw", "t_rx")


@dataclass
class CmPlan:
    """What the exchange says about each connection: Comm IDs and the responder's PSN."""

    conns: list[Conn]
    comm_ids: np.ndarray  # (n, 2): requester's, responder's Local Comm ID
    responder_psns: np.ndarray  # the responder's send-queue start (REQ's Starting PSN)
    rows: list[dict[str, int]] = field(default_factory=list)
    payloads: list[bytes] = field(default_factory=list)
    shift_ns: int = 0  # how much later the model's traffic was moved

    def truth(self, hosts: Hosts) -> list[dict[str, Any]]:
        """Expected `cm_connections` rows, in connection order."""
        return [
            {"requester_ip": hosts.ip_str(c.req_host), "responder_ip": hosts.ip_str(c.resp_host),
             "requester_comm_id": int(ids[0]), "responder_comm_id": int(ids[1]),
             "requester_qpn": c.qp_a, "responder_qpn": c.qp_b,
             "requester_starting_psn": c.start_psn, "responder_starting_psn": int(psn),
             "established": True, "disconnected": True, "rejected": False}
            for c, ids, psn in zip(self.conns, self.comm_ids, self.responder_psns, strict=True)
        ]  # fmt: skip


def add_cm_exchange(
    all_rows: PacketTable, res: SimResult, sc: Scenario, seed: int
) -> tuple[PacketTable, CmPlan]:
    """The model's rows moved after the handshakes, with every CM MAD added after them
    (wire ids go on from the model's).

    Adds one UD "connection" per direction between QP1s to `res.conns`, so the truth counts
    the MAD flows as the analysis sees them (UD, requester, peer QP 1).
    """
    rng = np.random.default_rng([seed, 2])
    conns = [c for c in res.conns if c.transport in ("RC", "UC") and c.reverse_of is None]
    plan = CmPlan(
        conns, rng.integers(1, 1 << 32, (len(conns), 2)), rng.integers(0, PSN_MOD, len(conns))
    )
    for c in res.conns:  # a responder that sends requests starts them where its REQ said
        if c.reverse_of is not None:
            plan.responder_psns[conns.index(res.conns[c.reverse_of])] = c.start_psn
    hosts = make_hosts(res.hosts, 6 if (sc.ip_version == 6 or sc.roce_v1) else 4)
    gsi = _gsi_conns(res, conns)
    first = [i for i, c in enumerate(conns) if c.generation == 0]
    starts = [1_000 + k * HANDSHAKE_GAP_NS for k in range(len(first))]
    setup_end = max(
        (_handshake(plan, i, t, sc, hosts, gsi) for i, t in zip(first, starts, strict=True)),
        default=0,
    )
    shift = plan.shift_ns = -(-(setup_end + 1_000) // 1_000) * 1_000
    for col in TIME_COLUMNS:
        all_rows.cols[col] = all_rows[col] + np.where(all_rows[col] > 0, shift, 0)
    _reconnects(plan, all_rows, sc, hosts, gsi)
    end = int(all_rows["t_rx"].max(initial=shift)) + 1_000
    last = [i for i, c in enumerate(conns) if not _succeeded(c, conns)]
    for k, i in enumerate(last):
        _teardown(plan, i, end + k * HANDSHAKE_GAP_NS, sc, gsi)
    mads = PacketTable.from_rows(_numbered(plan.rows))
    mads.cols["row"] = np.arange(len(all_rows), len(all_rows) + len(mads), dtype=np.int32)
    return PacketTable.concat([all_rows, mads]), plan


def _succeeded(c: Conn, conns: list[Conn]) -> bool:
    """Does a later connection reuse c's QP numbers?"""
    return any(
        (d.req_host, d.qp_a, d.resp_host, d.qp_b) == (c.req_host, c.qp_a, c.resp_host, c.qp_b)
        and d.generation == c.generation + 1
        for d in conns
    )


def _reconnects(plan: CmPlan, rows: PacketTable, sc: Scenario, hosts: Hosts, gsi: dict) -> None:
    """QP reuse: each earlier connection is torn down just after its last packet, and its
    successor set up just before its first (the model leaves the gap between them)."""
    lead = 3 * 2 * sc.link_delay_ns + 2 * CM_REPLY_NS + 1_000  # REQ, REP, RTU
    for i, c in enumerate(plan.conns):
        mine = rows["conn"] == c.idx
        if c.generation > 0 and mine.any():
            _handshake(plan, i, int(rows["t_tx"][mine].min()) - lead, sc, hosts, gsi)
        if _succeeded(c, plan.conns) and mine.any():
            _teardown(plan, i, int(rows["t_rx"][mine].max()) + 1_000, sc, gsi)


def _gsi_conns(res: SimResult, conns: list[Conn]) -> dict[tuple[int, int], int]:
    """A UD pseudo-connection QP1 -> QP1 per (source host, destination host) of the MADs."""
    pairs = sorted({(c.req_host, c.resp_host) for c in conns})
    pairs += [(b, a) for a, b in pairs]
    index = {}
    for src, dst in pairs:
        index[(src, dst)] = len(res.conns)
        res.conns.append(Conn(len(res.conns), src, dst, GSI_QP, GSI_QP, 0, 0, 0, "UD"))
    return index


def _handshake(plan: CmPlan, i: int, t: int, sc: Scenario, hosts: Hosts, gsi: dict) -> int:
    """REQ, REP and RTU of connection i from time t; returns when the RTU arrives."""
    c, (mine, theirs) = plan.conns[i], (int(x) for x in plan.comm_ids[i])
    tid = (c.idx + 1) << 32 | mine
    req = encode_cm_mad(
        CmAttr.REQ, tid, **_req_fields(c, sc, hosts, mine, int(plan.responder_psns[i]))
    )
    t = _send(plan, c.req_host, c.resp_host, t, req, sc, gsi)
    rep = encode_cm_mad(
        CmAttr.REP, tid, local_comm_id=theirs, remote_comm_id=mine, local_qpn=c.qp_b,
        starting_psn=c.start_psn, responder_resources=16, initiator_depth=16,
        target_ack_delay=15, rnr_retry_count=sc.rnr_retry, local_ca_guid=_guid(c.resp_host),
    )  # fmt: skip
    t = _send(plan, c.resp_host, c.req_host, t + CM_REPLY_NS, rep, sc, gsi)
    rtu = encode_cm_mad(CmAttr.RTU, tid, local_comm_id=mine, remote_comm_id=theirs)
    return _send(plan, c.req_host, c.resp_host, t + CM_REPLY_NS, rtu, sc, gsi)


def _teardown(plan: CmPlan, i: int, t: int, sc: Scenario, gsi: dict) -> None:
    """DREQ from the requester, DREP from the responder (their own transaction)."""
    c, (mine, theirs) = plan.conns[i], (int(x) for x in plan.comm_ids[i])
    tid = (c.idx + 1) << 32 | mine | 1 << 63
    dreq = encode_cm_mad(
        CmAttr.DREQ, tid, local_comm_id=mine, remote_comm_id=theirs, remote_qpn_eecn=c.qp_b
    )
    t = _send(plan, c.req_host, c.resp_host, t, dreq, sc, gsi)
    drep = encode_cm_mad(CmAttr.DREP, tid, local_comm_id=theirs, remote_comm_id=mine)
    _send(plan, c.resp_host, c.req_host, t + CM_REPLY_NS, drep, sc, gsi)


def _req_fields(c: Conn, sc: Scenario, hosts: Hosts, comm_id: int, psn: int) -> dict[str, int]:
    """REQ as rdma_cm fills it over RoCE: LIDs 0xFFFF, GIDs from the IPs, the QP's timers."""
    return {
        "local_comm_id": comm_id, "service_id": TCP_PORT_SPACE | CM_PORT,
        "local_ca_guid": _guid(c.req_host), "local_qpn": c.qp_a, "responder_resources": 16,
        "initiator_depth": 16, "remote_cm_response_timeout": 20,
        "transport_service_type": 0 if c.transport == "RC" else 1, "starting_psn": psn,
        "local_cm_response_timeout": 20, "retry_count": sc.retry_cnt, "partition_key": 0xFFFF,
        "path_packet_payload_mtu": IB_MTU[sc.mtu], "rnr_retry_count": sc.rnr_retry,
        "max_cm_retries": 15, "primary_local_port_lid": 0xFFFF, "primary_remote_port_lid": 0xFFFF,
        "primary_local_port_gid": _gid(hosts, c.req_host),
        "primary_remote_port_gid": _gid(hosts, c.resp_host),
        "primary_traffic_class": sc.dscp << 2, "primary_hop_limit": 64, "primary_sl": sc.pcp,
        "primary_local_ack_timeout": min(sc.timeout, 31),
    }  # fmt: skip


def _gid(hosts: Hosts, host: int) -> int:
    """The RoCE GID of a host: its IPv6 address, or its IPv4 address IPv4-mapped."""
    raw = bytes(hosts.ip[host])
    return int.from_bytes(raw, "big") | (0xFFFF << 32 if len(raw) == 4 else 0)


def _guid(host: int) -> int:
    return 0x0200_00FF_FE00_0000 | (host + 1)


def _numbered(rows: list[dict[str, int]]) -> list[dict[str, int]]:
    """PSNs counting up per QP1 -> QP1 direction in sending order (UD PSNs are not checked,
    but a capture should not show them going backwards)."""
    rows = sorted(rows, key=lambda r: r["t_tx"])
    next_psn: dict[tuple[int, int], int] = {}
    for r in rows:
        r["psn"] = next_psn.get((r["src"], r["dst"]), 0)
        next_psn[(r["src"], r["dst"])] = r["psn"] + 1
    return rows


def _send(plan: CmPlan, src: int, dst: int, t: int, mad: bytes, sc: Scenario, gsi: dict) -> int:
    """One MAD row sent at t (its PSN comes later); returns its arrival time."""
    plan.payloads.append(mad)
    d = sc.link_delay_ns
    plan.rows.append(
        {"kind": ROCE, "src": src, "dst": dst, "opcode": UD_SEND_ONLY, "dest_qp": GSI_QP,
         "qkey": GSI_Q_KEY, "src_qp": GSI_QP, "payload_len": MAD_SIZE,
         "payload_id": len(plan.payloads), "ecn": sc.ecn, "ecn_tx": sc.ecn, "dscp": sc.dscp,
         "pcp": sc.pcp, "udp_sport": 0xC000 | (src << 4 | dst) & 0x3FFF, "conn": gsi[(src, dst)],
         "role": ROLE_REQUEST, "span": 1, "t_tx": t, "t_sw": t + d, "t_rx": t + 2 * d}
    )  # fmt: skip
    return t + 2 * d
