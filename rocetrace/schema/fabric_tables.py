"""Fabric-wide tables, declared once: PFC frames and pauses, UDP source ports per host
pair, named anomalies and the RDMA CM connections."""

from __future__ import annotations

from rocetrace.schema.column import F64, FLAG, I64, INTS, TEXT, TIME, Column, Table
from rocetrace.schema.event_tables import FLOW

PFC = Table(
    "pfc",
    "(PFC frame, enabled priority)",
    (
        Column("frame", I64, "the PFC frame"),
        Column("ts_ns", I64, "capture timestamp", "ns since the epoch"),
        Column("time", TIME, "the same instant as a UTC timestamp"),
        Column("src_mac", TEXT, "the port asking its upstream to pause"),
        Column("priority", I64, "the paused priority (0-7)"),
        Column("quanta", I64, "pause time asked for (0: resume)", "quanta of 512 bit times"),
        Column("pause", FLAG, "quanta > 0"),
        Column("paused_s", F64, "the quanta at the link speed: the pause asked for", "s"),
        Column(
            "held_s",
            F64,
            "how long the pause held: its quanta, or until the port's next frame for that "
            "priority; summed, the paused time every view reports",
            "s",
        ),
    ),
)

PFC_PAUSES = Table(
    "pfc_pauses",
    "uninterrupted pause of one priority by one port (sender MAC)",
    (
        Column("src_mac", TEXT, "the pausing port"),
        Column("priority", I64, "the paused priority"),
        Column("start_ns", I64, "first frame of the pause", "ns since the epoch"),
        Column("start_time", TIME, "the same instant as a UTC timestamp"),
        Column("duration_s", F64, "how long the priority stayed paused without a break", "s"),
        Column("frames", I64, "PFC frames that kept it paused", "frames"),
        Column("first_frame", I64, "the first of them"),
    ),
)

UDP_SPORTS = Table(
    "udp_sports",
    "host pair (direction) carrying RoCE requests: its ECMP entropy",
    (
        Column("src_ip", TEXT, "source IP"),
        Column("dst_ip", TEXT, "destination IP"),
        Column("qps", I64, "data QPs from src to dst"),
        Column("distinct_sports", I64, "distinct UDP source ports they use"),
        Column("colliding_qps", I64, "QPs sharing a source port with another QP"),
        Column("busiest_sport", I64, "the port the most QPs share"),
    ),
)

ANOMALIES = Table(
    "anomalies",
    "named protocol anomaly (docs/analysis.md): psn_reuse, ack_unsent_psn, stall, qp_reuse, "
    "reordering",
    (
        Column("code", TEXT, "the anomaly's stable name"),
        Column("flow_id", I64, "the flow it happened on"),
        FLOW,
        Column("ts_ns", I64, "when", "ns since the epoch"),
        Column("time", TIME, "the same instant as a UTC timestamp"),
        Column("frame", I64, "its first evidence frame"),
        Column("frames", INTS, "every evidence frame"),
        Column("message", TEXT, "what happened, in words"),
    ),
)

_CM_IDS = ("requester_comm_id", "responder_comm_id")
CM_CONNECTIONS = Table(
    "cm_connections",
    "RDMA CM connection (REQ/REP pair) the capture shows; none without CM MADs",
    (
        Column("requester_ip", TEXT, "sent the REQ (active side)"),
        Column("responder_ip", TEXT, "sent the REP (passive side)"),
        *(Column(c, I64, f"{c.split('_')[0]}'s Local Comm ID") for c in _CM_IDS),
        Column("requester_qpn", I64, "REQ Local QPN: dest_qp of the responder -> requester flow"),
        Column("responder_qpn", I64, "REP Local QPN: dest_qp of the requester -> responder flow"),
        Column("requester_starting_psn", I64, "first PSN the requester sends (from the REP)"),
        Column("responder_starting_psn", I64, "first PSN the responder sends (from the REQ)"),
        Column("connect_ts_ns", I64, "first REQ (or REP without REQ)", "ns since the epoch"),
        Column("connect_time", TIME, "the same instant as a UTC timestamp"),
        Column("established", FLAG, "an RTU was seen"),
        Column("disconnected", FLAG, "a DREQ or DREP was seen"),
        Column("disconnect_ts_ns", I64, "first DREQ or DREP", "ns since the epoch"),
        Column("disconnect_time", TIME, "the same instant as a UTC timestamp"),
        Column("rejected", FLAG, "a REJ was seen"),
        Column("reject_reason", I64, "the REJ's reason (IBTA table 112)"),
    ),
)
