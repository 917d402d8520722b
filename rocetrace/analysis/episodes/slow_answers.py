"""Slow NAK answers: a resend later than the path's answers that may still answer its NAK
rather than the ACK timer, and the shapes no timer makes.
"""

from __future__ import annotations

import numpy as np

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    LIKELY,
    UNCERTAIN,
    Context,
    acked_by_responses,
    among,
    longest_loss,
    op_class,
    responses_of,
    selective_repeat_hosts,
    sending_hosts,
)
from rocetrace.analysis.episodes.shapes import lone_resend_run_lost
from rocetrace.analysis.episodes.timers import (
    armed_on_a_send,
    narrowed,
    queued_at_most,
    timer_armed_before,
    timer_margin,
)
from rocetrace.analysis.nic_context import NO_MARGIN, NicContext
from rocetrace.analysis.prepared import NAK
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS


def weigh_slow_answers(
    x: Context,
    e: np.ndarray,
    slow: np.ndarray,
    cause: np.ndarray,
    wait: np.ndarray,
    trigger: np.ndarray,
    certainty: np.ndarray,
    rnr_on_time: np.ndarray,
) -> None:
    """A resend longer after its cause than the shortest ACK timer: a slow answer (the
    sender was busy or paused), or the cause never reached the sender (lost after the
    capture point) and its ACK timer fired. An RNR NAK's retry that came when the timer
    that NAK names lapsed (`rnr_on_time`, rnr_timing) is its retry, likely: the other
    reading needs the ACK timer to fire at that very moment. The timer fires no sooner
    than its timeout after the last progress the sender had seen before that cause. The
    capture's own timeouts bound the timeout from above only (a timer that fired twice,
    its first resends lost; a resend held by a PFC pause this capture point does not see;
    re-arms on events the capture does not show); from below, the shortest silence since
    a re-arm before a timeout bounds it (timeout_silence), unless the capture shows runs
    held by pauses, else the IBTA minimum: a resend sooner than that after the last
    progress (plus the path's slowest answer: the progress and the resend reach a capture
    point away from the sender each a path's delay late) is the cause's answer; else the
    capture cannot tell. Where no progress before the cause re-armed the timer, it ran
    from a request the sender sent, which may have waited in a queue on its way here
    (armed_on_a_send): the silence since it is the sender's less that wait, at most as
    long as the busy spell it ended on the link this capture point sees (queued_at_most)."""
    c = x.conv
    t0 = c.ts[e["first_ev"]]
    armed = timer_armed_before(x, e["conv"], cause)
    since = t0 - c.ts[armed]
    timers = x.nic or NicContext(
        timer_ns=x.seen.get("timer_ns"),  # type: ignore[arg-type]
        timer_lo_ns=x.seen.get("timer_lo_ns"),  # type: ignore[arg-type]
    )
    timer = timers.least_timer()  # the timer may be as short as the timeouts allow
    lag = cn.slowest_answers(c)[e["conv"]]
    reach = since + x.tol.slack_ns + lag  # a timer no longer than this may have fired
    on_send = np.flatnonzero(slow & armed_on_a_send(x, armed))
    reach[on_send] += queued_at_most(x, armed[on_send])
    maybe_timer = slow & (reach >= timer)
    repeat = maybe_timer & (_no_timer_shape(x, e, trigger) | _lone_repeat_shape(x, e, trigger))
    had_nak = maybe_timer & _restart_needs_nak(x, e, trigger)
    answered = rnr_on_time | repeat | had_nak
    certainty[maybe_timer & answered & (certainty == CERTAIN)] = LIKELY
    certainty[maybe_timer & ~answered] = UNCERTAIN
    x.seen["lo_margin"] = timer_margin(reach[slow], timer)
    x.seen["timer_margin"] = NO_MARGIN
    _timer_not_nak(x, e, maybe_timer & ~had_nak, wait, timers.timer_ns, trigger, certainty)


def _undoubted_own_answer(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Episodes read as a NAK's (not an RNR NAK's) answer from its own PSN, no resend of
    which may be another episode's: no split near it, taken by it or cutting it, no split
    in doubt, no near NAK, no other reading, no late copy and no copy of an earlier run.
    The ground every slow-answer shape no ACK timer makes stands on (_no_timer_shape,
    _lone_repeat_shape, _restart_needs_nak): where a resend may be another episode's, its
    shape says nothing of this one's cause."""
    c = x.conv
    out = (trigger == "nak") & (e["nak_kind"] == NAK) & (e["start_ext"] == e["nak_ext"])
    out &= (e["near_split"] == 0) & (e["taken_split"] < 0) & (e["cut_by_split"] == 0)
    out &= ~x.split_open & ~among(len(e), x.near) & (e["alt_of"] == -1)
    return out & ~cn.late_copy(c) & ~cn.copy_of_earlier_run(c)


def _no_timer_shape(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Slow NAK answers shaped as no ACK timer resends: the NAKed PSN, then a skip to the
    newest PSN sent, two resends in all (a selective repeat), where no ACK overtook the
    skip, the capture point loses no requests on the way and no resend may be another
    episode's. An ACK timer's restart goes back N from the first unacknowledged PSN on
    whatever the NIC's policy (selective repeat answers NAKs only), so it would have
    resent the PSNs the skip passed over; only the NAK explains the skip. Where the capture
    point loses requests, those resends may have been lost on the way: not when that is
    more in a row than the path loses anywhere else, two or more (as for the mode)."""
    c = x.conv
    out = _undoubted_own_answer(x, e, trigger)
    out &= (e["n_resent"] == 2) & (e["tail_skips"] > 0) & (e["unasked"] == 0)
    # where the capture point loses requests, the timer's go-back-N would have lost every
    # PSN the skip passed over: more in a row than the path loses anywhere else, two or more
    burst = (e["skipped"] >= 2) & (e["skipped"] > longest_loss(c)[e["conv"]])
    return out & (e["ack_skips"] == 0) & (~x.losses_upstream[e["conv"]] | burst)


def _lone_repeat_shape(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Slow NAK answers of one resend, of a READ's or WRITE's NAKed PSN, sent by a NIC that
    shows a selective repeat no go-back makes, where a go-back-N from that PSN would have
    lost two or more resends in a row, more than the path loses anywhere else
    (lone_resend_run_lost), and no resend may be another episode's. The NIC's answer is a
    selective repeat that lost only its resend of the newest; an ACK timer's restart goes
    back N from the first unacknowledged PSN (that very PSN) on any NIC, so it would have
    lost the rest of its run in a row."""
    out = _undoubted_own_answer(x, e, trigger)
    out &= (e["n_resent"] == 1) & (e["end_ext"] < e["last_sent_first"])
    out &= op_class(e["start_opcode"]) == "rdma"
    out &= np.isin(sending_hosts(x, e), list(selective_repeat_hosts(x)))
    lost = lone_resend_run_lost(x, e, out)
    return out & (lost >= 2) & (lost > longest_loss(x.conv)[e["conv"]])


def _restart_needs_nak(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Slow NAK answers that only a sender holding that NAK sends: a SEND's run from the
    NAKed PSN itself, above every PSN an ACK or response the capture saw before it
    acknowledged (plus one), with no other NAK above those PSNs (one below the NAKed PSN may
    be the run's cause, its first resends lost; one at or beyond it tells the sender the
    same). An ACK timer's restart goes back to the first PSN the sender knows
    unacknowledged, and only this NAK told it
    the PSNs below its own arrived (the sender has no acknowledgement the capture point did
    not see: every response to it passes there), so the timer reading needs the NAK to have
    reached the sender after all. Holding it, the NIC answers it; a timer could only have
    fired had that answer been lost on the way, whole: a go-back-N from the NAKed PSN to
    the newest PSN sent (a SEND's, whatever the NIC's policy), where the capture point loses
    requests at all, two or more in a row and more than the path loses anywhere else. Where
    no resend may be another episode's (as for _no_timer_shape), that leaves the NAK."""
    c = x.conv
    out = _undoubted_own_answer(x, e, trigger) & (op_class(e["start_opcode"]) == "send")
    acked = acked_by_responses(c, e)
    out &= e["start_ext"] > acked + 1
    lost = e["sent_hi"] - e["nak_ext"] + 1  # a go-back-N answer lost whole
    longest = longest_loss(c)[e["conv"]]
    out &= ~x.losses_upstream[e["conv"]] | ((lost >= 2) & (lost > longest))
    naks, _ = responses_of(c)
    for k in np.flatnonzero(out).tolist():  # slow answers are few
        conv, first = int(e["conv"][k]), int(e["first_ev"][k])
        lo, hi = np.searchsorted(naks, [int(np.searchsorted(c.conv, conv)), first])
        other = naks[lo:hi][naks[lo:hi] != e["nak_ev"][k]]
        out[k] = not (c.ext[other] > acked[k]).any()
    return out


def _timer_not_nak(
    x: Context,
    e: np.ndarray,
    maybe_timer: np.ndarray,
    wait: np.ndarray,
    measured: int | None,
    trigger: np.ndarray,
    certainty: np.ndarray,
) -> None:
    """A resend the timer may have sent, as long after its NAK as the shortest timeout the
    capture's own timeouts show (less the path's shortest NAK answer: a timeout seen away
    from the sender is longer than the NIC's by up to a round trip): the NAK's answer would
    be as slow as the NIC's timer, which no NAK answer the capture shows is (such a one
    would be in doubt itself). The NAK was lost after the capture point and the timer
    fired: a timeout, likely, for a run no resend of which may answer another NAK.
    `wait`: since the NAK, less PFC pause; `measured`: the shortest timeout the capture's
    timeouts show (None: none)."""
    c = x.conv
    floor = np.maximum(cn.path_floor(c, e["conv"]), 0)
    timed = maybe_timer & (trigger == "nak") & (e["start_ext"] >= e["nak_ext"])
    # one run from its first PSN on, that no resend of may answer another NAK (a skip, a
    # split in doubt): else part of it may be a NAK's answer after all
    timed &= (e["skips"] == 0) & (e["near_split"] == 0) & (e["taken_split"] < 0)
    timed &= ~x.split_open & ~among(len(e), x.near)
    reach = wait + x.tol.slack_ns + floor  # a timeout no longer than this: the timer's
    # no timeout measured: the rule reads none (as if every timeout were beyond reach)
    threshold = NO_MARGIN[1] if measured is None else max(measured, MIN_ACK_TIMEOUT_NS)
    margin = timer_margin(reach[timed], threshold)
    x.seen["timer_margin"] = narrowed(x.seen["timer_margin"], margin)  # type: ignore[arg-type]
    timed &= reach >= threshold
    trigger[timed] = "timeout"
    certainty[timed] = LIKELY
