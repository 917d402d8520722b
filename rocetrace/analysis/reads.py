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
    """Per response-stream row, the re-issue (position in `reissues`) it answers, else -1.
    The responder answers READs in order: each re-issue, earliest first, takes the resent
    responses after it inside the PSNs it asks for, not yet taken, while their PSNs rise."""
    owner = np.full(len(resp), -1, np.int64)
    resent = np.flatnonzero(resp.retransmitted)  # sorted by (flow, frame)
    lo = np.searchsorted(resp.flow[resent], flows, "left")
    hi = np.searchsorted(resp.flow[resent], flows, "right")
    for k in np.argsort(reissues, kind="stable"):  # one step per re-issue, not per packet
        i, rows = reissues[k], resent[lo[k] : hi[k]]
        d = psn_delta(pp.psn[resp.idx[rows]], pp.psn[i])
        asked = (resp.idx[rows] > i) & (d >= 0) & (d < span[i]) & (owner[rows] < 0)
        hit = rows[asked]
        ends = _run_ends(pp, resp.idx[hit], d[asked], np.sort(reissues[flows == flows[k]]))
        owner[hit[: ends[0] + 1 if len(ends) else len(hit)]] = k
    return owner


def _run_ends(pp: Prepared, idx: np.ndarray, d: np.ndarray, same_flow: np.ndarray) -> np.ndarray:
    """Positions after which a re-issue's answers stop: the PSN falls (the next READ's
    answers), or the responder fell silent and another re-issue of the flow came between."""
    silent = np.diff(pp.ts[idx]) > REACTION_NS
    between = np.diff(np.searchsorted(same_flow, idx)) > 0
    return np.flatnonzero((np.diff(d) <= 0) | (silent & between))


class _Acks:
    """ACK progress sorted by (flow, frame index), for quick per-flow windows."""

    def __init__(self, progress: pd.DataFrame) -> None:
        flow = progress["flow_id"].to_numpy(np.int64)
        idx = progress["idx"].to_numpy(np.int64)
        by = np.lexsort((idx, flow))
        self.key = (flow[by] << 40) | idx[by]
        self.ts = progress["ts_ns"].to_numpy(np.int64)[by]
        self.acked = progress["acked"].to_numpy(np.int64)[by]

    def window(self, flow: int, after: int, before: int) -> slice:
        """Rows of `flow` with after < frame index < before."""
        lo = np.searchsorted(self.key, (flow << 40) | after, "right")
        return slice(int(lo), int(np.searchsorted(self.key, (flow << 40) | before, "left")))


def _later_seen(pp: Prepared, model: FlowModel, i: int, since: int, flow: int, acks: _Acks) -> bool:
    """Had a response beyond the re-asked PSN (or an ACK of it) reached the capture since the
    flow's previous re-issue (frame index `since`), just before? Else the requester timed out."""
    own = model.order.frames_of(flow)
    seen = own[np.searchsorted(own, since, "right") : np.searchsorted(own, i, "left")]
    seen = seen[pp.ts[seen] >= pp.ts[i] - REACTION_NS]
    d = psn_delta(pp.psn[seen], pp.psn[i])
    if ((d > 0) & (d < WINDOW)).any():
        return True
    w = acks.window(int(model.flow_id[i]), since, i)
    recent = acks.ts[w] >= pp.ts[i] - REACTION_NS
    da = psn_delta(acks.acked[w][recent], int(pp.psn[i]))
    return bool(((da >= 0) & (da < WINDOW)).any())


def _silence_ns(pp: Prepared, previous: int, i: int) -> int:
    """Time since the response flow's previous frame (index `previous`) before the re-issue."""
    return int(pp.ts[i] - pp.ts[previous]) if previous >= 0 else 0


def _triggers(
    pp: Prepared,
    model: FlowModel,
    reissues: np.ndarray,
    flows: np.ndarray,
    span: np.ndarray,
    acks: _Acks,
) -> list[str]:
    """Each re-issue's trigger, taken in capture order (one loop step per re-issue). A later
    READ REQUEST re-sent within the reaction time of the flow's previous re-issue, for PSNs
    beyond what that one asked for, is the same go-back-N resend run (the requester resends
    every request after the lost response, while the first re-issue's answers may already
    flow), so it shares that re-issue's trigger. One inside what it asked for re-asks the
    answer to it: a re-issue of its own."""
    triggers = [""] * len(reissues)
    previous: dict[int, int] = {}  # response flow -> index k of its latest re-issue
    for k in np.argsort(reissues, kind="stable"):
        i, f = int(reissues[k]), int(flows[k])
        p = previous.get(f)
        since = int(reissues[p]) if p is not None else 0
        ahead = int(psn_delta(pp.psn[i], pp.psn[since]))
        beyond = span[since] <= ahead < WINDOW  # a later READ, not a gap in this one's answer
        if p is not None and beyond and pp.ts[i] - pp.ts[since] <= REACTION_NS:
            triggers[k] = triggers[p]
        else:
            seen = _later_seen(pp, model, i, since, f, acks)
            triggers[k] = "read_reissue" if seen else "timeout"
        previous[f] = int(k)
    return triggers


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
    acks = _Acks(progress)
    before = model.order.last_before(flows, reissues)
    triggers = _triggers(pp, model, reissues, flows, span, acks)
    frames = pp.frames_at(reissues)
    rows = []
    for k in np.flatnonzero(counts > 0):
        i, f, trigger = int(reissues[k]), int(flows[k]), triggers[k]
        rows.append(
            {
                "flow_id": f,
                "ts_ns": int(pp.ts[i]),
                "first_frame": int(frames[k]),
                "trigger": trigger,
            }
            | {
                "nak_psn": None,
                "nak_frame": None,
                "start_psn": int(pp.psn[i]),
                "packets": int(counts[k]),
            }
            | {"mode": "go-back-n", "mode_certain": True}
            | {"delay_s": _silence_ns(pp, int(before[k]), i) / 1e9}
            | {"last_ext": int(pp.psn[i] + span[i] - 1)}
        )
    return pd.DataFrame(rows)
