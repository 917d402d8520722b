"""RNR NAKs' retries: a retry comes the timer its RNR NAK names after that NAK (plus the
path's lag), and a resend sooner than that is no retry of it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import UNCERTAIN, Context, event_ts, progress_before
from rocetrace.analysis.prepared import REQUEST, RNR_NAK
from rocetrace.dissectors.aeth import RNR_TIMER_US


def rnr_timing(
    x: Context, e: np.ndarray, trigger: np.ndarray, wait: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per episode answering an RNR NAK, against the RNR timer that NAK names (IBTA: the
    requester waits at least that long before it retries, and the timer runs through a PFC
    pause): (early) the resend came sooner than that after the NAK, less the clock slack,
    so it is no retry of it; (on time) it came no later than that timer plus the path's
    shortest NAK answer at this capture point (a retry is seen away from the sender up to
    a round trip later) and twice the slack (the wait and the answer are each measured
    between two timestamps), PFC pause not counted. `wait`: since the NAK, less PFC
    pause."""
    c, slack = x.conv, x.tol.slack_ns
    rnr = (trigger == "rnr") & (e["nak_ev"] >= 0) & (e["nak_kind"] == RNR_NAK)
    timer = _rnr_timer_ns(x, np.maximum(e["nak_ev"], 0))
    since = c.ts[e["first_ev"]] - event_ts(c, e["nak_ev"])
    floor = cn.path_floor(c, e["conv"])
    early = rnr & (since < timer - slack)
    unmeasured = floor < 0
    floor[unmeasured] = _rnr_round_trip(e, rnr & ~early, wait - timer, slack)[unmeasured]
    # two measured intervals, the wait and the answer, each a slack off at most
    on_time = rnr & ~early & (wait <= timer + floor + 2 * slack)
    late = np.flatnonzero(rnr & ~early & ~on_time)
    busy = _busy_before(x, c.row[e["first_ev"][late]])
    on_time[late] = wait[late] - busy <= timer[late] + floor[late] + 2 * slack
    return early, on_time


def _busy_before(x: Context, rows: np.ndarray) -> np.ndarray:
    """Per frame row of `rows`: how long its source's wire was busy right before it, the
    back-to-back train of that source's frames it ends (each within a frame time, at the
    link speed the capture shows, and the slack of the one before; 0 with no link speed).
    A frame due while its NIC sends others goes out when the wire frees: its lateness
    by that long shows no cause of its own."""
    pp, tol = x.pp, x.tol
    out = np.zeros(len(rows), np.int64)
    if tol.link_bps is None:
        return out
    for k, r in enumerate(rows.tolist()):  # late RNR retries are few
        own = np.flatnonzero(pp.src[: r + 1] == pp.src[r])
        ts = pp.ts[own]
        frame = np.asarray(tol.frame_ns(pp.wire_len[own].astype(np.int64)), float)
        wire = np.maximum(frame[1:], frame[:-1]) + tol.slack_ns
        apart = np.flatnonzero(np.diff(ts) > wire)  # where a train breaks
        first = int(apart[-1]) + 1 if len(apart) else 0
        out[k] = int(ts[-1] - ts[first])
    return out


def _rnr_timer_ns(x: Context, ev: np.ndarray) -> np.ndarray:
    """Per RNR NAK event: the RNR timer its syndrome names, in nanoseconds."""
    code = x.pp.syndrome[x.conv.row[ev]].astype(np.int64) & 0x1F
    return np.round(np.asarray(RNR_TIMER_US)[code] * 1000).astype(np.int64)


def _rnr_round_trip(e: np.ndarray, retry: np.ndarray, lag: np.ndarray, slack: int) -> np.ndarray:
    """Per episode, how long after its RNR timer a retry may be seen on a path whose NAK
    answers the capture does not show: none (a retry on time at the sender) unless the
    conversation's RNR retries each came one and the same time after the timer their NAK
    names (within the slack of each), that time then (the round trip to the sender, seen
    twice alike: the ACK timer would have to fire at that lag after each NAK)."""
    out = np.zeros(len(e), np.int64)
    ks = np.flatnonzero(retry & (lag >= 0))
    if not len(ks):
        return out
    lags = pd.Series(lag[ks]).groupby(e["conv"][ks])
    spread, count, longest = lags.max() - lags.min(), lags.count(), lags.max()
    alike = longest[(count >= 2) & (spread <= 2 * slack)]
    per_conv = dict(zip(alike.index.tolist(), alike.tolist(), strict=True))
    out[ks] = [per_conv.get(int(k), 0) for k in e["conv"][ks].tolist()]
    return out


def rnr_retry_fits(x: Context, e: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per timeout episode of `ks`, in a conversation whose responder sends RNR NAKs: its
    silence since the last request is as long as an RNR timer one of them names (no
    shorter, less the slack, and no longer by more than the longest any response of the
    conversation came after the request before it, plus the slack: the requester retries
    that long after the RNR NAK, which came after the last request it sent), so it may be
    the retry of an RNR NAK this capture point missed (a capture point can drop
    frames)."""
    c, slack = x.conv, x.tol.slack_ns
    rnr = np.flatnonzero(c.kind == RNR_NAK)
    out = np.zeros(len(ks), bool)
    if len(rnr) == 0 or len(ks) == 0:
        return out
    timer = _rnr_timer_ns(x, rnr)
    answers = np.flatnonzero(np.isin(c.kind, cn.RESPONSE_KINDS))
    asked = progress_before(c, c.conv[answers], answers, np.flatnonzero(c.kind == REQUEST))
    took = c.ts[answers] - c.ts[asked]  # since the request before it
    slowest = pd.Series(took).groupby(c.conv[answers]).max()
    silence = c.ts[e["first_ev"][ks]] - event_ts(c, e["prev_req_ev"][ks])
    timeouts = pd.DataFrame({"k": np.arange(len(ks)), "conv": e["conv"][ks], "silence": silence})
    named = pd.DataFrame({"conv": c.conv[rnr], "named": timer}).drop_duplicates()
    pairs = timeouts.merge(named, on="conv")  # each timeout beside each timer its RNR NAKs name
    late = pairs["named"] + slowest.reindex(pairs["conv"]).to_numpy() + slack
    fits = (pairs["silence"] >= pairs["named"] - slack) & (pairs["silence"] <= late)
    out[pairs.loc[fits, "k"].to_numpy()] = True
    return out


def rnr_retry_lag(x: Context, e: np.ndarray, trigger: np.ndarray, certainty: np.ndarray) -> int:
    """The longest an RNR retry the analysis takes (certain or likely, no sooner than its
    timer) came after the RNR timer its NAK names, PFC pause not counted; 0: none. Why:
    the measure of how late a requester's retry shows at this capture point (the round
    trip to the sender and the sender's own delay) where no NAK answer times the path."""
    c, slack = x.conv, x.tol.slack_ns
    taken = (trigger == "rnr") & (certainty != UNCERTAIN)
    ks = np.flatnonzero(taken & (e["nak_kind"] == RNR_NAK) & (e["nak_ev"] >= 0))
    if not len(ks):
        return 0
    wait = c.ts[e["first_ev"][ks]] - c.ts[e["nak_ev"][ks]] - x.paused_ns[ks]
    lag = wait - _rnr_timer_ns(x, e["nak_ev"][ks])
    lag = lag[lag >= -slack]  # sooner than the timer: no retry (rnr_timing)
    return int(max(lag.max(), 0)) if len(lag) else 0


def seen_rnr_retry_fits(x: Context, e: np.ndarray, ks: np.ndarray, retry_lag: int) -> np.ndarray:
    """Per timeout episode of `ks`: it came as long after an RNR NAK of its conversation
    that this capture point saw as the RNR timer that NAK names (no sooner, less the
    slack; no later than that timer plus the lag and twice the slack, less any PFC pause
    it waited through and the train its sender's wire was busy with right before it, as
    an on-time retry, rnr_timing), so it may be that NAK's retry. Why: a requester holds
    an RNR NAK's retry for the timer whatever else it resends meanwhile (a NAK's go-back-N
    may resend, and the responder acknowledge, the very PSNs the RNR NAK named); the retry
    then restarts from the first PSN still unacknowledged, above the NAKed one, after a
    silence a timer would show alike. The lag: the longest of the path's shortest NAK
    answer (a retry is seen away from the sender up to a round trip later), its slowest
    answer, and the longest any RNR retry the capture shows came after its timer
    (`retry_lag`, rnr_retry_lag: at a capture point beside the responder, no answer
    times the round trip to the requester)."""
    c, slack = x.conv, x.tol.slack_ns
    out = np.zeros(len(ks), bool)
    rnr = np.flatnonzero(c.kind == RNR_NAK)
    if len(rnr) == 0 or len(ks) == 0:
        return out
    conv, t0 = e["conv"][ks], c.ts[e["first_ev"][ks]]
    path = np.maximum(cn.path_floor(c, conv), cn.slowest_answers(c)[conv])
    lag = np.maximum(path, retry_lag)
    held = x.paused_ns[ks] + _busy_before(x, c.row[e["first_ev"][ks]])
    timer = _rnr_timer_ns(x, rnr)
    for k in range(len(ks)):  # timeouts in a conversation with RNR NAKs: few
        mine = (c.conv[rnr] == conv[k]) & (c.ts[rnr] <= t0[k])
        since = t0[k] - c.ts[rnr[mine]]
        late = timer[mine] + lag[k] + 2 * slack
        out[k] = bool(((since >= timer[mine] - slack) & (since - held[k] <= late)).any())
    return out
