"""ECN and CNPs: which flow each CNP throttles, whether a CE mark preceded it, the interval
between CNPs per QP and the sender's throughput just before and after each CNP (DCQCN).

A CNP is addressed to the QP that must slow down, i.e. the sender of the marked traffic: it
throttles the reverse (paired) direction of the flow key it travels on.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.order import group_starts
from rocetrace.analysis.pairing import flow_keys
from rocetrace.analysis.prepared import CNP, Prepared

RATE_WINDOW_NS = 100_000  # throughput is measured over this long before and after a CNP


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Per wanted key: the value of the key that occurs exactly once in `keys`, -1 for a key
    found never or more than once (ambiguous)."""
    order = np.argsort(keys, kind="stable")
    k = keys[order]
    once = group_starts(k) & np.append(k[1:] != k[:-1], True)
    k, v = k[once], values[order[once]]
    if len(k) == 0:
        return np.full(len(wanted), -1, np.int64)
    at = np.minimum(np.searchsorted(k, wanted), len(k) - 1)
    return np.where(k[at] == wanted, v[at], -1)


def throttled_flow(pp: Prepared, model: FlowModel, idx: np.ndarray) -> np.ndarray:
    """The flow each CNP throttles: sent by the CNP's destination host to the CNP's source,
    from the QP the CNP names (its peer_qp); else the only flow between them that way."""
    flow = np.arange(len(model), dtype=np.int64)
    peer = np.flatnonzero(model.peer_qp >= 0)
    src, dst, qp = pp.dst[idx], pp.src[idx], pp.qp[idx]  # the throttled flow's direction
    named = _lookup(
        flow_keys(model.src[peer], model.dst[peer], model.peer_qp[peer]),
        flow[peer],
        np.where(qp >= 0, flow_keys(src, dst, qp), -1),
    )
    lone = _lookup(flow_keys(model.src, model.dst, 0 * flow), flow, flow_keys(src, dst, 0 * qp))
    return np.where(named >= 0, named, lone)


def _ce_before(
    cnp_flow: np.ndarray, cnp_rows: np.ndarray, pp: Prepared, model: FlowModel
) -> np.ndarray:
    """Per CNP: was a CE-marked packet of its flow captured since that flow's previous CNP?
    In capture order (frame order), never by timestamp: at a microsecond resolution a CE
    mark and the CNP answering it often share one timestamp."""
    out = np.zeros(len(cnp_flow), bool)
    flows = np.unique(cnp_flow[cnp_flow >= 0])
    for f in flows[model.ecn[flows, 3] > 0]:  # only flows with CE marks (CNPs are in none)
        rows = np.flatnonzero(cnp_flow == f)
        own = model.order.frames_of(int(f))  # frame indices, in capture order
        marks = own[pp.column("ecn", own) == 3]
        at = cnp_rows[rows]
        prev = np.concatenate(([-1], at[:-1]))
        out[rows] = np.searchsorted(marks, at, "right") > np.searchsorted(marks, prev, "right")
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
        ts, cum = pp.ts[own], np.concatenate(([0], np.cumsum(pp.wire_len[own].astype(np.int64))))
        t = cnp_ts[rows]
        at = cum[np.searchsorted(ts, t, "left")]
        lo = cum[np.searchsorted(ts, t - RATE_WINDOW_NS, "left")]
        hi = cum[np.searchsorted(ts, t + RATE_WINDOW_NS, "left")]
        before[rows] = (at - lo) * 8e9 / RATE_WINDOW_NS
        after[rows] = (hi - at) * 8e9 / RATE_WINDOW_NS
    return before, after


def _intervals_s(flow: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """Per CNP: seconds since the previous CNP for its flow, NaN for a flow's first or an
    unknown flow. As pandas' groupby diff computed it: float64 timestamps subtracted."""
    gap = np.full(len(flow), np.nan)
    by_flow = np.argsort(flow, kind="stable")  # table order within each flow
    f, t = flow[by_flow], ts[by_flow].astype(np.float64)
    same = np.flatnonzero((f[1:] == f[:-1]) & (f[1:] >= 0))
    gap[by_flow[same + 1]] = t[same + 1] - t[same]
    return gap / 1e9


def cnp_table(pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """The cnps table (docs/analysis-tables.md) plus interval and throughput columns."""
    idx = np.flatnonzero(pp.kind == CNP)
    idx = idx[(pp.src[idx] >= 0) & (pp.dst[idx] >= 0)]
    flow = throttled_flow(pp, model, idx) if len(idx) else np.zeros(0, np.int64)
    ts = pp.ts[idx]
    before, after = _rates(flow, ts, pp, model)
    known = flow >= 0
    return pd.DataFrame(
        {
            "frame": pp.frames_at(idx),
            "ts_ns": ts,
            "flow_id": pd.arrays.IntegerArray(np.where(known, flow, 0).astype(np.int32), ~known),
            "src_ip": pp.ips[pp.src[idx]] if len(idx) else np.zeros(0, object),
            "dst_ip": pp.ips[pp.dst[idx]] if len(idx) else np.zeros(0, object),
            "dest_qp": pp.qp[idx].astype(np.int64),
            "dscp": pp.column("dscp", idx).astype(np.int64),
            "vlan_pcp": pp.column("pcp", idx).astype(np.int64),
            "ce_before": _ce_before(flow, idx, pp, model),
            "rate_before_bps": before,
            "rate_after_bps": after,
            "interval_s": _intervals_s(flow, ts),
        }
    )


def congestion_per_flow(pp: Prepared, model: FlowModel, cnps: pd.DataFrame) -> pd.DataFrame:
    """Per flow: CE-marked packets, CNPs received for it, CNPs without CE, CNP interval."""
    n = len(model)
    fid = cnps["flow_id"].to_numpy(np.int64, na_value=-1)
    known = np.flatnonzero(fid >= 0)
    fid = fid[known]
    without_ce = fid[~cnps["ce_before"].to_numpy(bool)[known]]
    interval = cnps["interval_s"].to_numpy(np.float64)[known]
    low, mid = np.full(n, np.nan), np.full(n, np.nan)
    for f in np.unique(fid):  # flows that received CNPs: a loop over flows, not CNPs
        gaps = interval[fid == f]
        gaps = gaps[~np.isnan(gaps)]
        if len(gaps):
            low[f], mid[f] = gaps.min(), np.median(gaps)
    return pd.DataFrame(
        {
            "ecn_ce_packets": model.ecn[:, 3],  # CNPs belong to no flow
            "cnps": np.bincount(fid, minlength=n),
            "cnps_without_ce": np.bincount(without_ce, minlength=n),
            "cnp_interval_min_s": low,
            "cnp_interval_median_s": mid,
        },
        index=pd.RangeIndex(n),
    )
