"""The analysis' event tables, declared once: packets' analysis columns, retransmission
episodes, NAKs, CNPs, PFC frames and pauses, named anomalies, UDP ports, CM connections.
Findings are in finding_table.py."""

from __future__ import annotations

from rocetrace.schema.column import F64, FLAG, I64, INTS, TEXT, TIME, Column, Table

CERTAINTY = "certain, likely or uncertain (docs/analysis.md)"
FLOW = Column("flow", TEXT, 'the flow\'s key, "src_ip>dst_ip/0xQP" (null: no flow)')


def _when(stem: str = "ts", what: str = "capture timestamp") -> tuple[Column, Column]:
    """An instant as integer nanoseconds and, beside it, as a UTC timestamp."""
    time = "time" if stem == "ts" else f"{stem}_time"
    return (
        Column(f"{stem}_ns", I64, what, "ns since the epoch"),
        Column(time, TIME, "the same instant as a UTC timestamp"),
    )


# Columns the analysis adds to the packet table (rocetrace.schema.PACKET_COLUMNS).
PACKET_EXTRAS = Table(
    "packets",
    "captured frame: the packet table (docs/packet-table.md) plus these columns",
    (
        Column("time", TIME, "ts_ns as a UTC timestamp"),
        Column("flow_id", I64, "the frame's flow (null: in no flow)"),
        Column("retransmitted", FLAG, "the frame resends a PSN already sent"),
        Column("episode", I64, "row of the retransmissions table this resend belongs to"),
        Column("psn_gap", I64, "PSNs the flow skipped right before this frame (0: none)", "PSNs"),
        Column("ce", FLAG, "ECN CE: congestion experienced (ecn == 3)"),
    ),
)

RETRANSMISSIONS = Table(
    "retransmissions",
    "retransmission episode: a run of resends, its trigger and mode (docs/analysis.md)",
    (
        Column("flow_id", I64, "the flow whose packets were sent again (READ re-issue: responses)"),
        FLOW,
        Column("src_ip", TEXT, "the flow's source IP"),
        Column("dst_ip", TEXT, "the flow's destination IP"),
        Column("dest_qp", I64, "the flow's destination QP"),
        Column("ts", F64, "first resend (the summary's ts)", "s since the epoch"),
        *_when(what="first resend"),
        Column("trigger", TEXT, "nak, rnr, timeout, read_reissue or unknown"),
        Column("trigger_certainty", TEXT, CERTAINTY),
        Column("nak_psn", I64, "the NAKed PSN (trigger nak only)"),
        Column("nak_frame", I64, "the NAK's frame (trigger nak or rnr)"),
        Column(
            "nak_frames",
            INTS,
            "every NAK frame it may answer, nak_frame first; several: which one is open, "
            "the trigger and mode hold for each",
        ),
        Column("start_psn", I64, "first PSN resent"),
        Column("last_psn", I64, "last PSN resent"),
        Column("packets", I64, "resent frames the capture shows", "frames"),
        Column("mode", TEXT, "go-back-n, go-back-0 or selective-repeat"),
        Column("mode_certainty", TEXT, CERTAINTY),
        Column("delay_s", F64, "NAK -> first resend; else the flow's silence before it", "s"),
        Column("first_frame", I64, "frame of the first resend"),
        Column("evidence_frames", INTS, "NAK, first resend, first copy, last request, last resend"),
        Column("nak_latency_ns", I64, "NAK -> first resend at the capture point", "ns"),
        Column("retransmission_latency_ns", I64, "first copy of start_psn -> its resend", "ns"),
        Column("silence_ns", I64, "the flow's last request -> first resend", "ns"),
        Column("paused_ns", I64, "PFC pause of the flow's priority while it waited", "ns"),
        Column("resumed", FLAG, "the run resumed after another episode cut it"),
        Column(
            "late_frames",
            INTS,
            "after a stage that reorders: copies of PSNs it resent of which one is the "
            "original, late, and which one is open (each may be a resend or the original)",
        ),
        Column(
            "loss_location",
            TEXT,
            "downstream: the capture saw the first copy (lost between the capture point and "
            "the receiver); upstream: it never did (lost before the capture point)",
        ),
        Column("lost_after", TEXT, "several vantages: the last vantage that saw the lost packet"),
        Column("lost_before", TEXT, "several vantages: the first vantage that did not see it"),
    ),
)

NAKS = Table(
    "naks",
    "NAK or RNR NAK frame",
    (
        Column("frame", I64, "the NAK's frame"),
        *_when(),
        Column("flow_id", I64, "the flow the NAK is about (null: its carrier is not paired)"),
        FLOW,
        Column("nak_flow_id", I64, "the flow carrying the NAK"),
        Column(
            "kind",
            TEXT,
            "psn_sequence_error, rnr, invalid_request, remote_access_error, "
            "remote_operational_error, invalid_rd_request or reserved",
        ),
        Column("psn", I64, "the NAK's PSN: the first PSN the responder misses"),
        Column("rnr_timer_us", F64, "RNR NAK: the timer it asks the requester to wait", "us"),
        Column("stale", FLAG, "its PSN was already acknowledged: the requester ignores it"),
        Column("generation_latency_ns", I64, "first out-of-sequence request -> this NAK", "ns"),
    ),
)

CNPS = Table(
    "cnps",
    "CNP frame (congestion notification: slow down)",
    (
        Column("frame", I64, "the CNP's frame"),
        *_when(),
        Column("flow_id", I64, "the flow it throttles (null: unknown)"),
        FLOW,
        Column("src_ip", TEXT, "sender of the CNP (the notification point)"),
        Column("dst_ip", TEXT, "the host that must slow down"),
        Column("dest_qp", I64, "the QP that must slow down"),
        Column("dscp", I64, "DSCP the CNP travels in", missing=-1),
        Column("vlan_pcp", I64, "PCP the CNP travels in (null: untagged)", missing=-1),
        Column("ce_before", FLAG, "a CE-marked frame of the flow came since the previous CNP"),
        Column("rate_before_bps", F64, "the flow's rate just before the CNP", "bit/s"),
        Column("rate_after_bps", F64, "the flow's rate just after the CNP", "bit/s"),
        Column("interval_s", F64, "time since the previous CNP to the same flow", "s"),
    ),
)
