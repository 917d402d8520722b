"""READ re-issue: a lost READ response is recovered by the requester asking again.

There is no NAK: the requester sends a new READ REQUEST from the missing PSN (adjusted VA and
length). The episode belongs to the READ response flow, whose packets are sent again; it is
a `read_reissue` when the requester had seen a later response (or ACK) first, and a
`timeout` when nothing came back at all.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.gaps import Stream
from rocetrace.analysis.prepared import Prepared, psn_delta

WINDOW = 1 << 20  # PSNs this far beyond the re-asked one count as "later"
# A re-issue caused by a later response follows it within a round trip; one that comes
# later than this after it was the ACK timer (4.096 us * 2^4, below any usual timeout).
REACTION_NS = 65_536


def _claims(
    pp: Prepared, resp: Stream, reissues: np.ndarray, flows: np.ndarray, span: np.ndarray
) -> np.ndarray:
    """Per response-stream row, the re-issue (position in `reissues`) it answers, else -1:
    a resent response after the re-issue, inside the PSNs it asks for; the latest wins."""
    owner = np.full(len(resp), -1, np.int64)
    order = np.argsort(reissues, kind="stable")
    for k in order:
        i = reissues[k]
        rows = np.flatnonzero((resp.flow == flows[k]) & resp.retransmitted)
        d = psn_delta(pp.psn[resp.idx[rows]], pp.psn[i])
        hit = (resp.idx[rows] > i) & (d >= 0) & (d < span[i])
        owner[rows[hit]] = k
    return owner


def _later_seen(
    pp: Prepared, model: FlowModel, i: int, since: int, flow: int, progress: pd.DataFrame
) -> bool:
    """Had a response beyond the re-asked PSN (or an ACK of it) reached the capture since the
    flow's previous re-issue (frame index `since`), just before? Else the requester timed out."""
    recent = pp.ts >= pp.ts[i] - REACTION_NS
    before = (
        (model.flow_id == flow) & (pp.frame < pp.frame[i]) & (pp.frame > pp.frame[since]) & recent
    )
    d = psn_delta(pp.psn[before], pp.psn[i])
    if ((d > 0) & (d < WINDOW)).any():
        return True
    acks = progress[
        (progress["flow_id"] == model.flow_id[i])
        & (progress["idx"] < i)
        & (progress["idx"] > since)
        & (progress["ts_ns"] >= pp.ts[i] - REACTION_NS)
    ]
    da = psn_delta(acks["acked"].to_numpy(np.int64), int(pp.psn[i]))
    return bool(((da >= 0) & (da < WINDOW)).any())


def _silence_ns(pp: Prepared, model: FlowModel, i: int, flow: int) -> int:
    """Time since the response flow's previous frame before the re-issue."""
    prev = np.flatnonzero((model.flow_id == flow) & (pp.frame < pp.frame[i]))
    return int(pp.ts[i] - pp.ts[prev[-1]]) if len(prev) else 0


def reissue_episodes(
    pp: Prepared,
    model: FlowModel,
    resp: Stream,
    reissues: np.ndarray,
    span: np.ndarray,
    progress: pd.DataFrame,
) -> pd.DataFrame:
    """One episode per re-issued READ REQUEST whose resent responses the capture shows."""
    flows = model.pair[model.flow_id[reissues]] if len(reissues) else np.zeros(0, np.int64)
    keep = flows >= 0
    reissues, flows = reissues[keep], flows[keep]
    owner = _claims(pp, resp, reissues, flows, span)
    counts = np.bincount(owner[owner >= 0], minlength=len(reissues))
    rows = []
    for k in np.flatnonzero(counts > 0):
        i, f = int(reissues[k]), int(flows[k])
        earlier = reissues[(reissues < i) & (flows == f)]
        since = int(earlier.max()) if len(earlier) else 0
        trigger = "read_reissue" if _later_seen(pp, model, i, since, f, progress) else "timeout"
        rows.append(
            {
                "flow_id": f,
                "ts_ns": int(pp.ts[i]),
                "first_frame": int(pp.frame[i]),
                "trigger": trigger,
            }
            | {
                "nak_psn": None,
                "nak_frame": None,
                "start_psn": int(pp.psn[i]),
                "packets": int(counts[k]),
            }
            | {"mode": "go-back-n", "delay_s": _silence_ns(pp, model, i, f) / 1e9}
            | {"last_ext": int(pp.psn[i] + span[i] - 1)}
        )
    return pd.DataFrame(rows)
