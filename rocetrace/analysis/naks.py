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
_CATEGORIES = [*NAK_KINDS, "invalid_rd_request", "reserved"]
_KIND_DTYPE = pd.CategoricalDtype(_CATEGORIES)
_CODE_KIND = (  # NAK syndrome codes 0-4
    "psn_sequence_error",
    "invalid_request",
    "remote_access_error",
    "remote_operational_error",
    "invalid_rd_request",
)
_SYNDROME_CATEGORY = np.array(  # per 5-bit NAK code, its category in _CATEGORIES
    [_CATEGORIES.index(k) for k in _CODE_KIND] + [_CATEGORIES.index("reserved")] * 27, np.int8
)
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
    kind = np.where(rnr, _CATEGORIES.index("rnr"), _SYNDROME_CATEGORY[code]).astype(np.int8)
    flow_id = np.where(about >= 0, about, 0).astype(np.int32)
    return pd.DataFrame(
        {
            "frame": pp.frames_at(idx),
            "ts_ns": pp.ts[idx],
            "flow_id": pd.arrays.IntegerArray(flow_id, about < 0),
            "nak_flow_id": carrier.astype(np.int32),
            "kind": pd.Categorical.from_codes(kind, dtype=_KIND_DTYPE),
            "psn": pp.psn[idx],
            "rnr_timer_us": np.where(rnr, np.asarray(RNR_TIMER_US)[code], np.nan),
            "stale": _stale(progress, idx),
        }
    )


def _stale(progress: pd.DataFrame, idx: np.ndarray) -> np.ndarray:
    """Per frame index, its `stale` flag in the ACK progress (False when not in it)."""
    known, flag = progress["idx"].to_numpy(np.int64), progress["stale"].to_numpy(bool)
    if not bool(np.all(known[1:] > known[:-1])):  # in time order it is already by frame
        by = np.argsort(known, kind="stable")
        known, flag = known[by], flag[by]
    at = np.minimum(np.searchsorted(known, idx), max(len(known) - 1, 0))
    return (known[at] == idx) & flag[at] if len(known) else np.zeros(len(idx), bool)


def nak_counts(naks: pd.DataFrame, n_flows: int) -> pd.DataFrame:
    """Per flow (index = flow_id), NAKs the peer sent about it, by kind."""
    kinds = naks["kind"].astype("category").cat  # a no-op on nak_table's own column
    code = [NAK_KINDS.index(k) if k in NAK_KINDS else -1 for k in kinds.categories]
    kind = np.array([*code, -1], np.int64)[kinds.codes.to_numpy()]  # other kinds, null: -1
    keep = np.flatnonzero((kind >= 0) & naks["flow_id"].notna().to_numpy())
    flow = naks["flow_id"].to_numpy(np.int64, na_value=-1)[keep]
    counts = np.bincount(flow * len(NAK_KINDS) + kind[keep], minlength=n_flows * len(NAK_KINDS))
    return pd.DataFrame(
        counts.reshape(n_flows, len(NAK_KINDS)),
        index=pd.RangeIndex(n_flows),
        columns=[f"naks_{k}" for k in NAK_KINDS],
    ).astype(np.int64)
