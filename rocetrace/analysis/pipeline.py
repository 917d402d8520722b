"""The analysis pipeline: packet table -> flows -> streams -> per-concern tables -> Analysis.

Only assembly lives here; every concern is its own module of pure functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import congestion, findings, flows, gaps, naks, pfc, qos, reads, rtt
from rocetrace.analysis import retransmissions as rtx
from rocetrace.analysis.prepared import (
    PSN_MOD,
    REQUEST,
    ROCE_ENCAPS,
    TRANSPORTS,
    Prepared,
    category_in,
    isin_small,
    prepare,
)
from rocetrace.analysis.result import Analysis

Progress = Callable[[str], None]


def _stream_counts(s: gaps.Stream, n: int) -> tuple[np.ndarray, np.ndarray]:
    retx = np.bincount(s.flow[s.retransmitted], minlength=n)
    gap = np.bincount(s.flow, weights=s.gap, minlength=n).astype(np.int64)
    return retx, gap


def _capture_gaps(pp: Prepared, s: gaps.Stream) -> pd.DataFrame:
    """Gaps whose skipped PSNs never show up in the flow: likely capture drops. Nothing
    before a gap can hold its PSNs (they were beyond the highest), so any later copy is
    found by counting the flow's PSNs inside the gap."""
    j = np.flatnonzero(s.gap > 0)
    if len(j) == 0:
        return pd.DataFrame(columns=["flow_id", "ts_ns", "frame", "psns"])
    starts = s.first
    gidx = np.cumsum(starts) - 1
    low = np.minimum.reduceat(s.ext, np.flatnonzero(starts))[gidx]
    key = np.sort(s.ext - low + gidx * gaps.BIG)
    lo, hi = s.high_before[j] + 1, s.ext[j] - 1
    base = gidx[j] * gaps.BIG - low[j]
    seen = np.searchsorted(key, hi + base, "right") - np.searchsorted(key, lo + base, "left")
    drop = j[seen == 0]
    return pd.DataFrame(
        {"flow_id": s.flow[drop], "ts_ns": pp.ts[s.idx[drop]], "frame": pp.frame[s.idx[drop]]}
        | {"psns": s.gap[drop]}
    )


def _first_last_psn(pp: Prepared, model: flows.FlowModel) -> tuple[np.ndarray, np.ndarray]:
    """First and last PSN of each flow, in capture order."""
    n = len(model)
    seen = model.flow_id >= 0
    df = pd.DataFrame({"f": model.flow_id[seen], "psn": pp.psn[seen]}).groupby("f")["psn"]
    first = df.first().reindex(range(n)).fillna(-1).to_numpy(np.int64)
    last = df.last().reindex(range(n)).fillna(-1).to_numpy(np.int64)
    return first, last


def _roles(pp: Prepared, model: flows.FlowModel) -> np.ndarray:
    n = len(model)
    f = np.where(model.flow_id >= 0, model.flow_id, n)
    requests = np.bincount(f[pp.kind == REQUEST], minlength=n + 1)[:n]
    responses = np.bincount(f[isin_small(pp.kind, flows.RESPONSE_KINDS)], minlength=n + 1)[:n]
    return np.where(requests > 0, "requester", np.where(responses > 0, "responder", "unknown"))


def _modes(eps: pd.DataFrame, n: int) -> np.ndarray:
    mode = np.full(n, "none", dtype=object)
    if eps.empty:
        return mode
    per_flow = eps.groupby("flow_id")["mode"].agg(
        lambda m: m.iloc[0] if m.nunique() == 1 else "mixed"
    )
    mode[per_flow.index.to_numpy(np.int64)] = per_flow.to_numpy()
    return mode


def _timeouts(eps: pd.DataFrame, n: int) -> pd.DataFrame:
    out = pd.DataFrame(index=pd.RangeIndex(n))
    t = eps[eps["trigger"] == "timeout"] if not eps.empty else eps
    fid = t["flow_id"].to_numpy(np.int64) if len(t) else np.zeros(0, np.int64)
    out["timeouts"] = np.bincount(fid, minlength=n)
    delay = t.groupby(fid)["delay_s"].median() if len(t) else pd.Series(dtype=float)
    est = [rtx.ack_timeout_estimate(d) for d in delay]
    out["ack_timeout_exp"] = pd.Series([k for k, _ in est], index=delay.index, dtype="Int64")
    out["ack_timeout_s"] = pd.Series([s for _, s in est], index=delay.index, dtype=float)
    out["retransmission_episodes"] = np.bincount(
        eps["flow_id"].to_numpy(np.int64) if len(eps) else np.zeros(0, np.int64), minlength=n
    )
    return out


def flows_table(pp: Prepared, model: flows.FlowModel, parts: dict[str, Any]) -> pd.DataFrame:
    """The flows table (docs/analysis-tables.md)."""
    n = len(model)
    fid = model.flow_id
    inside = fid >= 0
    first_psn, last_psn = _first_last_psn(pp, model)
    df = pd.DataFrame({"flow_id": np.arange(n, dtype=np.int64)})
    df["src_ip"] = pp.ips[model.src] if n else []
    df["dst_ip"] = pp.ips[model.dst] if n else []
    df["dest_qp"] = model.qp
    df["peer_qp"] = pd.array(np.where(model.peer_qp >= 0, model.peer_qp, 0), "Int64")
    df["peer_qp"] = df["peer_qp"].mask(model.peer_qp < 0)
    df["pair_flow_id"] = pd.array(np.where(model.pair >= 0, model.pair, 0), "Int64")
    df["pair_flow_id"] = df["pair_flow_id"].mask(model.pair < 0)
    df["paired_by"] = model.paired_by
    df["role"] = _roles(pp, model)
    df["packets"] = np.bincount(fid[inside], minlength=n)
    df["bytes"] = np.bincount(fid[inside], weights=pp.wire_len[inside], minlength=n).astype(
        np.int64
    )
    df["first_psn"], df["last_psn"] = first_psn, last_psn
    df["retransmitted_packets"] = parts["retx"]
    df["psn_gaps"] = parts["gaps"]
    df = df.join(parts["nak_counts"])
    df["retransmission_mode"] = _modes(parts["episodes"], n)
    df = df.join(parts["timeouts"]).join(parts["congestion"]).join(parts["qos"]).join(parts["rtt"])
    df["transport"] = np.where(model.transport >= 0, np.array(TRANSPORTS)[model.transport], "CNP")
    df["mtu"] = model.mtu
    ts = pd.DataFrame({"f": fid[inside], "t": pp.ts[inside]}).groupby("f")["t"]
    df["first_ts_ns"] = ts.min().reindex(range(n)).to_numpy()
    df["last_ts_ns"] = ts.max().reindex(range(n)).to_numpy()
    return df


def _packets_out(
    packets: pd.DataFrame, pp: Prepared, model: flows.FlowModel, streams: list[gaps.Stream]
) -> pd.DataFrame:
    retransmitted = np.zeros(len(pp), bool)
    for s in streams:
        retransmitted[s.idx[s.retransmitted]] = True
    flow_id = pd.array(np.where(model.flow_id >= 0, model.flow_id, 0), dtype="Int32")
    return packets.assign(
        flow_id=pd.Series(flow_id, index=packets.index).mask(model.flow_id < 0),
        retransmitted=retransmitted,
        ce=pp.ecn == 3,
    )


def analyze_packets(
    packets: pd.DataFrame,
    capture: Any = None,
    *,
    link_speed_bps: float = 100e9,
    progress: Progress | None = None,
    **options: Any,
) -> Analysis:
    """Run every analysis on a packet table (schema: rocetrace/schema.py)."""
    step = progress or (lambda _name: None)
    step("flows")
    pp = prepare(packets)
    model = flows.build_flow_model(pp)
    span = flows.read_spans(pp, model)
    n = len(model)
    step("sequences")
    req = gaps.request_stream(pp, model, span)
    resp = gaps.response_stream(pp, model, req)
    progress_rows = naks.ack_progress(pp, model)
    nak_rows = naks.nak_table(pp, model, progress_rows)
    step("retransmissions")
    eps, reissues = rtx.request_episodes(pp, model, req, nak_rows)
    reissued = reads.reissue_episodes(pp, model, resp, reissues, span, progress_rows)
    found = [e for e in (eps, reissued) if not e.empty]
    eps = _finish_episodes(pd.concat(found) if found else rtx._empty(), pp, model)
    step("congestion")
    cnps = congestion.cnp_table(pp, model)
    retx_q, gaps_q = _stream_counts(req, n)
    retx_r, gaps_r = _stream_counts(resp, n)
    parts = {
        "retx": retx_q + retx_r,
        "gaps": gaps_q + gaps_r,
        "nak_counts": naks.nak_counts(nak_rows, n),
        "episodes": eps,
        "timeouts": _timeouts(eps, n),
        "congestion": congestion.congestion_per_flow(pp, model, cnps),
        "qos": qos.qos_per_flow(pp, model),
        "rtt": rtt.rtt_per_flow(pp, model),
    }
    flow_df = flows_table(pp, model, parts)
    flow_df["rnr_timer_us"] = _rnr_timers(nak_rows, n)
    step("pfc")
    pfc_rows = pfc.pfc_table(packets, link_speed_bps)
    info = _capture_facts(capture, packets)
    tables = findings.Tables(
        flows=flow_df,
        retransmissions=eps,
        naks=nak_rows,
        cnps=cnps,
        pfc_runs=pfc.pause_runs(pfc_rows),
        low_class_cnps=qos.cnp_class_audit(cnps, flow_df),
        sports=qos.sport_entropy(flow_df),
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
    )


def _rnr_timers(nak_rows: pd.DataFrame, n: int) -> np.ndarray:
    rnr = nak_rows[(nak_rows["kind"] == "rnr") & nak_rows["flow_id"].notna()]
    return (
        rnr.groupby(rnr["flow_id"].astype(int))["rnr_timer_us"].last().reindex(range(n)).to_numpy()
    )


def _bad_icrc(packets: pd.DataFrame) -> list[int]:
    if "icrc_status" not in packets.columns:
        return []
    bad = category_in(packets["icrc_status"], ("bad",))
    return packets.loc[bad, "frame"].astype(int).tolist()


def _finish_episodes(eps: pd.DataFrame, pp: Prepared, model: flows.FlowModel) -> pd.DataFrame:
    """Keys, times and column order of the retransmissions table."""
    if eps.empty:
        return rtx._empty()
    fid = eps["flow_id"].to_numpy(np.int64)
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


def _capture_facts(capture: Any, packets: pd.DataFrame) -> dict[str, Any]:
    """The summary's capture object, from CaptureInfo or, without one, from the table."""
    roce = pd.Series(category_in(packets["encap"], ROCE_ENCAPS))
    ts = packets["ts_ns"]
    facts: dict[str, Any] = {
        "packets": len(packets),
        "roce_packets": int(roce.sum()),
        "non_roce_packets": int((~roce).sum()),
        "malformed_packets": int(packets["anomaly"].notna().sum()) if "anomaly" in packets else 0,
        "truncated_packets": int((packets["cap_len"] < packets["wire_len"]).sum()),
        "incomplete_tail": False,
        "first_ts": float(ts.min()) / 1e9 if len(ts) else None,
        "last_ts": float(ts.max()) / 1e9 if len(ts) else None,
    }
    if capture is not None:
        for key in (
            "packets",
            "roce_packets",
            "non_roce_packets",
            "malformed_packets",
            "truncated_packets",
        ):
            facts[key] = int(getattr(capture, key, facts[key]))
        facts["incomplete_tail"] = bool(getattr(capture, "incomplete_tail", False))
        for key in ("first_ts", "last_ts"):
            ns = getattr(capture, f"{key}_ns", None)
            facts[key] = float(ns) / 1e9 if ns is not None else facts[key]
    return facts
