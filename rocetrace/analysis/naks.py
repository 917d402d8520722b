"""NAKs and RNR NAKs: one row per frame, attributed to the flow whose requests they refuse.

A NAK travels in the reverse direction, addressed to the requester's QP; the flow it is about
is the paired request flow (flows.py), so its PSN is in that flow's PSN space.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.gaps import build_stream
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, PSN_MOD, RNR_NAK, Prepared, isin_small
from rocetrace.dissectors.aeth import RNR_TIMER_US

NAK_KINDS = (
    "psn_sequence_error",
    "rnr",
    "invalid_request",
    "remote_access_error",
    "remote_operational_error",
)
_CODE_KIND = {0: "psn_sequence_error", 1: "invalid_request", 2: "remote_access_error"}
_CODE_KIND |= {3: "remote_operational_error", 4: "invalid_rd_request"}
NAK_COLUMNS = ["frame", "ts_ns", "flow_id", "nak_flow_id", "kind", "psn", "rnr_timer_us", "stale"]


def ack_progress(
    pp: Prepared, model: FlowModel, redone: dict[int, int] | None = None
) -> pd.DataFrame:
    """Per ACK / NAK / RNR NAK frame (by frame index): the flow it is about, the PSN it
    acknowledges (a NAK: everything before its PSN; `redone` overrides that per frame index
    when the requester restarted the message instead), the highest PSN acknowledged so far
    (`acked`, raw 24-bit) and whether it is `stale` (acknowledges nothing new)."""
    kinds = (ACK, ATOMIC_ACK, NAK, RNR_NAK)
    idx = np.flatnonzero(isin_small(pp.kind, kinds) & (model.flow_id >= 0))
    idx = idx[model.pair[model.flow_id[idx]] >= 0]
    about = model.pair[model.flow_id[idx]]
    nak = isin_small(pp.kind[idx], (NAK, RNR_NAK))
    psn = np.where(nak, (pp.psn[idx] - 1) % PSN_MOD, pp.psn[idx])
    for i, first in (redone or {}).items():
        psn[np.searchsorted(idx, i)] = (first - 1) % PSN_MOD
    s = build_stream(idx, about, psn, np.ones(len(idx), np.int64))
    acked = np.maximum(s.high_before, s.end) % PSN_MOD
    out = pd.DataFrame({"idx": s.idx, "flow_id": s.flow, "ts_ns": pp.ts[s.idx], "acked": acked})
    out["stale"] = ~s.first & (s.ext < s.high_before)
    if pp.in_time_order:  # (ts_ns, idx) order is frame order; each flow's rows are in it
        return out.take(np.argsort(s.idx, kind="stable")).reset_index(drop=True)
    return out.sort_values(["ts_ns", "idx"], kind="stable").reset_index(drop=True)


def nak_table(pp: Prepared, model: FlowModel, progress: pd.DataFrame) -> pd.DataFrame:
    """The naks table (docs/analysis-tables.md); flow_id is null when the pair is unknown.
    `stale`: the NAK's PSN was already acknowledged, so the requester ignores it."""
    idx = np.flatnonzero(isin_small(pp.kind, (NAK, RNR_NAK)) & (model.flow_id >= 0))
    carrier = model.flow_id[idx]
    about = model.pair[carrier]
    code = pp.syndrome[idx] & 0x1F
    rnr = pp.kind[idx] == RNR_NAK
    kind = np.where(rnr, "rnr", pd.Series(code).map(_CODE_KIND).fillna("reserved").to_numpy())
    timer = np.where(rnr, np.asarray(RNR_TIMER_US)[code], np.nan)
    return pd.DataFrame(
        {
            "frame": pp.frame[idx],
            "ts_ns": pp.ts[idx],
            "flow_id": pd.array(np.where(about >= 0, about, 0), dtype="Int32"),
            "nak_flow_id": carrier.astype(np.int32),
            "kind": pd.Categorical(kind, categories=[*NAK_KINDS, "invalid_rd_request", "reserved"]),
            "psn": pp.psn[idx],
            "rnr_timer_us": timer,
        }
    ).assign(
        flow_id=lambda d: d["flow_id"].mask(about < 0),
        stale=pd.Series(progress["stale"].to_numpy(), index=progress["idx"])
        .reindex(idx)
        .fillna(False)
        .to_numpy(bool),
    )


def nak_counts(naks: pd.DataFrame, n_flows: int) -> pd.DataFrame:
    """Per flow (index = flow_id), NAKs the peer sent about it, by kind."""
    out = pd.DataFrame(0, index=pd.RangeIndex(n_flows), columns=[f"naks_{k}" for k in NAK_KINDS])
    known = naks[naks["flow_id"].notna() & naks["kind"].isin(NAK_KINDS)]
    if not known.empty:
        counts = known.groupby(["flow_id", "kind"], observed=True).size().unstack(fill_value=0)
        for kind in counts.columns:
            out.loc[counts.index.astype(int), f"naks_{kind}"] = counts[kind].to_numpy()
    return out.astype(np.int64)
