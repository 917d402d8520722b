"""The analysis pipeline: packet table -> flows -> streams -> per-concern tables -> Analysis.

Only assembly lives here; every concern is its own module of pure functions.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from rocetrace.analysis import cm, congestion, findings, flows, gaps, naks, pfc, qos, reads, rtt
from rocetrace.analysis import retransmissions as rtx
from rocetrace.analysis.flow_table import flows_table, timeouts
from rocetrace.analysis.frames import empty_frame
from rocetrace.analysis.prepared import (
    PSN_MOD,
    ROCE_ENCAPS,
    Prepared,
    _ip_codes,
    category_in,
    malformed_roce,
    prepare,
)
from rocetrace.analysis.result import Analysis
from rocetrace.capture.damage import damage_facts

Progress = Callable[[str], None]


def _stream_counts(s: gaps.Stream, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per flow: retransmitted packets and skipped PSNs; only the few nonzero rows are
    counted (a weighted bincount over every frame costs ~3 ms per stream)."""
    retx = np.bincount(s.flow[np.flatnonzero(s.retransmitted)], minlength=n)
    gapped = np.flatnonzero(s.gap)
    gap = np.bincount(s.flow[gapped], weights=s.gap[gapped], minlength=n).astype(np.int64)
    return retx, gap


def _capture_gaps(pp: Prepared, s: gaps.Stream) -> pd.DataFrame:
    """Gaps whose skipped PSNs never show up in the flow: likely capture drops. Nothing
    before a gap can hold its PSNs (they were beyond the highest), so any later copy is
    found by counting the flow's PSNs inside the gap."""
    j = np.flatnonzero(s.gap > 0)
    if len(j) == 0:
        return empty_frame(dict.fromkeys(["flow_id", "ts_ns", "frame", "psns"], object))
    starts = s.first
    gidx = np.cumsum(starts) - 1
    low = np.minimum.reduceat(s.ext, np.flatnonzero(starts))[gidx]
    key = np.sort(s.ext - low + gidx * gaps.BIG)
    lo, hi = s.high_before[j] + 1, s.ext[j] - 1
    base = gidx[j] * gaps.BIG - low[j]
    seen = np.searchsorted(key, hi + base, "right") - np.searchsorted(key, lo + base, "left")
    drop = j[seen == 0]
    drop = drop[~_malformed_inside(pp, s.idx[drop - 1], s.idx[drop])]
    return pd.DataFrame(
        {"flow_id": s.flow[drop], "ts_ns": pp.ts[s.idx[drop]], "frame": pp.frames_at(s.idx[drop])}
        | {"psns": s.gap[drop]}
    )


def _malformed_inside(pp: Prepared, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per gap (a flow's frames `before` and `after` it): does a malformed frame between the
    two, of the flow's IP pair, hold the missing PSNs? Then the capture did not drop them."""
    bad = np.flatnonzero(malformed_roce(pp.table))
    if len(bad) == 0 or len(after) == 0:
        return np.zeros(len(after), bool)
    src, dst, _ = _ip_codes(pp.table)  # the codes of pp.ips, unmasked
    pairs, pair = np.unique(src[bad] * len(pp.ips) + dst[bad], return_inverse=True)
    marks = np.sort(pair * len(pp) + bad)  # (IP pair, frame) of each malformed frame
    wanted = pp.src[after] * len(pp.ips) + pp.dst[after]
    at = np.minimum(np.searchsorted(pairs, wanted), len(pairs) - 1)
    base = at * len(pp)
    between = np.searchsorted(marks, base + after) > np.searchsorted(marks, base + before, "right")
    return (pairs[at] == wanted) & between


def _packets_out(
    packets: pd.DataFrame, pp: Prepared, model: flows.FlowModel, streams: list[gaps.Stream]
) -> pd.DataFrame:
    retransmitted = np.zeros(len(pp), bool)
    for s in streams:
        retransmitted[s.idx[np.flatnonzero(s.retransmitted)]] = True
    outside = model.flow_id < 0  # built as a masked array directly: pd.array() re-checks
    flow_id = pd.arrays.IntegerArray(np.where(outside, 0, model.flow_id).astype(np.int32), outside)
    return packets.assign(
        flow_id=pd.Series(flow_id, index=packets.index),
        retransmitted=retransmitted,
        ce=pp.ecn == 3,
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
    """Run every analysis on a packet table (schema: rocetrace/schema.py); `mads`, the
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
        seq = _sequence_tables(pp, model, span, step, link_speed_bps)
        free = beside.result()
    step("congestion")
    req, resp = seq.req, seq.resp
    nak_rows, eps, cnps, pfc_rows = seq.naks, seq.episodes, free.cnps, free.pfc
    retx_q, gaps_q = _stream_counts(req, n)
    retx_r, gaps_r = _stream_counts(resp, n)
    parts = {
        "retx": retx_q + retx_r,
        "gaps": gaps_q + gaps_r,
        "nak_counts": naks.nak_counts(nak_rows, n),
        "episodes": eps,
        "timeouts": timeouts(eps, n),
        "congestion": free.congestion,
        "qos": free.qos,
        "rtt": free.rtt,
    }
    flow_df = flows_table(pp, model, parts)
    flow_df["rnr_timer_us"] = _rnr_timers(nak_rows, n)
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
        capture_gaps=pd.concat([_capture_gaps(pp, req), _capture_gaps(pp, resp)]),
    )
    return Analysis(
        packets=_packets_out(packets, pp, model, [req, resp]),
        flows=flow_df,
        retransmissions=eps,
        naks=nak_rows,
        cnps=cnps,
        pfc=pfc_rows,
        findings=findings.build_findings(tables),
        capture=capture,
        options={"link_speed_bps": link_speed_bps, **options},
        pfc_pauses=tables.pfc_runs,
        sports=tables.sports,
        capture_facts=info,
        cm_connections=connections,
    )


class SequenceTables(NamedTuple):
    """What the PSN streams give: the streams themselves, NAKs and retransmission episodes."""

    req: gaps.Stream
    resp: gaps.Stream
    naks: pd.DataFrame
    episodes: pd.DataFrame


def _sequence_tables(
    pp: Prepared, model: flows.FlowModel, span: np.ndarray, step: Progress, link_bps: float
) -> SequenceTables:
    """Request and response streams, then NAKs and the episodes they explain."""
    step("sequences")
    req = gaps.request_stream(pp, model, span)
    resp = gaps.response_stream(pp, model, req)
    progress_rows = naks.ack_progress(pp, model)
    nak_rows = naks.nak_table(pp, model, progress_rows)
    step("retransmissions")
    eps, reissues = rtx.request_episodes(pp, model, req, nak_rows, progress_rows, link_bps)
    reissued = reads.reissue_episodes(pp, model, resp, reissues, span, progress_rows)
    found = [e for e in (eps, reissued) if not e.empty]
    eps = _finish_episodes(pd.concat(found) if found else rtx._empty(), pp, model)
    return SequenceTables(req, resp, nak_rows, eps)


class StreamFreeTables(NamedTuple):
    """Per-flow tables that need no PSN stream: CNPs, congestion, QoS, RTT, PFC, and the
    QoS audits (CNP classes, source-port entropy) that read only flow keys and QoS columns."""

    cnps: pd.DataFrame
    congestion: pd.DataFrame
    qos: pd.DataFrame
    rtt: pd.DataFrame
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
        rtt=rtt.rtt_per_flow(pp, model),
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


def _finish_episodes(eps: pd.DataFrame, pp: Prepared, model: flows.FlowModel) -> pd.DataFrame:
    """Keys, times and column order of the retransmissions table."""
    if eps.empty:
        return rtx._empty()
    fid = eps["flow_id"].to_numpy(np.int64)
    eps = rtx.resolve_by_host(eps, model.src[fid])
    eps = eps.assign(
        src_ip=pp.ips[model.src[fid]],
        dst_ip=pp.ips[model.dst[fid]],
        dest_qp=model.qp[fid],
        ts=eps["ts_ns"] / 1e9,
        last_psn=(eps["last_ext"] % PSN_MOD).astype(np.int64),
        nak_psn=eps["nak_psn"].astype("Int64"),
        nak_frame=eps["nak_frame"].astype("Int64"),
    )
    return eps.sort_values("ts_ns", kind="stable")[rtx.EPISODE_COLUMNS].reset_index(drop=True)


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
