"""ECN and CNPs: which flow each CNP throttles, whether a CE mark preceded it, the interval
between CNPs per QP and the sender's throughput just before and after each CNP (DCQCN).

A CNP is addressed to the QP that must slow down, i.e. the sender of the marked traffic: it
throttles the reverse (paired) direction of the flow key it travels on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.prepared import CNP, Prepared

RATE_WINDOW_NS = 100_000  # throughput is measured over this long before and after a CNP


def throttled_flow(pp: Prepared, model: FlowModel, idx: np.ndarray) -> np.ndarray:
    """The flow each CNP throttles: sent by the CNP's destination host to the CNP's source,
    from the QP the CNP names (its peer_qp); else the only flow between them that way."""
    keys = pd.DataFrame({"s": model.src, "d": model.dst, "peer": model.peer_qp})
    keys["f"] = np.arange(len(model))
    by_peer = keys[keys["peer"] >= 0].drop_duplicates(["s", "d", "peer"], keep=False)
    lone = keys.drop_duplicates(["s", "d"], keep=False)
    cnp = pd.DataFrame({"s": pp.dst[idx], "d": pp.src[idx], "peer": pp.qp[idx]})
    exact = cnp.merge(by_peer, on=["s", "d", "peer"], how="left")["f"]
    loose = cnp[["s", "d"]].merge(lone[["s", "d", "f"]], on=["s", "d"], how="left")["f"]
    return exact.fillna(loose).fillna(-1).to_numpy(np.int64)


def _ce_before(
    cnp_flow: np.ndarray, cnp_ts: np.ndarray, pp: Prepared, ce_flow: np.ndarray
) -> np.ndarray:
    """Per CNP: was a CE-marked packet of its flow seen since that flow's previous CNP?"""
    out = np.zeros(len(cnp_flow), bool)
    ce = np.flatnonzero(ce_flow >= 0)
    for f in np.unique(cnp_flow[cnp_flow >= 0]):
        rows = np.flatnonzero(cnp_flow == f)
        marks = np.sort(pp.ts[ce[ce_flow[ce] == f]])
        t = cnp_ts[rows]
        prev = np.concatenate(([np.iinfo(np.int64).min], t[:-1]))
        out[rows] = np.searchsorted(marks, t, "right") > np.searchsorted(marks, prev, "right")
    return out


def _rates(
    cnp_flow: np.ndarray, cnp_ts: np.ndarray, pp: Prepared, model: FlowModel
) -> tuple[np.ndarray, np.ndarray]:
    """Bits per second of the throttled flow in the window before and after each CNP."""
    before = np.full(len(cnp_flow), np.nan)
    after = np.full(len(cnp_flow), np.nan)
    for f in np.unique(cnp_flow[cnp_flow >= 0]):
        rows = np.flatnonzero(cnp_flow == f)
        own = model.order.frames_of(int(f))  # this flow only, not a scan of the capture
        ts, cum = pp.ts[own], np.concatenate(([0], np.cumsum(pp.wire_len[own])))
        t = cnp_ts[rows]
        at = cum[np.searchsorted(ts, t, "left")]
        lo = cum[np.searchsorted(ts, t - RATE_WINDOW_NS, "left")]
        hi = cum[np.searchsorted(ts, t + RATE_WINDOW_NS, "left")]
        before[rows] = (at - lo) * 8e9 / RATE_WINDOW_NS
        after[rows] = (hi - at) * 8e9 / RATE_WINDOW_NS
    return before, after


def cnp_table(pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """The cnps table (docs/analysis-tables.md) plus interval and throughput columns."""
    idx = np.flatnonzero((pp.kind == CNP) & (pp.src >= 0) & (pp.dst >= 0))
    flow = throttled_flow(pp, model, idx) if len(idx) else np.zeros(0, np.int64)
    ts = pp.ts[idx]
    ce_flow = np.where((pp.ecn == 3) & (pp.kind != CNP), model.flow_id, -1)
    before, after = _rates(flow, ts, pp, model)
    df = pd.DataFrame(
        {
            "frame": pp.frame[idx],
            "ts_ns": ts,
            "flow_id": pd.array(np.where(flow >= 0, flow, 0), dtype="Int32"),
            "src_ip": pp.ips[pp.src[idx]] if len(idx) else np.zeros(0, object),
            "dst_ip": pp.ips[pp.dst[idx]] if len(idx) else np.zeros(0, object),
            "dest_qp": pp.qp[idx],
            "dscp": pp.dscp[idx].astype(np.int64),
            "vlan_pcp": pp.pcp[idx].astype(np.int64),
            "ce_before": _ce_before(flow, ts, pp, ce_flow),
            "rate_before_bps": before,
            "rate_after_bps": after,
        }
    )
    df["flow_id"] = df["flow_id"].mask(flow < 0)
    gap = df.groupby("flow_id")["ts_ns"].diff()
    df["interval_s"] = gap / 1e9
    return df


def congestion_per_flow(pp: Prepared, model: FlowModel, cnps: pd.DataFrame) -> pd.DataFrame:
    """Per flow: CE-marked packets, CNPs received for it, CNPs without CE, CNP interval."""
    n = len(model)
    out = pd.DataFrame(index=pd.RangeIndex(n))
    out["ecn_ce_packets"] = model.ecn[:, 3]  # CNPs belong to no flow
    known = cnps[cnps["flow_id"].notna()]
    fid = known["flow_id"].astype(np.int64).to_numpy()
    out["cnps"] = np.bincount(fid, minlength=n)
    out["cnps_without_ce"] = np.bincount(fid[~known["ce_before"].to_numpy(bool)], minlength=n)
    by_flow = known.groupby(fid)["interval_s"]
    out["cnp_interval_min_s"] = by_flow.min().reindex(out.index)
    out["cnp_interval_median_s"] = by_flow.median().reindex(out.index)
    return out
