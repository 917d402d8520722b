"""Request -> response round-trip time per flow, from the capture point's view.

An ACK (or atomic ACK, or the first READ response) repeats the PSN of the request it answers;
the latest transmission of that PSN before it is the one answered. At a mirror port this is
only the part of the path beyond the mirror.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    POS_FIRST,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
    Prepared,
    isin_small,
)


def rtt_per_flow(pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """Per request flow (index = flow_id): rtt_min_s, rtt_median_s, rtt_max_s, rtt_samples."""
    n = len(model)
    cols = ["rtt_min_s", "rtt_median_s", "rtt_max_s"]
    out = pd.DataFrame(np.nan, index=pd.RangeIndex(n), columns=cols)
    out["rtt_samples"] = 0
    answer = isin_small(pp.kind, (ACK, ATOMIC_ACK)) | (
        (pp.kind == READ_RESPONSE) & isin_small(pp.position, (POS_FIRST, POS_ONLY))
    )
    a = np.flatnonzero(answer & (model.flow_id >= 0))
    about = model.pair[model.flow_id[a]]
    resp = pd.DataFrame({"flow": about, "psn": pp.psn[a], "ts": pp.ts[a]})
    resp = resp[resp["flow"] >= 0].sort_values("ts", kind="stable")
    r = np.flatnonzero((pp.kind == REQUEST) & (model.flow_id >= 0))
    req = pd.DataFrame({"flow": model.flow_id[r], "psn": pp.psn[r], "req_ts": pp.ts[r]})
    req = req.sort_values("req_ts", kind="stable")
    if resp.empty or req.empty:
        return out
    m = pd.merge_asof(resp, req, left_on="ts", right_on="req_ts", by=["flow", "psn"])
    m = m[m["req_ts"].notna()]
    rtt = (m["ts"] - m["req_ts"]) / 1e9
    g = rtt.groupby(m["flow"])
    out.loc[g.size().index, cols] = np.column_stack([g.min(), g.median(), g.max()])
    out.loc[g.size().index, "rtt_samples"] = g.size().to_numpy()
    return out
