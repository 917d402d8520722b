"""Timing against the sender's timers: the ACK timer's bounds and the silence before a
timeout, RNR retry delays, and runs held by a PFC pause the capture point does not see.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    LIKELY,
    READ_REQUEST_OP,
    UNCERTAIN,
    Context,
    event_ts,
    longest_loss,
    message_first,
    original_open,
    progress_before,
    sending_hosts,
)
from rocetrace.analysis.episodes.rnr import rnr_retry_fits, rnr_retry_lag, seen_rnr_retry_fits
from rocetrace.analysis.episodes.shapes import repeat_goes_nowhere
from rocetrace.analysis.nic_context import NO_MARGIN, NicContext
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, READ_RESPONSE, REQUEST, RNR_NAK
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS


def unseen_pause(x: Context, e: np.ndarray, which: np.ndarray, certainty: np.ndarray) -> None:
    """Runs of `which` the state machine split off for a silence of at least the shortest
    ACK timer (a resend at the run's next PSN or further on): the ACK timer's restart, or
    the run itself held by a PFC pause this capture point did not see (PFC is per link: a
    capture point away from the sender's port sees no pause frame sent to it). The NIC's
    timeout is at most the capture's timeouts that went back show (timeout_silence), and
    at least that less the round trip between this capture point and the sender (the
    path's shortest NAK answer; none where unmeasured, which only leaves the cause open
    sooner); the sender's silence since the last progress it had is at most what this
    capture point shows, and at least that less the path's lag (its slowest answer or
    shortest NAK answer, the longer). The timer surely fired: certain; no timeout is
    measured: the cause is open; it cannot have fired: the run held, its cause the run's
    (`x.held_of`, _held_runs); in between, the timer is likely (the other reading needs a
    pause the capture shows no sign of, ending as the timer would fire)."""
    x.held_of = np.full(len(e), -1, np.int64)
    if not which.any():
        return
    timers = x.nic or NicContext(timer_ns=x.seen.get("timer_ns"))  # type: ignore[arg-type]
    certainty[which & (certainty == CERTAIN)] = LIKELY
    margin: tuple[int, int] = (0, MIN_ACK_TIMEOUT_NS)  # a measured timeout weighs anew
    nowhere = which & repeat_goes_nowhere(x, e, e["cut_of"])
    if timers.timer_ns is None:
        certainty[which & ~nowhere] = UNCERTAIN  # no run to hold: the timer, likely
    else:
        c = x.conv
        since = c.ts[e["first_ev"]] - c.ts[progress_before(c, e["conv"], e["first_ev"])]
        floor = cn.path_floor(c, e["conv"])
        slowest = cn.slowest_answers(c)[e["conv"]]
        trip = np.maximum(floor, 0) + x.tol.slack_ns
        lag = np.maximum(slowest, floor) + x.tol.slack_ns
        fired, may_fire = since - lag, since + trip  # the sender's silence, at least, at most
        certainty[which & (certainty == LIKELY) & (fired >= timers.timer_ns)] = CERTAIN
        certainty[which & (may_fire < timers.timer_ns)] = UNCERTAIN
        held = which & (may_fire < timers.timer_ns) & (e["cut_of"] >= 0) & ~nowhere
        x.held_of = np.where(held, e["cut_of"], -1)
        margin = narrowed(
            timer_margin(fired[which], timers.timer_ns),
            timer_margin(may_fire[which], timers.timer_ns),
        )
    x.seen["timer_margin"] = narrowed(x.seen.get("timer_margin", NO_MARGIN), margin)  # type: ignore[arg-type]


def timer_margin(reach: np.ndarray, timer: int) -> tuple[int, int]:
    """The timeouts T (lo < T <= hi) under which the slow answers weigh as they did with
    `timer`: each is in doubt (or the timer's, _timer_not_nak) exactly when its reach is at
    least T, so only a T across one of those reaches changes one. A partition whose timer
    differs from the capture's by a few nanoseconds (each measures the same NIC timer on
    its own connections) is not weighed again for it (assumptions.stale)."""
    below, above = reach[reach < timer], reach[reach >= timer]
    lo = int(below.max()) if len(below) else 0
    hi = int(above.min()) if len(above) else NO_MARGIN[1]
    return lo, hi


def narrowed(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The timeouts inside both margins (two rules read the timer)."""
    return max(a[0], b[0]), min(a[1], b[1])


def timer_armed_before(x: Context, conv: np.ndarray, ev: np.ndarray) -> np.ndarray:
    """Per event `ev` of conversation `conv`: the last progress before it that re-armed the
    sender's ACK timer, the earlier in two readings of what a NAK acknowledges
    (_timer_progress: the timer may be older; a go-back-0 NIC's timer is not re-armed by a
    NAK inside the message it redoes)."""
    if x.timer_progress is None:
        x.timer_progress = _timer_progress(x)
    ibta, whole_message = x.timer_progress
    c = x.conv
    return np.minimum(
        progress_before(c, conv, ev, ibta), progress_before(c, conv, ev, whole_message)
    )


def armed_on_a_send(x: Context, armed: np.ndarray) -> np.ndarray:
    """Per event of timer_armed_before's answer `armed`: no progress re-armed the timer
    there (timer_armed_before fell back to its conversation's first event). The sender
    armed its ACK timer when it sent a request while none ran: that one, or one before
    the capture began. A request reaches a capture point away from the sender after
    waiting in the queues on its way, as long as the senders sharing a link keep it busy
    (many frame times, each four times as long at 25 Gb/s as at 100 Gb/s), and a resend
    sent when those queues have drained does not wait: the sender's silence since it
    armed the timer may be longer than any silence the capture shows since that request,
    by a wait the capture cannot measure."""
    if x.timer_progress is None:
        x.timer_progress = _timer_progress(x)
    ibta, whole_message = x.timer_progress
    return ~np.isin(armed, ibta) & ~np.isin(armed, whole_message)


def queued_at_most(x: Context, ev: np.ndarray) -> np.ndarray:
    """Per event of `ev`: the longest its frame may have waited in a queue on its way to
    this capture point, as the capture shows it: the time since the head of the busy spell
    it ends among the frames to its destination (each no more than the longest frame time
    plus the clock's slack after the one before, or as many more frame times as the most
    requests the capture shows lost in a row: frames lost between the queue and this
    capture point leave holes in the spell). A queue drains back to back onto the link
    past it, so a frame that waited there comes that long after the spell began; the
    spell's head found the queue empty (the link was idle before it). A capture begun
    inside a spell shows less of it, as it shows less of a conversation before its first
    event (which timer_armed_before takes as the timer's start)."""
    if not len(ev):
        return np.zeros(0, np.int64)
    pp, rows = x.pp, x.conv.row[ev].astype(np.intp)
    holes = int(longest_loss(x.conv).max(initial=0))
    gap = (1 + holes) * x.tol.max_frame_ns + x.tol.slack_ns
    by_dst = np.argsort(pp.dst, kind="stable")  # each destination's frames in capture order
    dst, ts = pp.dst[by_dst], pp.ts[by_dst]
    starts = np.ones(len(by_dst), bool)  # a spell begins a destination or follows idleness
    starts[1:] = (dst[1:] != dst[:-1]) | (np.diff(ts) > gap)
    head = np.maximum.accumulate(np.where(starts, np.arange(len(by_dst)), 0))
    at = np.empty(len(by_dst), np.intp)
    at[by_dst] = np.arange(len(by_dst))  # a frame's place among its destination's
    return (pp.ts[rows] - ts[head[at[rows]]]).astype(np.int64)


def _timer_progress(x: Context) -> tuple[np.ndarray, np.ndarray]:
    """The events that acknowledged something new as a sender's ACK timer may count it, in
    two readings of a NAK: it acknowledges every PSN below its own (IBTA), or only what
    precedes its PSN's message (a go-back-0 NIC redoes the message). In the first an ACK
    below an earlier NAK's PSN restarts no timer; in the second a NAK inside the message
    of an earlier one does not. An RNR NAK acknowledges the PSNs below its own."""
    c = x.conv
    ev = np.flatnonzero(np.isin(c.kind, cn.RESPONSE_KINDS))
    nak = c.kind[ev] == NAK
    level = c.ext[ev] - np.isin(c.kind[ev], (NAK, RNR_NAK))
    whole = np.where(nak, message_first(x, ev) - 1, level)
    lowest = _lowest_sent(c)[c.conv[ev]]
    return _advanced(c, ev, level, lowest), _advanced(c, ev, whole, lowest)


def _lowest_sent(c: cn.Conversations) -> np.ndarray:
    """Per conversation, the lowest PSN of a request the capture saw in it (the int64
    maximum where none)."""
    out = np.full(len(c.state), np.iinfo(np.int64).max, np.int64)
    req = np.flatnonzero(c.kind == REQUEST)
    np.minimum.at(out, c.conv[req], c.ext[req])
    return out


def _advanced(
    c: cn.Conversations, ev: np.ndarray, level: np.ndarray, lowest: np.ndarray
) -> np.ndarray:
    """Of events `ev` (in event order), those acknowledging beyond every one before them in
    their conversation (`level`: the highest PSN each acknowledges) and at least the lowest
    PSN the capture saw sent in it (`lowest`): one acknowledging only PSNs below that (a
    go-back-0 NAK inside the first message seen) may tell the sender nothing new, and the
    timer be older (the earlier reading is the one timer_armed_before wants)."""
    if len(ev) == 0:
        return ev
    before = pd.Series(level).groupby(c.conv[ev]).cummax().groupby(c.conv[ev]).shift()
    return ev[~(before.to_numpy(float) >= level) & (level >= lowest)]


def timeout_silence(
    x: Context, e: np.ndarray, trigger: np.ndarray, certainty: np.ndarray
) -> int | None:
    """The shortest silence since the last progress before a timeout resend, None: none.
    Not a run that went on after a silence (unseen_pause): that may be a PFC pause; nor a
    timeout already in doubt (it may be no timer's): one a NAK may have caused
    (_nak_before_timer, rnr_retry_fits). Each timeout bounds the timer (_timer_bounds);
    one whose silence since the last progress is shorter than the longest silence since
    a re-arm before a timeout (the timer floor, joined in the context), or than the IBTA
    minimum, cannot be the same timer's: in doubt (the capture point may have missed the
    NAK it answers), and no measure of it."""
    went_back = e["start_kind"] != cn.START_TIMER
    timeouts = np.flatnonzero(
        (trigger == "timeout") & (e["nak_ev"] < 0) & went_back & (certainty != UNCERTAIN)
    )
    shown = _nak_before_timer(x, e, timeouts) | rnr_retry_fits(x, e, timeouts)
    shown |= seen_rnr_retry_fits(x, e, timeouts, rnr_retry_lag(x, e, trigger, certainty))
    shown |= original_open(x, e)[timeouts]  # a NAK's answer, were a late copy the original
    x.cause_shown = np.zeros(len(e), bool)
    x.cause_shown[timeouts[shown]] = True
    asked = shown | _dropped_nak_fits(x, e, trigger, timeouts)
    certainty[timeouts[asked]] = UNCERTAIN
    timeouts = timeouts[~asked]
    x.seen["timer_floor_ns"] = x.seen["timer_lo_ns"] = None
    if len(timeouts) == 0:
        return None
    most, least = _timer_bounds(x, e, timeouts)
    # where the capture point saw requests lost before it, the sender may have re-armed
    # its timer on requests this capture point never saw (a whole earlier timer run
    # lost): no lower bound there, unless that run (as long as this one: the same
    # outstanding PSNs) would have lost more in a row than the path loses anywhere else
    conv = e["conv"][timeouts]
    run = e["n_resent"][timeouts]
    whole = (run >= 2) & (run > longest_loss(x.conv)[conv])
    sure = ~x.losses_upstream[conv] | whole
    if sure.any():
        x.seen["timer_floor_ns"] = int(least[sure].max())
    timers = x.nic or NicContext(timer_floor_ns=x.seen["timer_floor_ns"])  # type: ignore[arg-type]
    x.seen["floor_margin"] = timer_margin(most, timers.timer_floor())
    none = most < timers.timer_floor()
    certainty[timeouts[none]] = UNCERTAIN
    if (sure & ~none).any():
        # a run held after a silence (unseen_pause) or a PFC pause the capture shows: a
        # timeout's resend, too, may have been held back, its silence longer than the timer
        held = (e["start_kind"] == cn.START_TIMER).any() or bool((x.paused_ns > 0).any())
        x.seen["timer_lo_ns"] = 0 if held else int(least[sure & ~none].min())
    if none.all():
        return None
    return int((most[~none] - x.tol.slack_ns).min())


def dropped_nak(
    x: Context, e: np.ndarray, doubted: np.ndarray, trigger: np.ndarray, certainty: np.ndarray
) -> None:
    """Restarts read as timeouts that timeout_silence put in doubt (`doubted`), which went
    back, where the capture point drops frames (capture_drops): a NAK the sender took may
    be missing from the capture. Where the silence since the last progress before such a
    restart (the longer of the two readings of what a NAK acknowledges, plus the slack:
    the sender had that progress no sooner than this capture point saw it) is shorter than
    the shortest timeout the capture's timeouts allow (the shortest silence since a re-arm
    before one: the NIC's ACK timer runs alike on all its QPs), no timer of the sender
    fired, and a NIC resends only for a NAK, a timer or a run it goes on with (a run going
    back is none): its cause is a NAK the capture point dropped, likely (the local ACK
    timeout is set per QP, so this QP's timer may be shorter than every other measured:
    the capture shows no sign of that); the IBTA minimum where the capture shows no
    timeout or runs held by pauses (no shortest timeout then). Not for a READ (a READ
    response dropped too may have made it a re-issue), nor where a NAK, an RNR NAK (its
    retry) or a late original it shows may be the cause (`x.cause_shown`, as
    timeout_silence weighed them)."""
    timers = x.nic or NicContext(timer_lo_ns=x.seen.get("timer_lo_ns"))  # type: ignore[arg-type]
    ks = np.flatnonzero(doubted & (e["start_kind"] != cn.START_TIMER) & (e["nak_ev"] < 0))
    ks = ks[(e["start_opcode"][ks] & 0x1F) != READ_REQUEST_OP]
    if len(ks) == 0 or not capture_drops(x.conv):
        return
    ks = ks[~x.cause_shown[ks]]
    c = x.conv
    most = c.ts[e["first_ev"][ks]] - c.ts[timer_armed_before(x, e["conv"][ks], e["first_ev"][ks])]
    most = most + x.tol.slack_ns
    timer = timers.least_timer()
    margin = timer_margin(most, timer)
    x.seen["lo_margin"] = narrowed(x.seen.get("lo_margin", NO_MARGIN), margin)  # type: ignore[arg-type]
    dropped = ks[most < timer]
    trigger[dropped], certainty[dropped] = "nak", LIKELY


def _nak_before_timer(x: Context, e: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per timeout episode of `ks`: a NAK or RNR NAK seen since the last progress before
    it (or that progress itself) may be its cause, as the timer need not have fired: the
    sender had that progress, and this capture point saw the resend, together up to a
    round trip between them later (the path's shortest NAK answer; its slowest answer
    where none is measured), so the sender's silence since the progress may be shorter
    than the IBTA minimum.
    A NAK answered by resends the path lost before the capture point (a go-back-0 that
    lost its message's first PSN, say) looks alike."""
    c = x.conv
    start, conv = e["first_ev"][ks], e["conv"][ks]
    progress = progress_before(c, conv, start)
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    nak = progress_before(c, conv, start, naks)
    seen = np.isin(c.kind[nak], (NAK, RNR_NAK)) & (nak >= progress)
    floor = cn.path_floor(c, conv)
    lag = np.where(floor >= 0, floor, cn.slowest_answers(c)[conv]) + x.tol.slack_ns
    return seen & (c.ts[start] - c.ts[progress] - lag < MIN_ACK_TIMEOUT_NS)


def _dropped_nak_fits(x: Context, e: np.ndarray, trigger: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per timeout episode of `ks`, where the capture point drops frames (capture_drops):
    its silence since the last request before it is no longer than the slowest NAK answer
    its sending host shows in the capture, plus the path's slowest answer (the NAK a
    request caused reaches the sender up to a round trip after it). It may answer a NAK
    the capture point dropped: a NIC busy with other queues answers NAKs that slowly."""
    out = np.zeros(len(ks), bool)
    if len(ks) == 0 or not capture_drops(x.conv):
        return out
    c = x.conv
    naks = np.flatnonzero((trigger == "nak") & (e["nak_ev"] >= 0))
    wait = pd.Series(c.ts[e["first_ev"][naks]] - c.ts[e["nak_ev"][naks]])
    slowest = wait.groupby(sending_hosts(x, e)[naks]).max()
    host = pd.Series(sending_hosts(x, e)[ks]).map(slowest).fillna(-1).to_numpy(np.int64)
    silence = c.ts[e["first_ev"][ks]] - event_ts(c, e["prev_req_ev"][ks])
    lag = cn.slowest_answers(c)[e["conv"][ks]] + x.tol.slack_ns
    return (host >= 0) & (e["prev_req_ev"][ks] >= 0) & (silence <= host + lag)


def capture_drops(c: cn.Conversations) -> bool:
    """Did the capture point miss frames that passed it: PSNs skipped in new data that no
    copy of was ever captured, yet the responder acknowledged them (an ACK or READ
    response at or beyond them, a NAK beyond them)? Every copy that reached the responder
    passed this capture point unseen: a sniffer drops frames (of any kind, a NAK too)."""
    gaps = np.flatnonzero((c.kind == REQUEST) & (c.gap > 0))
    if not len(gaps):
        return False
    requests = np.flatnonzero(c.kind == REQUEST)
    acks = np.flatnonzero(np.isin(c.kind, (ACK, ATOMIC_ACK, READ_RESPONSE)))
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    level = pd.concat(
        [pd.Series(c.ext[acks], c.conv[acks]), pd.Series(c.ext[naks] - 1, c.conv[naks])]
    )
    acked = level.groupby(level.index).max()
    for g in gaps.tolist():  # gaps are few
        conv, lo, hi = int(c.conv[g]), int(c.ext[g] - c.gap[g]), int(c.ext[g])
        mine = requests[c.conv[requests] == conv]
        seen = ((c.ext[mine] >= lo) & (c.ext[mine] < hi)).any()
        if not seen and acked.get(conv, lo - 1) >= hi - 1:
            return True
    return False


def _timer_bounds(x: Context, e: np.ndarray, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per timeout episode of `ks`, what its silence shows of the sender's ACK timer: at
    most the silence since the last progress before its resend, the earlier in two
    readings of what a NAK acknowledges (the timer ran at least that long since the
    progress re-armed it; the sender had the progress no sooner than this capture point
    saw it), at least the silence since the last event that may have
    re-armed it (a NIC's timer re-arms on progress and after each timeout, and some
    re-arm it on every request they send or response they take): the last request
    before the resend (both seen one path's delay after the sender sent them) or the
    last response, less the path's lag (the sender took it up to that much after this
    capture point saw it: its slowest answer or shortest NAK answer, the longer), unless
    a PFC pause this capture point does not see held the resend back (the floor it sets
    then only puts more timeouts in doubt). Both widened by the clock's slack."""
    c, slack = x.conv, x.tol.slack_ns
    start, conv = e["first_ev"][ks], e["conv"][ks]
    t0 = c.ts[start]
    most = t0 - c.ts[timer_armed_before(x, conv, start)] + slack
    responses = np.flatnonzero(np.isin(c.kind, cn.RESPONSE_KINDS))
    floor = cn.path_floor(c, conv)
    lag = np.maximum(cn.slowest_answers(c)[conv], floor)
    took = c.ts[progress_before(c, conv, start, responses)] + lag
    least = t0 - np.maximum(event_ts(c, e["prev_req_ev"][ks]), took) - slack
    return most, np.minimum(least, most)
