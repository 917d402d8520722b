"""The analysis pipeline: packet table -> flows -> streams -> per-concern tables -> Analysis.

Only assembly lives here; every concern is its own module of pure functions.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.analysis import (
    anomalies,
    cm,
    congestion,
    connection,
    episodes,
    findings,
    flows,
    pfc,
    qos,
    sequence,
    tolerances,
)
from rocetrace.analysis.finish import finished
from rocetrace.analysis.flow_table import flows_table, timeouts
from rocetrace.analysis.prepared import ROCE_ENCAPS, Prepared, category_in, prepare
from rocetrace.analysis.result import Analysis
from rocetrace.capture.damage import damage_facts
from rocetrace.schema.conform import time_column

Progress = Callable[[str], None]


def _nullable_ints(values: np.ndarray, null: np.ndarray) -> pd.arrays.ArrowExtensionArray:
    """int64 values as the declared Arrow column, null where `null` (rocetrace.schema)."""
    return pd.arrays.ArrowExtensionArray(pa.array(values.astype(np.int64), mask=null))


def _packets_out(
    packets: pd.DataFrame,
    pp: Prepared,
    model: flows.FlowModel,
    conv: connection.Conversations,
    row_of_episode: np.ndarray,
) -> pd.DataFrame:
    """The packet table with the analysis' columns (schema.PACKET_EXTRAS), built in their
    declared dtypes so the last cast has nothing to copy."""
    retransmitted = np.zeros(len(pp), bool)
    retransmitted[conv.row[(conv.flags & connection.RESENT) > 0]] = True
    episode = np.full(len(pp), -1, np.int64)
    resent = np.flatnonzero(conv.episode >= 0)
    if len(resent):
        episode[conv.row[resent]] = row_of_episode[conv.episode[resent]]
    gap = np.zeros(len(pp), np.int64)
    gapped = np.flatnonzero(conv.gap > 0)
    gap[conv.row[gapped]] = conv.gap[gapped]

    def flags(values: np.ndarray) -> pd.Series:
        return pd.Series(pd.arrays.ArrowExtensionArray(pa.array(values)), index=packets.index)

    return packets.assign(
        time=pd.Series(time_column(pp.ts), index=packets.index),
        flow_id=pd.Series(_nullable_ints(model.flow_id, model.flow_id < 0), index=packets.index),
        retransmitted=flags(retransmitted),
        episode=pd.Series(_nullable_ints(episode, episode < 0), index=packets.index),
        psn_gap=pd.Series(_nullable_ints(gap, np.zeros(len(gap), bool)), index=packets.index),
        ce=flags(pp.ecn == 3),
    )


def analyze_packets(
    packets: pd.DataFrame,
    capture: Any = None,
    *,
    link_speed_bps: float = 100e9,
    progress: Progress | None = None,
    mads: pd.DataFrame | None = None,
    **options: Any,
) -> Analysis:
    """Run every analysis on a packet table (schema: rocetrace.schema); `mads`, the
    capture's CM MAD table (Capture.mads), pairs the QPs it connects."""
    step = progress or (lambda _name: None)
    step("flows")
    pp = prepare(packets)
    connections = cm.cm_connections(mads)
    model = flows.build_flow_model(pp, connections)
    span = flows.read_spans(pp, model)
    n = len(model)
    # The tables that need no PSN stream are built beside the stream chain: numpy releases
    # the GIL in its sorts and array passes, so the two overlap on a second core.
    with ThreadPoolExecutor(max_workers=1) as pool:
        beside = pool.submit(_stream_free_tables, pp, model, packets, link_speed_bps)
        tol = tolerances.measure(
            pp.ts, pp.src, pp.dst, pp.wire_len, _declared_resolution(capture, options)
        )
        free = beside.result()
    step("sequences")
    windows = pfc.PauseWindows(free.pfc)
    conv = connection.run_conversations(
        pp, model, span, _host_pairs(model), tol.slack_ns, tol.max_frame_ns, windows
    )
    step("retransmissions")
    nak_rows = sequence.nak_table(conv, pp, model)
    eps, row_of_episode = _episodes(conv, pp, model, tol, windows)
    step("congestion")
    cnps = free.cnps
    pfc_rows = free.pfc
    retx, gap_counts = sequence.flow_counts(conv, model)
    parts = {
        "retx": retx,
        "gaps": gap_counts,
        "nak_counts": sequence.nak_counts(nak_rows, n),
        "episodes": eps,
        "timeouts": timeouts(eps, n),
        "congestion": free.congestion,
        "qos": free.qos,
        "rtt": sequence.rtt_per_flow(conv, pp, n),
    }
    flow_df = flows_table(pp, model, parts)
    flow_df["rnr_timer_us"] = _rnr_timers(nak_rows, n)
    flow_df["history"] = pd.Series(conv.history, dtype=object)
    step("findings")
    info = _capture_facts(capture, packets)
    tables = findings.Tables(
        flows=flow_df,
        retransmissions=eps,
        naks=nak_rows,
        cnps=cnps,
        pfc_runs=pfc.pause_runs(pfc_rows),
        low_class_cnps=free.low_class_cnps,
        sports=free.sports,
        bad_icrc_frames=_bad_icrc(packets),
        capture=info,
        capture_gaps=sequence.capture_gaps(conv, pp, model),
        anomalies=anomalies.anomaly_table(conv, pp, model, connections),
        pfc=pfc_rows,
    )
    return finished(
        Analysis(
            packets=_packets_out(packets, pp, model, conv, row_of_episode),
            flows=flow_df,
            retransmissions=eps,
            naks=nak_rows,
            cnps=cnps,
            pfc=pfc_rows,
            findings=findings.build_findings(tables),
            capture=capture,
            options={"link_speed_bps": link_speed_bps, **options},
            tolerances=tol,
            pfc_pauses=tables.pfc_runs,
            udp_sports=tables.sports,
            capture_facts=info,
            cm_connections=connections,
            anomalies=tables.anomalies,
        )
    )


def _host_pairs(model: flows.FlowModel) -> np.ndarray:
    """Per flow, a code of its (source, destination) host pair."""
    if len(model) == 0:
        return np.zeros(0, np.int64)
    return pd.factorize(model.src.astype(np.int64) << 32 | model.dst)[0].astype(np.int64)


def _declared_resolution(capture: Any, options: dict[str, Any]) -> int | None:
    """The timestamp resolution the capture file declares (or the caller says)."""
    given = options.get("ts_resolution_ns") or getattr(capture, "ts_resolution_ns", None)
    return int(given) if given else None


def _episodes(
    conv: connection.Conversations,
    pp: Prepared,
    model: flows.FlowModel,
    tol: tolerances.Tolerances,
    windows: pfc.PauseWindows,
) -> tuple[pd.DataFrame, np.ndarray]:
    """The retransmissions table, the state machine's episodes weighed (episodes.py), and
    per episode its row in that table."""
    e = conv.episodes
    paused = np.zeros(len(e), np.int64)
    if len(e) and windows:
        t0 = conv.ts[e["first_ev"]]
        since = np.where(e["nak_ev"] >= 0, conv.ts[np.maximum(e["nak_ev"], 0)], t0)
        paused = windows.overlap(model.priority[e["conv"]], since, t0)
    upstream = np.zeros(len(model), bool)
    lost = conv.conv[(conv.flags & (connection.GAP | connection.LATE)) > 0]
    upstream[lost[lost >= 0]] = True
    ctx = episodes.Context(conv, pp, model, tol, paused, upstream)
    return episodes.episode_table(ctx)


class StreamFreeTables(NamedTuple):
    """Per-flow tables that need no PSN stream: CNPs, congestion, QoS, PFC, and the
    QoS audits (CNP classes, source-port entropy) that read only flow keys and QoS columns."""

    cnps: pd.DataFrame
    congestion: pd.DataFrame
    qos: pd.DataFrame
    pfc: pd.DataFrame
    low_class_cnps: pd.DataFrame
    sports: pd.DataFrame


def _stream_free_tables(
    pp: Prepared, model: flows.FlowModel, packets: pd.DataFrame, link_speed_bps: float
) -> StreamFreeTables:
    cnps = congestion.cnp_table(pp, model)
    qos_df = qos.qos_per_flow(pp, model)
    n = len(model)
    keyed = qos_df.assign(  # the flows table's columns that the audits read
        flow_id=np.arange(n, dtype=np.int64),
        src_ip=pp.ips[model.src] if n else [],
        dst_ip=pp.ips[model.dst] if n else [],
        dest_qp=model.qp,
    )
    return StreamFreeTables(
        cnps=cnps,
        congestion=congestion.congestion_per_flow(pp, model, cnps),
        qos=qos_df,
        pfc=pfc.pfc_table(packets, link_speed_bps),
        low_class_cnps=qos.cnp_class_audit(cnps, keyed),
        sports=qos.sport_entropy(keyed),
    )


def _rnr_timers(nak_rows: pd.DataFrame, n: int) -> np.ndarray:
    """Per flow, the timer of the last RNR NAK about it (NaN when none)."""
    timers = np.full(n, np.nan)
    rnr = np.flatnonzero((nak_rows["kind"] == "rnr") & nak_rows["flow_id"].notna())
    if len(rnr):
        flow = nak_rows["flow_id"].to_numpy(np.int64, na_value=-1)[rnr][::-1]
        _, last = np.unique(flow, return_index=True)  # first of the reversed rows: the last
        timers[flow[last]] = nak_rows["rnr_timer_us"].to_numpy()[rnr][::-1][last]
    return timers


def _bad_icrc(packets: pd.DataFrame) -> list[int]:
    if "icrc_status" not in packets.columns:
        return []
    bad = np.flatnonzero(category_in(packets["icrc_status"], ("bad",)))
    return packets["frame"].to_numpy()[bad].astype(int).tolist() if len(bad) else []


def _table_facts(packets: pd.DataFrame) -> dict[str, Callable[[], Any]]:
    """How to count each capture fact from the table itself (only when CaptureInfo lacks it)."""
    roce = lambda: category_in(packets["encap"], ROCE_ENCAPS)  # noqa: E731
    ts = packets["ts_ns"]
    return {
        "packets": lambda: len(packets),
        "roce_packets": lambda: int(roce().sum()),
        "non_roce_packets": lambda: int((~roce()).sum()),
        "malformed_packets": lambda: (
            int(packets["anomaly"].notna().sum()) if "anomaly" in packets else 0
        ),
        "truncated_packets": lambda: int((packets["cap_len"] < packets["wire_len"]).sum()),
        "incomplete_tail": lambda: False,
        "first_ts": lambda: float(ts.min()) / 1e9 if len(ts) else None,
        "last_ts": lambda: float(ts.max()) / 1e9 if len(ts) else None,
    }


def _capture_facts(capture: Any, packets: pd.DataFrame) -> dict[str, Any]:
    """The summary's capture object, from CaptureInfo or, without one, from the table; with
    the file's damage: anomalies per reason, corrupt records skipped (capture.damage)."""
    table = _table_facts(packets)
    if capture is None:
        return {key: count() for key, count in table.items()} | damage_facts(None, packets)
    facts: dict[str, Any] = {}
    counted = ("packets", "roce_packets", "non_roce_packets", "malformed_packets")
    for key in (*counted, "truncated_packets"):
        facts[key] = int(getattr(capture, key)) if hasattr(capture, key) else table[key]()
    facts["incomplete_tail"] = bool(getattr(capture, "incomplete_tail", False))
    for key in ("first_ts", "last_ts"):
        ns = getattr(capture, f"{key}_ns", None)
        facts[key] = float(ns) / 1e9 if ns is not None else table[key]()
    return facts | damage_facts(capture, packets)
