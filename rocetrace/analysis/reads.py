"""READ re-issue: a lost READ response is recovered by the requester asking again.

There is no NAK: the requester sends a new READ REQUEST from the missing PSN (adjusted VA and
length). The episode belongs to the READ response flow, whose packets are sent again.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.gaps import Stream
from rocetrace.analysis.prepared import Prepared, psn_delta

REISSUE_WINDOW = 1 << 20  # responses this close below the re-asked PSN belong to the READ


def _responses(pp: Prepared, resp: Stream, flow: int) -> tuple[np.ndarray, np.ndarray]:
    rows = resp.idx[resp.flow == flow]
    return pp.ts[rows], pp.psn[rows]


def reattribute_read_reissues(
    eps: pd.DataFrame, pp: Prepared, model: FlowModel, resp: Stream, span: np.ndarray
) -> pd.DataFrame:
    """Turn timeout-looking episodes that start with a re-sent READ REQUEST, after responses
    to that READ were seen, into read_reissue episodes of the response flow."""
    if eps.empty:
        return eps
    eps = eps.copy()
    candidates = eps.index[eps["read_request"] & (eps["trigger"] == "timeout")]
    for i in candidates:
        target = int(model.pair[int(eps.at[i, "flow_id"])])
        if target < 0:
            continue
        ts, psn = _responses(pp, resp, target)
        t0, start = int(eps.at[i, "ts_ns"]), int(eps.at[i, "start_psn"])
        d = psn_delta(psn, start)
        before = ts < t0
        near = before & (d > -REISSUE_WINDOW) & (d < REISSUE_WINDOW)
        if not near.any():
            continue
        later = eps[(eps["flow_id"] == eps.at[i, "flow_id"]) & (eps["ts_ns"] > t0)]["ts_ns"]
        t1 = int(later.min()) if len(later) else np.iinfo(np.int64).max
        asked = int(span[int(eps.at[i, "idx"])])
        answer = (ts > t0) & (ts < t1) & (d >= 0) & (d < asked)
        eps.loc[i, ["trigger", "mode"]] = ["read_reissue", "go-back-n"]
        eps.at[i, "flow_id"] = target
        eps.at[i, "packets"] = int(answer.sum())
        eps.at[i, "delay_s"] = (t0 - int(ts[before].max())) / 1e9
    return eps
