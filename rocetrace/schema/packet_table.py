"""The packet table's schema, declared once: column name, dtype and meaning.

Column names are a public contract (scripts and other tools rely on them). Integer columns of
headers that may be absent are nullable Arrow-backed integers (1 bit of validity per row, not
the 1 byte of pandas' masked arrays), strings with few distinct values are categoricals.
"""

from __future__ import annotations

from functools import cache

from rocetrace.schema.column import CATEGORY, FLAG, U8, U16, U32, U64, Column

ENCAPS = ("roce_v2", "roce_v1", "vxlan+roce_v2", "pfc", "other")
ROCE_ENCAPS = ENCAPS[:3]  # frames that carry a BTH
ICRC_STATUSES = ("ok", "bad", "uncheckable")

PACKET_COLUMNS: tuple[Column, ...] = (
    Column("frame", "uint32", "frame number, 1-based, as in Wireshark"),
    Column("ts_ns", "int64", "capture timestamp, nanoseconds since the Unix epoch"),
    Column("cap_len", "uint32", "bytes captured"),
    Column("wire_len", "uint32", "bytes on the wire"),
    Column("src_mac", CATEGORY, "Ethernet source, aa:bb:cc:dd:ee:ff"),
    Column("dst_mac", CATEGORY, "Ethernet destination"),
    Column("vlan_id", U16, "outermost 802.1Q VLAN ID (inner tag's for QinQ is not kept)"),
    Column("vlan_pcp", U8, "802.1Q priority code point of the outermost tag"),
    Column("ip_version", U8, "4 or 6 (of the inner packet for VXLAN)"),
    Column("src_ip", CATEGORY, "source IP address (RoCEv1: source GID)"),
    Column("dst_ip", CATEGORY, "destination IP address (RoCEv1: destination GID)"),
    Column("dscp", U8, "DSCP, high 6 bits of TOS / traffic class"),
    Column("ecn", U8, "ECN, low 2 bits of TOS: 0 not capable, 1/2 capable, 3 CE"),
    Column("ttl", U8, "IPv4 TTL or IPv6 hop limit"),
    Column("udp_sport", U16, "UDP source port (RoCEv2 flow entropy)"),
    Column("udp_dport", U16, "UDP destination port"),
    Column("encap", CATEGORY, "roce_v2 | roce_v1 | vxlan+roce_v2 | pfc | other"),
    Column("opcode", U8, "BTH OpCode"),
    Column("opcode_name", CATEGORY, "opcode name from the opcode table, e.g. RC_SEND_ONLY"),
    Column("se", FLAG, "BTH solicited event"),
    Column("mig_req", FLAG, "BTH MigReq"),
    Column("pad_count", U8, "BTH PadCnt: pad bytes before the ICRC"),
    Column("tver", U8, "BTH transport header version"),
    Column("pkey", U16, "BTH partition key"),
    Column("fecn", FLAG, "BTH FECN"),
    Column("becn", FLAG, "BTH BECN"),
    Column("dest_qp", U32, "BTH destination QP"),
    Column("ack_req", FLAG, "BTH AckReq"),
    Column("psn", U32, "BTH packet sequence number (24-bit)"),
    Column("reth_va", U64, "RETH virtual address"),
    Column("reth_rkey", U32, "RETH R_Key"),
    Column("reth_dma_length", U32, "RETH DMA length in bytes"),
    Column("aeth_syndrome", U8, "AETH syndrome: bits 6-5 kind (0 ACK, 1 RNR NAK, 3 NAK)"),
    Column("aeth_msn", U32, "AETH message sequence number"),
    Column("deth_qkey", U32, "DETH Q_Key"),
    Column("deth_src_qp", U32, "DETH source QP"),
    Column("immdt", U32, "immediate data"),
    Column("ieth_rkey", U32, "IETH R_Key to invalidate"),
    # Atomics are rare: integer categoricals (1-byte codes) keep 36 mostly-null bytes per
    # frame out of the table; values are the integers, `.astype("UInt64")` gives numbers.
    Column("atomic_va", CATEGORY, "AtomicETH virtual address (integer categorical)"),
    Column("atomic_rkey", CATEGORY, "AtomicETH R_Key (integer categorical)"),
    Column("atomic_swap_add", CATEGORY, "AtomicETH swap or add data (integer categorical)"),
    Column("atomic_compare", CATEGORY, "AtomicETH compare data (integer categorical)"),
    Column("atomic_ack_orig", CATEGORY, "AtomicAckETH original remote data (integer categorical)"),
    Column("xrc_srqn", U32, "XRCETH XRC shared receive queue number"),
    Column(
        "payload_len", U16, "payload bytes after the extended headers, before pad and ICRC (wire)"
    ),
    Column("icrc", U32, "ICRC as carried (stored little-endian, shown as an integer)"),
    Column("icrc_status", CATEGORY, "ok | bad | uncheckable (frame cut by the snap length)"),
    Column("pfc_opcode", U16, "MAC control opcode (0x0101 for PFC)"),
    Column("pfc_class_enable", U16, "PFC class-enable vector, bit p for priority p"),
    *(
        Column(f"pfc_quanta_{p}", U16, f"PFC pause time of priority {p}, in 512-bit-time quanta")
        for p in range(8)
    ),
    Column("anomaly", CATEGORY, "named anomaly of this frame, null when none"),
)

PACKET_COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in PACKET_COLUMNS)


@cache
def _packet_dtypes() -> dict[str, object]:
    return {c.name: c.dtype for c in PACKET_COLUMNS}


def packet_dtypes() -> dict[str, object]:
    """Column -> pandas dtype of the packet table (built on first use: imports pandas)."""
    return _packet_dtypes()


# Stable anomaly names; counted, never printed.
ANOMALIES = (
    "truncated_record",  # the capture file ends inside this record
    "truncated_ethernet",
    "truncated_ip",
    "short_udp",  # UDP header or length inconsistent
    "truncated_bth",  # snap length or frame ends inside the BTH
    "truncated_ext_header",  # ... inside an extended header
    "unknown_opcode",
    "bad_icrc",
    "unsupported_link_type",
    "bad_ip_header",  # IPv4 version, IHL or total length no sender writes
    "ip_fragment",  # a RoCEv2 datagram in IP fragments (RoCEv2 sets DF: never fragmented)
    "bad_udp_length",  # RoCEv2 UDP length below 8 or beyond the IP packet
    "corrupt_record",  # the capture file holds unreadable records here (counted, no frame)
)
# Anomalies after which a frame's RoCE headers are not trusted: it stays in the packet
# table (decoded as far as it goes) but in no flow and no PSN stream.
MALFORMED_ROCE = (
    "short_udp",
    "truncated_bth",
    "unknown_opcode",
    "bad_ip_header",
    "ip_fragment",
    "bad_udp_length",
)

# The CM MADs of a capture (`Capture.mads`): a small side table, the input contract of
# rocetrace.analysis.cm (docs/packet-table.md, "CM MADs").
MAD_DTYPES: dict[str, str] = {
    "ts_ns": "int64",
    "src_ip": "object",
    "dst_ip": "object",
    "mad_attr_id": "UInt16",
    "cm_local_comm_id": "UInt32",
    "cm_remote_comm_id": "UInt32",
    "cm_local_qpn": "UInt32",
    "cm_starting_psn": "UInt32",
    "cm_reason": "UInt16",
}
