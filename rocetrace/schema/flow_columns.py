"""The flows table, declared once: one row per direction of traffic to one QP."""

from __future__ import annotations

from rocetrace.schema.column import F64, FLAG, I64, TEXT, TIME, Column, Table

NAK_KINDS = (
    "psn_sequence_error",
    "rnr",
    "invalid_request",
    "remote_access_error",
    "remote_operational_error",
)

_KEYS = (
    Column(
        "flow_id", I64, "the flow's number: its row, and what every other table's flow_id names"
    ),
    Column("flow", TEXT, 'key as a person reads it, "src_ip>dst_ip/0xQP" (the QP in hex)'),
    Column("src_ip", TEXT, "source IP address"),
    Column("dst_ip", TEXT, "destination IP address"),
    Column("dest_qp", I64, "BTH destination QP (tables keep integers; text shows it in hex)"),
    Column("peer_qp", I64, "the QP receiving this flow's responses (null: not paired, or UC)"),
    Column("pair_flow_id", I64, "the reverse flow of the connection (null: not paired)"),
    Column("paired_by", TEXT, "how the pair was found: cm, psn, deth, ip_pair or empty"),
    Column("role", TEXT, "requester (carries requests), responder (only responses) or unknown"),
)
_COUNTS = (
    Column("packets", I64, "frames of the flow", "frames"),
    Column("bytes", I64, "wire bytes of the flow", "bytes"),
    Column(
        "first_psn", I64, "PSN of the flow's first frame (its own requests' when both ends post)"
    ),
    Column("last_psn", I64, "PSN of the flow's last frame (its own requests' when both ends post)"),
    Column("retransmitted_packets", I64, "frames that resend a PSN already sent", "frames"),
    Column("psn_gaps", I64, "PSNs skipped at the capture point", "PSNs"),
    *(
        Column(f"naks_{k}", I64, f"NAKs of kind {k} the peer sent about this flow")
        for k in NAK_KINDS
    ),
    Column("retransmission_mode", TEXT, "none, go-back-n, go-back-0, selective-repeat or mixed"),
    Column("timeouts", I64, "retransmission episodes triggered by a timeout"),
    Column("ack_timeout_exp", I64, "k of the ACK timeout 4.096 us x 2^k the timeouts suggest"),
    Column("ack_timeout_s", F64, "that ACK timeout", "s"),
    Column("retransmission_episodes", I64, "retransmission episodes of the flow"),
)
_CONGESTION = (
    Column("ecn_ce_packets", I64, "frames marked ECN CE (congestion experienced)", "frames"),
    Column("cnps", I64, "CNPs this flow's receiver sent to slow it down"),
    Column("cnps_without_ce", I64, "of those, CNPs with no CE-marked frame since the previous"),
    Column("cnp_interval_min_s", F64, "shortest time between two of those CNPs", "s"),
    Column("cnp_interval_median_s", F64, "median time between two of those CNPs", "s"),
    Column("udp_sport", I64, "most frequent UDP source port (the ECMP entropy)", missing=-1),
    Column("dscp", I64, "most frequent DSCP (null: no IP header seen)", missing=-1),
    Column("vlan_pcp", I64, "most frequent 802.1Q PCP (null: untagged)", missing=-1),
    Column("ecn_not_capable_packets", I64, "frames sent with ECN 00 (not ECN-capable)", "frames"),
    Column("ecn_capable", FLAG, "no frame sent with ECN 00: switches can mark it"),
    Column("requests", I64, "request frames (SEND, WRITE, READ request, atomics)", "frames"),
)
_TIMING = (
    Column("rtt_samples", I64, "Karn-safe request -> answer samples the RTT columns rest on"),
    Column("rtt_min_s", F64, "shortest request -> answer time at the capture point", "s"),
    Column("rtt_median_s", F64, "median request -> answer time at the capture point", "s"),
    Column("rtt_max_s", F64, "longest request -> answer time at the capture point", "s"),
    Column("transport", TEXT, "RC, UC, UD, XRC, RD (CNP for a flow of CNPs only)"),
    Column("mtu", I64, "largest FIRST/MIDDLE payload of the connection (0: unknown)", "bytes"),
    Column("first_ts_ns", I64, "timestamp of the flow's first frame", "ns since the epoch"),
    Column("first_time", TIME, "the same instant as a UTC timestamp"),
    Column("last_ts_ns", I64, "timestamp of the flow's last frame", "ns since the epoch"),
    Column("last_time", TIME, "the same instant as a UTC timestamp"),
    Column("rnr_timer_us", F64, "timer of the last RNR NAK about this flow", "us"),
    Column("history", TEXT, "Zeek-style history of the conversation (docs/analysis-tables.md)"),
)

FLOWS = Table(
    "flows",
    "direction of traffic to one QP, key (src_ip, dst_ip, dest_qp)",
    (*_KEYS, *_COUNTS, *_CONGESTION, *_TIMING),
    "The summary's flows[] carries these per flow (docs/summary-schema.md).",
)
