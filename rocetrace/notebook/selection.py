"""Selecting part of an analysis: `a.flow("10.0.0.1>10.0.0.2/0x11")`, `a.select(qp=0x11)`,
`a.select(src="10.0.0.1", t0="2026-01-01 00:00:00.001")`.

A selection is an `Analysis` of its own (every table filtered, the capture's info shared),
so everything works on it: its tables, `.summary()`, `.plot.psn()`, `.save()`. A
connection has two directions: each selected flow brings its reverse flow (its ACKs, NAKs
and READ responses), so a PSN graph of the selection shows the answers too.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rocetrace.flowkey import parse_flow_key

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

FLOW_TABLES = ("retransmissions", "naks", "cnps", "anomalies")  # rows keyed by flow_id


def _instant(value: Any, origin_ns: int) -> int | None:
    """A time bound as ns since the epoch: a timestamp (text, datetime, pd.Timestamp; UTC
    when it names no zone), or a number of seconds since the first RoCE frame."""
    if value is None:
        return None
    if isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        return origin_ns + round(float(value) * 1e9)
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return int(stamp.value)


def _ids(flows: pd.DataFrame) -> np.ndarray:
    return flows["flow_id"].to_numpy(np.int64)


def matching_flows(flows: pd.DataFrame, qp: Any, src: Any, dst: Any) -> np.ndarray:
    """Ids of the flows that match every given criterion; `qp` matches either end of a
    connection (dest_qp or peer_qp), since a NIC tool names the QP of one end."""
    keep = np.ones(len(flows), bool)
    if qp is not None:
        dest = flows["dest_qp"].to_numpy(np.int64, na_value=-1)
        peer = flows["peer_qp"].to_numpy(np.int64, na_value=-1)
        keep &= (dest == int(qp)) | (peer == int(qp))
    for column, wanted in (("src_ip", src), ("dst_ip", dst)):
        if wanted is not None:
            keep &= flows[column].astype(object).to_numpy() == str(wanted)
    return _ids(flows)[keep]


def with_reverse(flows: pd.DataFrame, ids: np.ndarray) -> np.ndarray:
    """The flows and the reverse flow of each (the other direction of its connection)."""
    chosen = flows[np.isin(_ids(flows), ids)]
    pairs = chosen["pair_flow_id"].dropna().to_numpy(np.int64)
    return np.union1d(ids, pairs)


def _in_window(df: pd.DataFrame, column: str, t0: int | None, t1: int | None) -> np.ndarray:
    keep = np.ones(len(df), bool)
    if column not in df or (t0 is None and t1 is None):
        return keep
    keep &= df[column].notna().to_numpy(bool)
    ts = df[column].to_numpy(np.int64, na_value=0)  # int64: float64 rounds epoch ns to 256
    if t0 is not None:
        keep &= ts >= t0
    if t1 is not None:
        keep &= ts <= t1
    return keep


def _rows(df: pd.DataFrame, mask: np.ndarray) -> pd.DataFrame:
    return df[mask].reset_index(drop=True)


def _findings(findings: pd.DataFrame, keys: set[str], by_flow: bool) -> pd.DataFrame:
    """Findings about a selected flow (all of them when no flow was chosen)."""
    if not by_flow:
        return findings
    about = [bool(keys & set(flows)) for flows in findings["flows"]]
    return _rows(findings, np.asarray(about, bool))


def select(a: Analysis, ids: np.ndarray | None, t0: Any, t1: Any) -> Analysis:
    """The analysis restricted to flows `ids` (None: every flow) and the window [t0, t1]."""
    from rocetrace.reports.data import time_origin_ns

    origin = time_origin_ns(a)
    start, end = _instant(t0, origin), _instant(t1, origin)
    flows = a.flows if ids is None else _rows(a.flows, np.isin(_ids(a.flows), ids))
    chosen = _ids(flows)
    parts: dict[str, Any] = {"flows": flows}
    for name in (*FLOW_TABLES, "packets"):
        df = getattr(a, name)
        keep = _in_window(df, "ts_ns", start, end)
        if ids is not None:
            keep &= np.isin(df["flow_id"].to_numpy(np.int64, na_value=-1), chosen)
        parts[name] = _rows(df, keep)
    for name, column in (("pfc", "ts_ns"), ("pfc_pauses", "start_ns")):
        df = getattr(a, name)
        parts[name] = _rows(df, _in_window(df, column, start, end))
    keys = set(flows["flow"].astype(object))
    parts["findings"] = _findings(a.findings, keys, ids is not None)
    selection = {"flows": None if ids is None else chosen.tolist(), "t0": start, "t1": end}
    return dataclasses.replace(a, **parts, options=a.options | {"selection": selection})


def flow_id_of(flows: pd.DataFrame, key: Any) -> int:
    """The id of the flow a key names ("src>dst/0xQP", QP in hex or decimal, or a flow id);
    KeyError naming the closest keys when none matches."""
    if isinstance(key, int | np.integer):
        if int(key) in set(_ids(flows).tolist()):
            return int(key)
        raise KeyError(f"no flow {key}: flow ids are 0..{len(flows) - 1}")
    src, dst, qp = parse_flow_key(str(key))
    hit = flows[(flows["src_ip"] == src) & (flows["dst_ip"] == dst) & (flows["dest_qp"] == qp)]
    if len(hit):
        return int(hit["flow_id"].iloc[0])
    close = difflib.get_close_matches(str(key), flows["flow"].astype(str).tolist(), n=3)
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise KeyError(f"no flow {key!r}{hint}")
