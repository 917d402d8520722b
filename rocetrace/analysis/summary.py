"""The JSON summary, schema "rocetrace.summary/2" (docs/summary-schema.md).

Plain JSON types only: ints as numbers, nulls as None, so `json.dumps` needs no help.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.analysis.cm import CONNECTION_DTYPES
from rocetrace.analysis.pfc import pfc_summary
from rocetrace.schema import FINDINGS, NAK_KINDS

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

SCHEMA = "rocetrace.summary/2"
FLOW_KEYS = (
    "src_ip", "dst_ip", "dest_qp", "peer_qp", "role", "packets", "bytes", "first_psn",
    "last_psn", "retransmitted_packets", "psn_gaps", "naks", "retransmission_mode", "timeouts",
    "ecn_ce_packets", "cnps", "cnps_without_ce",
)  # fmt: skip
FLOW_EXTRAS = (
    "flow_id", "transport", "udp_sport", "dscp", "vlan_pcp", "ecn_capable", "mtu",
    "paired_by", "retransmission_episodes", "ack_timeout_s", "rnr_timer_us", "rtt_median_s",
    "rtt_samples", "cnp_interval_min_s", "first_ts", "last_ts", "history",
)  # fmt: skip
EPISODE_KEYS = (
    "src_ip", "dst_ip", "dest_qp", "ts", "ts_ns", "trigger", "trigger_certainty", "nak_psn",
    "nak_frame", "nak_frames", "start_psn", "packets", "mode", "mode_certainty", "delay_s",
    "first_frame", "last_psn", "evidence_frames", "late_frames", "nak_latency_ns",
    "retransmission_latency_ns", "silence_ns", "paused_ns", "resumed",
)  # fmt: skip
ANOMALY_KEYS = ("code", "flow_id", "flow", "ts_ns", "frame", "frames", "message")
FINDING_KEYS = tuple(c for c in FINDINGS.names if c != "first_time")


def plain(value: Any) -> Any:
    """A JSON-ready scalar: numpy ints -> int, NaN/NA -> None."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def plain_column(col: pd.Series) -> list[Any]:
    """A column as JSON-ready scalars (as `plain` per value, but column at a time)."""
    if isinstance(col.dtype, pd.ArrowDtype):  # the declared tables: nulls are None already
        values = pa.array(col).to_pylist()
        return _floats(np.asarray(values, float)) if col.dtype.kind == "f" else values
    kind = col.dtype.kind if isinstance(col.dtype, np.dtype) else "O"
    if kind in ("i", "u", "b"):
        return col.to_numpy().tolist()
    if kind == "O" and len(col) and isinstance(col.iloc[0], list):
        return [list(values) for values in col.tolist()]
    if kind == "f":
        return [None if v != v else v for v in col.to_numpy().tolist()]
    return [plain(v) for v in col.tolist()]


def _columns(df: pd.DataFrame, keys: tuple[str, ...]) -> dict[str, list[Any]]:
    return {k: plain_column(df[k]) for k in keys if k in df.columns}


def _floats(values: np.ndarray) -> list[Any]:
    """Floats as JSON-ready scalars (NaN -> None), as plain_column gives them."""
    return [None if v != v else v for v in values.tolist()]


def _flows(flows: pd.DataFrame) -> list[dict[str, Any]]:
    """One object per flow: FLOW_KEYS (NAKs by kind), then FLOW_EXTRAS; built row by row
    from whole-column lists (zip), not a dict comprehension per flow and key."""
    cols = _columns(flows, FLOW_KEYS + FLOW_EXTRAS)
    for edge in ("first", "last"):
        cols[f"{edge}_ts"] = _floats(flows[f"{edge}_ts_ns"].to_numpy() / 1e9)
    for key in ("dscp", "vlan_pcp", "udp_sport"):
        if key in cols:
            cols[key] = [None if v is not None and v < 0 else v for v in cols[key]]
    naks = zip(
        *(flows[f"naks_{k}"].to_numpy().astype(int).tolist() for k in NAK_KINDS), strict=True
    )
    cols["naks"] = [dict(zip(NAK_KINDS, row, strict=True)) for row in naks]
    absent = [None] * len(flows)
    keys = (*FLOW_KEYS, *FLOW_EXTRAS)
    columns = [cols[k] for k in FLOW_KEYS] + [cols.get(k, absent) for k in FLOW_EXTRAS]
    return [dict(zip(keys, row, strict=True)) for row in zip(*columns, strict=True)]


def _records(df: pd.DataFrame, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    if df.empty:
        return []
    cols = _columns(df, keys)
    return [dict(zip(cols, row, strict=True)) for row in zip(*cols.values(), strict=True)]


def _findings(findings: pd.DataFrame) -> list[dict[str, Any]]:
    """The findings as JSON-ready records: every column but the UTC timestamp (first_ts
    says the same in seconds)."""
    return _records(findings, FINDING_KEYS)


def _clock(a: Analysis) -> dict[str, Any]:
    """What the analysis measured of the capture's clock (tolerances.py)."""
    t = a.tolerances
    if t is None:
        return {}
    return {"ts_resolution_ns": t.resolution_ns, "jitter_ns": t.jitter_ns,
            "link_bps": t.link_bps, "link_certainty": t.link_certainty,
            "link_slowest_bps": t.link_slowest_bps, "link_fastest_bps": t.link_fastest_bps,
            "link_note": t.link_note, "max_frame_ns": t.max_frame_ns}  # fmt: skip


def build_summary(a: Analysis) -> dict[str, Any]:
    """Everything a script needs, keyed as in issue 4's contract."""
    from rocetrace.analysis.verdict import verdict

    v = verdict(a)
    return {
        "schema": SCHEMA,
        "verdict": {"level": v.level, "title": v.title, "detail": v.detail},
        "capture": {k: plain(v) for k, v in a.capture_facts.items()},
        "clock": _clock(a),
        "options": {k: plain(v) for k, v in a.options.items()},
        "flows": _flows(a.flows),
        "retransmissions": _records(a.retransmissions, EPISODE_KEYS),
        "pfc": pfc_summary(a.pfc, a.packets),
        "pfc_pauses": _records(
            a.pfc_pauses, ("src_mac", "priority", "start_ns", "duration_s", "frames", "first_frame")
        ),
        "udp_sports": _records(
            a.udp_sports,
            ("src_ip", "dst_ip", "qps", "distinct_sports", "colliding_qps", "busiest_sport"),
        ),
        "cm_connections": _records(a.cm_connections, tuple(CONNECTION_DTYPES)),
        "anomalies": _records(a.anomalies, ANOMALY_KEYS),
        "findings": _findings(a.findings),
    }
