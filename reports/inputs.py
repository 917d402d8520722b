"""The schemas `rocetrace report` holds its inputs to, as far as the report reads them: a JSON
summary (rocetrace.summary/2, docs/summary-schema.md), a bundle's manifest and its tables
(reports/bundle.py; each table is then cast to its declaration, rocetrace.schema).
reports/validate.py does the checking and names what does not fit."""

from __future__ import annotations

from typing import Any

from rocetrace.errors import InvalidResults
from rocetrace.reports.validate import (
    ALWAYS,
    OPTIONAL,
    WITH_ROWS,
    Column,
    Field,
    check_list,
    check_object,
    check_table,
    check_unique,
)
from rocetrace.schema import NAK_KINDS

COUNTS: tuple[str, ...] = ("packets", "roce_packets", "non_roce_packets", "malformed_packets")
COUNTS += ("truncated_packets", "snaplen", "tail_bytes", "corrupt_records", "skipped_bytes")
CAPTURE: dict[str, Field] = {
    **dict.fromkeys(("path", "file", "format"), ("str", False)),
    "compressed": ("bool", False),
    "incomplete_tail": ("bool", False),
    "link_types": ("int_or_ints", False),
    **dict.fromkeys(COUNTS, ("count", False)),
    **dict.fromkeys(("first_ts", "last_ts", "first_ts_ns", "last_ts_ns"), ("time", False)),
    **dict.fromkeys(("anomaly_counts", "anomalies"), ("counts", False)),
}

_FLOW_COUNTS: tuple[str, ...] = (
    "bytes",
    "retransmitted_packets",
    "psn_gaps",
    "timeouts",
    "ecn_ce_packets",
)
_FLOW_COUNTS += ("cnps", "cnps_without_ce", "retransmission_episodes")
_FLOW_INTS = ("peer_qp", "first_psn", "last_psn", "udp_sport", "dscp", "vlan_pcp", "mtu")
_FLOW_TEXTS = ("role", "retransmission_mode", "transport", "paired_by")
_FLOW_NUMBERS = ("ack_timeout_s", "rnr_timer_us", "rtt_median_s", "cnp_interval_min_s")
SUMMARY_FLOW: dict[str, Field] = {
    "src_ip": ("str", True),
    "dst_ip": ("str", True),
    "dest_qp": ("int", True),
    "packets": ("count", True),
    "naks": ("counts", False),
    "ecn_capable": ("bool", False),
    **dict.fromkeys(_FLOW_COUNTS, ("count", False)),
    **dict.fromkeys(_FLOW_INTS, ("int", False)),
    **dict.fromkeys(_FLOW_TEXTS, ("str", False)),
    **dict.fromkeys(_FLOW_NUMBERS, ("num", False)),
    **dict.fromkeys(("first_ts", "last_ts"), ("time", False)),
}
SUMMARY_EPISODE: dict[str, Field] = {
    "src_ip": ("str", True),
    "dst_ip": ("str", True),
    "dest_qp": ("int", True),
    "start_psn": ("int", True),
    "packets": ("count", True),
    **dict.fromkeys(("ts", "ts_ns"), ("time", False)),
    **dict.fromkeys(("trigger", "mode", "trigger_certainty", "mode_certainty"), ("str", False)),
    **dict.fromkeys(("nak_psn", "nak_frame", "first_frame", "last_psn"), ("int", False)),
    "delay_s": ("num", False),
}
FINDING: dict[str, Field] = {
    **dict.fromkeys(("severity", "code", "message"), ("str", True)),
    "flow": ("str", False),
    "first_ts": ("time", False),
    "frames": ("ints", False),
    "flow_id": ("int", False),
}


def checked_summary(data: Any, where: str) -> dict[str, Any]:
    """A summary's capture facts, flows, episodes and findings, each field checked."""
    if not isinstance(data, dict):
        raise InvalidResults(f"{where}: must be a JSON object")
    return {
        "capture": check_object(data.get("capture") or {}, CAPTURE, f"{where}.capture", True),
        "flows": check_list(data.get("flows"), SUMMARY_FLOW, f"{where}.flows"),
        "retransmissions": check_list(
            data.get("retransmissions"), SUMMARY_EPISODE, f"{where}.retransmissions"
        ),
        "findings": check_list(data.get("findings"), FINDING, f"{where}.findings"),
    }


MANIFEST: dict[str, Field] = {"schema": ("str", True)}
TABLES_V1 = ("packets", "flows", "retransmissions", "naks", "cnps", "pfc", "findings")


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidResults(f"{where}: must be an object")
    return value


def checked_manifest(data: Any, schemas: tuple[str, ...], where: str) -> dict[str, Any]:
    """A bundle manifest: its schema, capture info (checked), capture facts, clock and
    options (objects; rocetrace.store restores what fits)."""
    manifest = check_object(data, MANIFEST, where, keep_unknown=True)
    if manifest["schema"] not in schemas:
        raise InvalidResults(f"{where}.schema: {manifest['schema']!r} is not one of {schemas}")
    parts: dict[str, Any] = {
        k: _mapping(manifest.get(k) or {}, f"{where}.{k}") for k in ("options", "capture_facts")
    }
    clock = manifest.get("tolerances")
    parts["tolerances"] = _mapping(clock, f"{where}.tolerances") if clock else None
    capture = check_object(manifest.get("capture") or {}, CAPTURE, f"{where}.capture", True)
    return {"capture": capture, **parts}


def _columns(kind: str, names: tuple[str, ...]) -> dict[str, Column]:
    return dict.fromkeys(names, (kind, OPTIONAL, True))


TABLE_COLUMNS: dict[str, dict[str, Column]] = {
    "packets": {
        "ts_ns": ("time", ALWAYS, False),
        "flow_id": ("int", ALWAYS, True),
        **_columns("int", ("frame", "psn", "opcode", "aeth_syndrome", "ecn")),
        "wire_len": ("count", OPTIONAL, True),
        **_columns("bool", ("retransmitted", "ce")),
        "anomaly": ("str", OPTIONAL, True),
    },
    "flows": {
        "flow_id": ("int", ALWAYS, False),
        "src_ip": ("str", ALWAYS, False),
        "dst_ip": ("str", ALWAYS, False),
        "dest_qp": ("int", ALWAYS, False),
        "packets": ("count", ALWAYS, False),
        **_columns("count", _FLOW_COUNTS + tuple(f"naks_{k}" for k in NAK_KINDS)),
        **_columns("int", _FLOW_INTS),
        **_columns("str", _FLOW_TEXTS),
        "ecn_capable": ("bool", OPTIONAL, True),
        **_columns("time", ("first_ts_ns", "last_ts_ns")),
    },
    "retransmissions": {
        "flow_id": ("int", WITH_ROWS, False),
        "start_psn": ("int", WITH_ROWS, False),
        "packets": ("count", WITH_ROWS, False),
        **_columns("time", ("ts", "ts_ns")),
        **_columns("str", ("trigger", "mode")),
        **_columns("int", ("nak_psn", "first_frame")),
        "delay_s": ("num", OPTIONAL, True),
    },
    "naks": {  # a flow's graph reads them, even when none is the flow's
        "flow_id": ("int", ALWAYS, True),
        "ts_ns": ("time", ALWAYS, False),
        "psn": ("int", ALWAYS, True),
        "frame": ("int", ALWAYS, True),
        "kind": ("str", OPTIONAL, True),
    },
    "cnps": {
        "flow_id": ("int", ALWAYS, True),
        "ts_ns": ("time", ALWAYS, False),
        "frame": ("int", ALWAYS, True),
        **_columns("int", ("dscp", "dest_qp")),
        "ce_before": ("bool", OPTIONAL, True),
        **_columns("str", ("src_ip", "dst_ip")),
    },
    "pfc": {
        "ts_ns": ("time", WITH_ROWS, False),
        "held_s": ("num", OPTIONAL, True),
        "priority": ("int", WITH_ROWS, True),
        "quanta": ("count", WITH_ROWS, True),
        "pause": ("bool", WITH_ROWS, True),
        "paused_s": ("num", WITH_ROWS, True),
        "src_mac": ("str", WITH_ROWS, False),  # the pauses of one port are sorted by it
        "frame": ("int", WITH_ROWS, True),
    },
    "findings": {
        **dict.fromkeys(("severity", "code", "message"), ("str", WITH_ROWS, False)),
        "flow": ("str", OPTIONAL, True),
        "first_ts": ("time", WITH_ROWS, True),
        "frames": ("ints", OPTIONAL, True),
        "flow_id": ("int", OPTIONAL, True),
    },
}


def checked_tables(tables: dict[str, Any], where: str) -> dict[str, Any]:
    """Every bundle table, its columns checked against TABLE_COLUMNS; flows named once."""
    checked = {
        n: check_table(df, TABLE_COLUMNS.get(n, {}), f"{where}: table {n}")
        for n, df in tables.items()
    }
    check_unique(checked["flows"], "flow_id", f"{where}: table flows")
    return checked
