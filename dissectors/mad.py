"""Management Datagrams (IBTA 13.4) and the Communication Manager messages (IBTA 12.6).

RDMA CM sets up an RC connection with MADs sent as UD SEND ONLY to QP1 (the GSI QP, Q_Key
0x80010000): a 24-byte MAD common header, then a 232-byte CM message chosen by the
attribute ID. REQ and REP carry the QPNs and starting PSNs of both ends, which is what lets
the two directions of a connection be paired. Only the fixed fields are tabled: each
message ends with its PrivateData, left to the payload.
"""

from __future__ import annotations

from enum import IntEnum

from rocetrace.dissectors.header import Field, Header, NeedData

GSI_QP = 1
GSI_Q_KEY = 0x80010000  # the well-known Q_Key of QP1 (IBTA 13.5.3.1)
MAD_SIZE = 256
MAD_DATA_SIZE = 232
CM_MGMT_CLASS = 0x07
CM_CLASS_VERSION = 2
MAD_BASE_VERSION = 1
METHOD_SEND = 0x03


class CmAttr(IntEnum):
    """CM attribute IDs (IBTA table 92), the message kind of a CM MAD."""

    CLASS_PORT_INFO = 0x0001
    REQ = 0x0010
    MRA = 0x0011
    REJ = 0x0012
    REP = 0x0013
    RTU = 0x0014
    DREQ = 0x0015
    DREP = 0x0016
    SIDR_REQ = 0x0017
    SIDR_REP = 0x0018
    LAP = 0x0019
    APR = 0x001A


MAD_HEADER = Header(
    "MAD",
    (
        ("base_version", 8),
        ("mgmt_class", 8),
        ("class_version", 8),
        ("r", 1),
        ("method", 7),
        ("status", 16),
        ("class_specific", 16),
        ("transaction_id", 64),
        ("attribute_id", 16),
        ("resv16", 16),
        ("attribute_modifier", 32),
    ),
)


def _path(prefix: str) -> tuple[tuple[str, int], ...]:
    """The 44-byte path description of a REQ, primary or alternate (IBTA table 99)."""
    return (
        (f"{prefix}_local_port_lid", 16),
        (f"{prefix}_remote_port_lid", 16),
        (f"{prefix}_local_port_gid", 128),
        (f"{prefix}_remote_port_gid", 128),
        (f"{prefix}_flow_label", 20),
        (f"resv6_{prefix}", 6),
        (f"{prefix}_packet_rate", 6),
        (f"{prefix}_traffic_class", 8),
        (f"{prefix}_hop_limit", 8),
        (f"{prefix}_sl", 4),
        (f"{prefix}_subnet_local", 1),
        (f"resv3_{prefix}_sl", 3),
        (f"{prefix}_local_ack_timeout", 5),
        (f"resv3_{prefix}_ack", 3),
    )


CM_REQ = Header(
    "CM_REQ",
    (
        ("local_comm_id", 32),
        ("resv32_4", 32),
        ("service_id", 64),
        ("local_ca_guid", 64),
        ("resv32_24", 32),
        ("local_q_key", 32),
        ("local_qpn", 24),
        ("responder_resources", 8),
        ("local_eecn", 24),
        ("initiator_depth", 8),
        ("remote_eecn", 24),
        ("remote_cm_response_timeout", 5),
        ("transport_service_type", 2),
        ("end_to_end_flow_control", 1),
        ("starting_psn", 24),
        ("local_cm_response_timeout", 5),
        ("retry_count", 3),
        ("partition_key", 16),
        ("path_packet_payload_mtu", 4),
        ("rdc_exists", 1),
        ("rnr_retry_count", 3),
        ("max_cm_retries", 4),
        ("srq", 1),
        ("extended_transport_type", 3),
        *_path("primary"),
        *_path("alternate"),
    ),
)
CM_REP = Header(
    "CM_REP",
    (
        ("local_comm_id", 32),
        ("remote_comm_id", 32),
        ("local_q_key", 32),
        ("local_qpn", 24),
        ("resv8_15", 8),
        ("local_ee_context", 24),
        ("resv8_19", 8),
        ("starting_psn", 24),
        ("resv8_23", 8),
        ("responder_resources", 8),
        ("initiator_depth", 8),
        ("target_ack_delay", 5),
        ("failover_accepted", 2),
        ("end_to_end_flow_control", 1),
        ("rnr_retry_count", 3),
        ("srq", 1),
        ("resv4_27", 4),
        ("local_ca_guid", 64),
    ),
)
_COMM_IDS = (("local_comm_id", 32), ("remote_comm_id", 32))
CM_RTU = Header("CM_RTU", _COMM_IDS)
CM_DREQ = Header("CM_DREQ", (*_COMM_IDS, ("remote_qpn_eecn", 24), ("resv8_11", 8)))
CM_DREP = Header("CM_DREP", _COMM_IDS)
CM_REJ = Header(
    "CM_REJ",
    (
        *_COMM_IDS,
        ("message_rejected", 2),
        ("resv6_8", 6),
        ("reject_info_length", 7),
        ("resv1_9", 1),
        ("reason", 16),
    ),
)
CM_MRA = Header(
    "CM_MRA",
    (
        *_COMM_IDS,
        ("message_mraed", 2),
        ("resv6_8", 6),
        ("service_timeout", 5),
        ("resv3_9", 3),
    ),
)

CM_MESSAGES: dict[int, Header] = {
    CmAttr.REQ: CM_REQ,
    CmAttr.MRA: CM_MRA,
    CmAttr.REJ: CM_REJ,
    CmAttr.REP: CM_REP,
    CmAttr.RTU: CM_RTU,
    CmAttr.DREQ: CM_DREQ,
    CmAttr.DREP: CM_DREP,
}
"""Attribute ID -> the fixed part of its CM message (what follows the MAD header)."""


PAIRING_FIELDS: dict[str, dict[int, str]] = {
    "cm_local_comm_id": {attr: "local_comm_id" for attr in CM_MESSAGES},
    "cm_remote_comm_id": {attr: "remote_comm_id" for attr in CM_MESSAGES if attr != CmAttr.REQ},
    "cm_local_qpn": {CmAttr.REQ: "local_qpn", CmAttr.REP: "local_qpn"},
    "cm_starting_psn": {CmAttr.REQ: "starting_psn", CmAttr.REP: "starting_psn"},
    "cm_reason": {CmAttr.REJ: "reason"},
}
"""Packet-table column -> the CM field it holds, per attribute (NA for other attributes):
what `rocetrace.analysis.cm` pairs connections from."""


def field_in_mad(attr: int, name: str) -> Field:
    """A CM message field placed from the start of the MAD, for vectorized gathers."""
    f = CM_MESSAGES[attr].field(name)
    return Field(f.name, f.bits, MAD_HEADER.size * 8 + f.bit_offset)


def decode_cm_mad(payload: bytes) -> dict[str, int]:
    """MAD header and CM message fields of a UD payload, the message's prefixed `cm_`.

    The reference decode used by tests and by whoever turns MADs into table rows; a MAD of
    another class, or a CM attribute without a table here, yields the MAD header only.
    """
    if len(payload) < MAD_SIZE:
        raise NeedData(f"a MAD is {MAD_SIZE} bytes, {len(payload)} given")
    values = {f"mad_{k}": v for k, v in MAD_HEADER.decode(payload).items()}
    message = CM_MESSAGES.get(values["mad_attribute_id"])
    if values["mad_mgmt_class"] == CM_MGMT_CLASS and message is not None:
        values |= {f"cm_{k}": v for k, v in message.decode(payload, MAD_HEADER.size).items()}
    return values


def encode_cm_mad(
    attr: int, transaction_id: int, *, private_data: bytes = b"", **fields: int
) -> bytes:
    """A 256-byte CM MAD (method Send): header, the message's fields, PrivateData, zeros."""
    header = MAD_HEADER.encode(
        base_version=MAD_BASE_VERSION,
        mgmt_class=CM_MGMT_CLASS,
        class_version=CM_CLASS_VERSION,
        method=METHOD_SEND,
        transaction_id=transaction_id,
        attribute_id=attr,
    )
    body = CM_MESSAGES[attr].encode(fields) + private_data
    if len(body) > MAD_DATA_SIZE:
        raise ValueError(f"CM message of {len(body)} bytes exceeds {MAD_DATA_SIZE}")
    return header + body.ljust(MAD_DATA_SIZE, b"\x00")
