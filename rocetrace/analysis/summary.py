"""The JSON summary, schema "rocetrace.summary/1" (docs/summary-schema.md).

Plain JSON types only: ints as numbers, nulls as None, so `json.dumps` needs no help.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from rocetrace.analysis.naks import NAK_KINDS
from rocetrace.analysis.pfc import pfc_summary

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

SCHEMA = "rocetrace.summary/1"
FLOW_KEYS = (
    "src_ip", "dst_ip", "dest_qp", "peer_qp", "role", "packets", "bytes", "first_psn",
    "last_psn", "retransmitted_packets", "psn_gaps", "naks", "retransmission_mode", "timeouts",
    "ecn_ce_packets", "cnps", "cnps_without_ce",
)  # fmt: skip
FLOW_EXTRAS = (
    "flow_id", "transport", "udp_sport", "dscp", "vlan_pcp", "ecn_capable", "mtu",
    "paired_by", "retransmission_episodes", "ack_timeout_s", "rnr_timer_us", "rtt_median_s",
    "cnp_interval_min_s", "first_ts", "last_ts",
)  # fmt: skip
EPISODE_KEYS = (
    "src_ip", "dst_ip", "dest_qp", "ts", "ts_ns", "trigger", "nak_psn", "start_psn", "packets",
    "mode", "delay_s", "first_frame", "last_psn",
)  # fmt: skip


def plain(value: Any) -> Any:
    """A JSON-ready scalar: numpy ints -> int, NaN/NA -> None."""
    if value is None or value is pd.NA:
        return None
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _flow(row: pd.Series) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in FLOW_KEYS:
        if key == "naks":
            out["naks"] = {k: int(row[f"naks_{k}"]) for k in NAK_KINDS}
        else:
            out[key] = plain(row[key])
    row = row.copy()
    row["first_ts"] = row["first_ts_ns"] / 1e9
    row["last_ts"] = row["last_ts_ns"] / 1e9
    for key in FLOW_EXTRAS:
        out[key] = plain(row[key]) if key in row.index else None
    for key in ("dscp", "vlan_pcp", "udp_sport"):
        out[key] = None if out[key] is not None and out[key] < 0 else out[key]
    return out


def _records(df: pd.DataFrame, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    cols = [k for k in keys if k in df.columns]
    return [
        {k: plain(v) for k, v in zip(cols, row, strict=True)}
        for row in df[cols].itertuples(index=False)
    ]


def build_summary(a: Analysis) -> dict[str, Any]:
    """Everything a script needs, keyed as in issue 4's contract."""
    findings = [
        {k: (plain(v) if k != "frames" else [int(f) for f in v]) for k, v in r.items()}
        for r in a.findings.to_dict("records")
    ]
    return {
        "schema": SCHEMA,
        "capture": {k: plain(v) for k, v in a.capture_facts.items()},
        "options": {k: plain(v) for k, v in a.options.items()},
        "flows": [_flow(r) for _, r in a.flows.iterrows()],
        "retransmissions": _records(a.retransmissions, EPISODE_KEYS),
        "pfc": pfc_summary(a.pfc, a.packets),
        "pfc_pauses": _records(
            a.pfc_pauses, ("src_mac", "priority", "start_ns", "duration_s", "frames", "first_frame")
        ),
        "udp_sports": _records(
            a.sports,
            ("src_ip", "dst_ip", "qps", "distinct_sports", "colliding_qps", "busiest_sport"),
        ),
        "findings": findings,
    }
