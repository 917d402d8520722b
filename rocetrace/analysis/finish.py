"""The last step of an analysis: every table cast to its declaration (rocetrace.schema),
with the columns a person reads beside the integers: flow keys with QPs in hex, UTC
timestamps beside the nanoseconds, where a loss happened.

Why one step at the end: the analyses compute in whatever numpy / pandas types suit them
(and read each other's tables that way); what leaves the analysis has one declared form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace import schema
from rocetrace.analysis.result import Analysis
from rocetrace.flowkey import flow_keys
from rocetrace.schema.conform import conform


def _keys_of(flow_id: pd.Series, keys: np.ndarray) -> list[Any]:
    """The key of each row's flow (None where the flow id is null or unknown)."""
    ids = pd.to_numeric(flow_id, errors="coerce").to_numpy(np.float64, na_value=np.nan)
    known = (ids >= 0) & (ids < len(keys))
    out = np.full(len(ids), None, dtype=object)
    out[known] = keys[ids[known].astype(np.int64)]
    return out.tolist()


def _times(df: pd.DataFrame, pairs: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    """UTC timestamp columns from nanosecond columns (null where the nanoseconds are)."""
    out: dict[str, Any] = {}
    for time, ns in pairs:
        if ns in df:
            values = pd.to_numeric(df[ns], errors="coerce")
            out[time] = pd.to_datetime(values, unit="ns", utc=True).array
    return out


def loss_location(retransmissions: pd.DataFrame) -> np.ndarray:
    """Per episode: "downstream" when the capture saw the first copy of its first resent
    PSN (the packet passed the capture point and was lost after it), else "upstream"."""
    if "retransmission_latency_ns" not in retransmissions:  # tables not from the pipeline
        return np.full(len(retransmissions), None, dtype=object)
    seen = retransmissions["retransmission_latency_ns"].notna().to_numpy(bool)
    return np.where(seen, "downstream", "upstream").astype(object)


def finish_flows(flows: pd.DataFrame) -> pd.DataFrame:
    keys = flow_keys(flows["src_ip"], flows["dst_ip"], flows["dest_qp"])
    times = _times(flows, (("first_time", "first_ts_ns"), ("last_time", "last_ts_ns")))
    return conform(flows.assign(flow=keys, **times), schema.FLOWS)


def _events(df: pd.DataFrame, table: schema.Table, keys: np.ndarray, **extra: Any) -> Any:
    """An event table with its flow keys and UTC times, conformed (an empty one has none to
    work out: conform makes its missing columns)."""
    added: dict[str, Any] = dict(extra)
    if len(df) == 0:
        return conform(df.assign(**added) if added else df, table)
    if "flow" in table.names and "flow_id" in df:
        added["flow"] = _keys_of(df["flow_id"], keys)
    for col in table.columns:
        if col.type == schema.column.TIME and col.name not in df:
            stem = col.name.removesuffix("time")  # "", "first_", "start_", ...
            ns = next((c for c in (f"{stem}ts_ns", f"{stem}ns") if c in df), None)
            added |= _times(df, ((col.name, ns),)) if ns else {}
    return conform(df.assign(**added) if added else df, table)


def finished(a: Analysis) -> Analysis:
    """The analysis with every table in its declared form (rocetrace.schema.TABLES)."""
    a.flows = finish_flows(a.flows)
    keys = a.flows["flow"].to_numpy(object)
    eps = a.retransmissions
    a.retransmissions = _events(eps, schema.RETRANSMISSIONS, keys,
                                loss_location=loss_location(eps))  # fmt: skip
    for name in ("naks", "cnps", "pfc", "pfc_pauses", "udp_sports", "anomalies"):
        setattr(a, name, _events(getattr(a, name), schema.TABLES[name], keys))
    a.cm_connections = _events(a.cm_connections, schema.CM_CONNECTIONS, keys)
    a.findings = _events(a.findings, schema.FINDINGS, keys)
    a.packets = conform(a.packets, schema.PACKETS)
    return a
