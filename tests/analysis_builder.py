"""Hand-made packet tables for analysis unit tests: rows as dicts, schema dtypes.

Only the fields a test cares about are given; the rest are null (or a sensible default).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from rocetrace.dissectors.opcodes import opcode_name
from rocetrace.schema import PACKET_COLUMNS

A, B = "10.0.0.1", "10.0.0.2"
OP = {
    "SEND_ONLY": 0x04,
    "SEND_FIRST": 0x00,
    "SEND_MIDDLE": 0x01,
    "SEND_LAST": 0x02,
    "WRITE_FIRST": 0x06,
    "WRITE_MIDDLE": 0x07,
    "WRITE_LAST": 0x08,
    "WRITE_ONLY": 0x0A,
    "READ_REQUEST": 0x0C,
    "READ_FIRST": 0x0D,
    "READ_MIDDLE": 0x0E,
    "READ_LAST": 0x0F,
    "READ_ONLY": 0x10,
    "ACK": 0x11,
    "CNP": 0x81,
    "UD_SEND_ONLY": 0x64,
}


def packet_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A packet table in the schema's dtypes; frames numbered 1.. and 1 us apart by default."""
    filled = []
    for i, row in enumerate(rows):
        r = {"frame": i + 1, "ts_ns": 1_000_000_000_000 + 1000 * i, "cap_len": 100, "wire_len": 100}
        r |= {"encap": "roce_v2", "ecn": 2, "dscp": 26, "udp_sport": 50000, "udp_dport": 4791}
        r |= row
        if r.get("opcode") is not None:
            r.setdefault("opcode_name", opcode_name(r["opcode"]))
        filled.append(r)
    data = {}
    for col in PACKET_COLUMNS:
        values = [r.get(col.name) for r in filled]
        if col.dtype == "category":
            data[col.name] = pd.Categorical(values)
        else:
            data[col.name] = pd.array(values, dtype=col.dtype)  # type: ignore[call-overload]
    return pd.DataFrame(data)


def req(
    psn: int, op: str = "SEND_ONLY", src: str = A, dst: str = B, qp: int = 0x12, **kw: Any
) -> dict:
    """A request from src to QP `qp` at dst."""
    return {
        "src_ip": src,
        "dst_ip": dst,
        "dest_qp": qp,
        "psn": psn % (1 << 24),
        "opcode": OP[op],
    } | kw


def ack(
    psn: int, src: str = B, dst: str = A, qp: int = 0x34, syndrome: int = 0x1F, **kw: Any
) -> dict:
    """An ACK (or NAK / RNR NAK by syndrome) from the responder back to QP `qp`."""
    return (
        {"src_ip": src, "dst_ip": dst, "dest_qp": qp, "psn": psn % (1 << 24), "opcode": OP["ACK"]}
        | {"aeth_syndrome": syndrome, "aeth_msn": 1}
        | kw
    )


def nak(psn: int, code: int = 0, **kw: Any) -> dict:
    return ack(psn, syndrome=0x60 | code, **kw)


def rnr(psn: int, timer: int = 14, **kw: Any) -> dict:
    return ack(psn, syndrome=0x20 | timer, **kw)


def cnp(src: str = B, dst: str = A, qp: int = 0x34, **kw: Any) -> dict:
    return {
        "src_ip": src,
        "dst_ip": dst,
        "dest_qp": qp,
        "psn": 0,
        "opcode": OP["CNP"],
        "dscp": 48,
    } | kw


def at(rows: list[dict], start_ns: int = 1_000_000_000_000, step_ns: int = 1000) -> list[dict]:
    """Space rows `step_ns` apart (explicit ts_ns in a row wins)."""
    return [{"ts_ns": start_ns + i * step_ns} | r for i, r in enumerate(rows)]
