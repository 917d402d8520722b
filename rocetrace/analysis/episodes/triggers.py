"""Each episode's trigger (NAK, RNR, timeout, READ re-issue) and its certainty, from the
cause the capture shows and the time the resend took to come.
"""

from __future__ import annotations

import numpy as np

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    LIKELY,
    UNCERTAIN,
    Context,
    above_nak,
    among,
    event_ts,
    longest_loss,
    original_open,
    progress_before,
    read_reissue,
    requests_by_psn,
    right_after_no_cause,
)
from rocetrace.analysis.episodes.nak_claims import own_nak_answered
from rocetrace.analysis.episodes.rnr import rnr_timing
from rocetrace.analysis.episodes.runs import (
    either_run,
    near_naks,
    repeat_tail_naks,
    resumed_after_split,
    second_run,
    split_at_the_floor,
)
from rocetrace.analysis.episodes.slow_answers import weigh_slow_answers
from rocetrace.analysis.episodes.timers import (
    capture_drops,
    dropped_nak,
    timeout_silence,
    unseen_pause,
)
from rocetrace.analysis.prepared import NAK, REQUEST, RNR_NAK
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS


def weigh_triggers(x: Context, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each episode's trigger and its certainty. The cause the capture shows (a NAK, or a
    later READ response that revealed a missing one) is taken when the resend came within
    the shortest ACK timer of it; a slower resend may instead be the timer's, when the
    cause never reached the sender (weigh_slow_answers)."""
    c, slack = x.conv, x.tol.slack_ns
    t0 = c.ts[e["first_ev"]]
    silence = t0 - event_ts(c, e["prev_req_ev"])
    timer = silence >= MIN_ACK_TIMEOUT_NS - slack
    has_nak = e["nak_ev"] >= 0
    later = read_reissue(e) & (e["resp_hi"] > e["start_ext"])
    cause = np.where(has_nak, e["nak_ev"], np.where(later, e["resp_hi_ev"], -1))
    wait = t0 - event_ts(c, cause) - x.paused_ns
    trigger = np.select(
        [has_nak & (e["nak_kind"] == NAK), has_nak, later, timer],
        ["nak", "rnr", "read_reissue", "timeout"],
        "unknown",
    ).astype(object)
    certainty = np.full(len(e), CERTAIN, dtype=object)
    certainty[(cause >= 0) & (wait <= slack)] = LIKELY
    # a run above its NAKed PSN: that NAK's go-back-N only if its first resends were lost;
    # so too a timer's restart, once the timer may have fired, but for an RNR NAK's retry
    # on time (the other reading needs the ACK timer to fire at that very moment)
    above = above_nak(e)
    certainty[above & (certainty == CERTAIN)] = LIKELY
    certainty[above & right_after_no_cause(e, trigger)] = UNCERTAIN
    since = t0 - c.ts[progress_before(c, e["conv"], e["first_ev"])]
    lost = _lost_wire_ns(x, e, above)  # the retry began before its first resend seen
    rnr_early, rnr_on_time = rnr_timing(x, e, trigger, wait - lost)  # early: not by wait
    certainty[above & (since >= MIN_ACK_TIMEOUT_NS - slack) & ~rnr_on_time] = UNCERTAIN
    certainty[trigger == "unknown"] = UNCERTAIN
    upstream = x.losses_upstream[e["conv"]]
    certainty[cn.late_copy(c) | cn.lone_late_copy(c, trigger, upstream)] = UNCERTAIN
    certainty[cn.lone_late_copy_before_timer(c, trigger, upstream)] = UNCERTAIN
    certainty[cn.copy_of_earlier_run(c)] = UNCERTAIN
    # a restart whose NAK is within the slack of it (the NAK may have come after), going
    # back right after its run skipped forward over its PSN: that skip may be a copy from
    # elsewhere, late, and the restart more of the run; which episode holds what is open
    close = np.flatnonzero(cn.back_into_skip(c) & (cause >= 0) & (wait <= slack))
    certainty[np.r_[close, close - 1]] = UNCERTAIN
    # a split the state machine swapped with its run's resumption (no request lost before
    # the capture point so far): where the capture shows such losses after all, a
    # go-back-N that lost resends on the way may have made the skip, and which copy is
    # whose is open
    certainty[(e["swapped"] == 1) & x.losses_upstream[e["conv"]]] = UNCERTAIN
    # a READ asked again for responses the capture saw delivered: lost after the capture
    # point (a re-issue), or a resend for a NAK another run answered: open
    certainty[later & (e["start_ext"] <= e["read_resp_hi"]) & (e["read_naked"] == 1)] = UNCERTAIN
    doubt = split_at_the_floor(x, e, wait)
    # a resend kept in the run whose NAK a split in doubt took: were that split more of its
    # run, the NAK would have split this one; so too a NAK a go-back-0 reading beside a NAK
    # of its own first PSN took (were that restart the other NAK's answer)
    taker = e["taken_split"]
    t = np.maximum(taker, 0)
    below_own = has_nak & (e["start_ext"] < e["nak_ext"]) & (e["own_nak_seen"] == 1)
    x.own_answered = own_nak_answered(x, e, below_own, wait)
    gb0_taker = (below_own[t] & ~x.own_answered[t]) | x.own_repeat[t]
    # or a restart above its NAKed PSN took it (its first resends lost): a later resend of
    # exactly that PSN may be that NAK's answer instead
    above_taker = above_nak(e)[t]
    taken = (taker >= 0) & ((doubt[t] & (e["alt_of"][t] != -1)) | gb0_taker | above_taker)
    # a timer's restart at the PSN of a NAK some episode took in doubt may be its answer
    in_doubt = (doubt & (e["alt_of"] != -1)) | (below_own & ~x.own_answered) | x.own_repeat
    in_doubt |= above_nak(e)
    certainty[_timer_at_a_nak_in_doubt(x, e, trigger, in_doubt)] = UNCERTAIN
    # a resend kept in the run not much after a NAK of its own PSN, or whose NAK a split in
    # doubt took: it may be that NAK's answer, and the run from there another episode; the
    # trigger is a NAK either way (only which NAK frame is open: answered_naks.nak_frames),
    # unless an RNR NAK is among them
    two_ways = (e["near_split"] == 1) | taken
    x.near = near_naks(c, e, two_ways)
    for k, naks in x.claimed.items():  # a restart that took a split's NAK: those NAKs too
        if k in x.near or not two_ways[k]:
            x.near[k] = sorted({*x.near.get(k, []), *naks})
    for k, naks in repeat_tail_naks(c, e).items():  # a selective repeat's second resend
        x.near[k] = sorted({*x.near.get(k, []), *naks})
    copy_of_run = _sooner_than_answers(x, e, wait)
    certainty[_copy_of_another_cause(x, e, trigger, certainty, copy_of_run)] = UNCERTAIN
    kept = among(len(e), x.near) & (e["nak_kind"] == NAK)
    x.split_open = resumed_after_split(x, e) == -1
    open_split = x.split_open | (two_ways & ~kept)
    certainty[open_split] = UNCERTAIN
    # a restart for a NAK the open run's resend of that PSN may have answered: that reading
    # leaves the restart no cause (no NAK, no timer, no run to resume), which needs a NAK
    # the capture did not show
    certainty[(e["near_taken"] == 1) & (certainty == CERTAIN)] = LIKELY
    claimed = among(len(e), x.claimed)
    certainty[claimed & (certainty == CERTAIN)] = LIKELY
    # a go-back-0 reading beside a NAK of its own PSN: open, unless another episode's clean
    # answer took that NAK (the other reading leaves that episode no cause), likely
    certainty[below_own & ~x.own_answered] = UNCERTAIN
    certainty[below_own & x.own_answered & (certainty == CERTAIN)] = LIKELY
    certainty[x.own_repeat & (certainty == CERTAIN)] = LIKELY  # own_nak_on_repeat_nic
    slow = (cause >= 0) & (wait >= MIN_ACK_TIMEOUT_NS - slack)
    # a timer's run that skipped forward onto a PSN a NAK had asked for: that resend may be
    # the NAK's selective answer, another episode (a NIC answers a NAK inside a run)
    skipped = np.flatnonzero((trigger == "timeout") & (e["skips"] > 0))
    asked = _answerable_naks(x, e, near_naks(c, e, among(len(e), skipped)))
    unanswered = _unanswered_naks(e, certainty, asked)
    certainty[[k for k in skipped.tolist() if unanswered.get(k, True)]] = UNCERTAIN  # RNR
    weighed = (trigger == "timeout") & (certainty != UNCERTAIN)
    x.seen["timer_ns"] = timeout_silence(x, e, trigger, certainty)
    if slow.any():
        weigh_slow_answers(x, e, slow, cause, wait, trigger, certainty, rnr_on_time)
    dropped_nak(x, e, weighed & (certainty == UNCERTAIN), trigger, certainty)
    # sooner after its RNR NAK than the timer that NAK names: no retry of it
    certainty[rnr_early] = UNCERTAIN
    unseen_pause(x, e, (e["start_kind"] == cn.START_TIMER) & (trigger == "timeout"), certainty)
    x.alt2 = second_run(e, doubt)
    x.alt = either_run(e, doubt, trigger, certainty, x.alt2)
    # a taker weighed uncertain after all: its NAK stays open for the go-back-0 reading too
    for r in np.flatnonzero(x.own_answered).tolist():
        if (certainty[x.own_takers[r]] == UNCERTAIN).any():
            x.own_answered[r] = False
            certainty[r] = UNCERTAIN
            certainty[e["taken_split"] == r] = UNCERTAIN
    _held_runs(x, e, trigger, certainty)
    asked_again = (trigger == "read_reissue") & (certainty != UNCERTAIN)
    certainty[_reissue_may_answer_open_nak(c, e, asked_again, certainty)] = UNCERTAIN
    certainty[_reissue_as_repeat_tail(c, e, trigger)] = UNCERTAIN
    # again, as every rule above weighed the run: a lone copy's trigger is its run's
    certainty[_copy_of_another_cause(x, e, trigger, certainty, copy_of_run)] = UNCERTAIN
    certainty[_dropped_nak_in_chain(x, e, trigger)] = UNCERTAIN
    certainty[_timer_cannot_start_there(x, e, trigger)] = UNCERTAIN
    certainty[_above_nak_or_dropped_nak(x, e, trigger)] = UNCERTAIN
    certainty[_after_reordering(x, e)] = UNCERTAIN  # last: whatever the rules above read
    certainty[original_open(x, e)] = UNCERTAIN
    return trigger, certainty


def _timer_at_a_nak_in_doubt(
    x: Context, e: np.ndarray, trigger: np.ndarray, in_doubt: np.ndarray
) -> np.ndarray:
    """Timeouts (no NAK left to take) at exactly the PSN of a NAK that an episode took in
    doubt (`in_doubt`: a split the capture cannot tell from more of the run it cut, a
    go-back-0 reading beside a NAK of its own PSN, a restart above the NAKed PSN), seen
    less than the shortest ACK timer before them, give or take the clock's slack. Were
    that taker more of its run, or its other reading, the NAK would still be open, and
    the restart, which a NIC sends at a NAK's PSN as its timer does, an answer as prompt
    as answers come: a jittery clock stretches a round trip's silence to the timer's."""
    ks = np.flatnonzero((trigger == "timeout") & (e["nak_ev"] < 0) & (e["own_nak_seen"] == 1))
    out = np.zeros(len(e), bool)
    if not len(ks):
        return out
    c = x.conv
    takers = np.flatnonzero(in_doubt & (e["nak_ev"] >= 0) & (e["nak_kind"] == NAK))
    for k in ks.tolist():  # such timeouts are few
        mine = takers[
            (e["conv"][takers] == e["conv"][k]) & (e["nak_ext"][takers] == e["start_ext"][k])
        ]
        wait = c.ts[e["first_ev"][k]] - c.ts[e["nak_ev"][mine]] - x.paused_ns[k]
        before = e["nak_ev"][mine] < e["first_ev"][k]  # capture order: a cause comes first
        out[k] = bool((before & (wait - x.tol.slack_ns < MIN_ACK_TIMEOUT_NS)).any())
    return out


def _dropped_nak_in_chain(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Per episode: a NAK's run, where the capture point drops frames (capture_drops),
    holding a resend of PSN p (not its first) between the responder's NAKs of p - 1 (its
    last before) and of p + 1 (its next after), that one seen sooner after the resend than
    the path's shortest round trip (cn.shortest_acks, plus the slack; any time where none
    is measured): the responder sent it before the run's resends reached it, so no loss of
    the run's own drew it. That responder NAKed each PSN in turn as it came to expect it
    (copies out of order kept reaching it), so it may have NAKed p too, and the capture
    point dropped that NAK: a NIC restarts at a NAK's PSN, which is the run's next alike,
    so the resend may answer that NAK and the run from there be another episode, whose
    NAK the capture never saw. Which NAK the run answers is open."""
    out = np.zeros(len(e), bool)
    c = x.conv
    if not (trigger == "nak").any() or not capture_drops(c):
        return out
    naks = np.flatnonzero(c.kind == NAK)
    ev = np.flatnonzero((c.kind == REQUEST) & ((c.flags & cn.RESENT) > 0) & (c.episode >= 0))
    ep = c.episode[ev].astype(np.int64)
    at = np.searchsorted(naks, ev)  # events run by conversation, then in capture order
    keep = (trigger[ep] == "nak") & (e["first_ev"][ep] != ev) & (at > 0) & (at < len(naks))
    ev, ep, at = ev[keep], ep[keep], at[keep]
    before, after = naks[at - 1], naks[at]
    same = (c.conv[before] == c.conv[ev]) & (c.conv[after] == c.conv[ev])
    chain = (c.ext[before] == c.ext[ev] - 1) & (c.ext[after] == c.ext[ev] + 1)
    trip = cn.shortest_acks(c)[c.conv[ev]]
    unanswered = (trip < 0) | (c.ts[after] - c.ts[ev] < trip + x.tol.slack_ns)
    out[ep[same & chain & unanswered]] = True
    return out


def _timer_cannot_start_there(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Timeouts that resend a PSN the capture showed acknowledged before, where a timer's
    restart needs more resends lost in a row before the capture point than the path ever
    lost (longest_loss). An ACK timer's restart begins at the first PSN the sender had not
    had acknowledged: the responder's acknowledgements it had are among those this capture
    point saw (unless it drops frames), so with the one of this PSN lost on the way, the
    restart began at most right above the highest seen below it, its resends up to here
    lost (a go-back-0's, from that PSN's message's first, more). The resend may be another
    run's, held (the tail of a selective repeat that a PFC pause the capture point does
    not see kept back): its cause is open."""
    out = np.zeros(len(e), bool)
    c = x.conv
    ks = np.flatnonzero(trigger == "timeout")
    if not len(ks) or capture_drops(c):
        return out
    ev = np.flatnonzero(np.isin(c.kind, cn.RESPONSE_KINDS))
    level = c.ext[ev] - np.isin(c.kind[ev], (NAK, RNR_NAK))
    longest = longest_loss(c)
    for k in ks.tolist():  # timeouts are few
        seen = level[(c.conv[ev] == e["conv"][k]) & (ev < e["first_ev"][k])]
        start = int(e["start_ext"][k])
        below = seen[seen < start]
        if seen.max(initial=start - 1) < start or not len(below):
            continue
        lost = start - 1 - int(below.max())
        out[k] = lost >= 2 and lost > longest[e["conv"][k]]
    return out


def _above_nak_or_dropped_nak(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Per episode: a NAK's run that begins at the PSN after the one its NAK asked for
    (above_nak), that NAK the next in a chain (the conversation's NAK before it was of the
    PSN before its), where the capture point drops frames (capture_drops) or saw no
    request lost before it (there, read as that NAK's go-back-N, the run's first resend
    went missing only by the capture point dropping it: it drops frames either way). A
    responder NAKing PSN after PSN as its expected PSN advances (copies out of order kept
    reaching it) would NAK the run's first PSN next, and a NIC restarts at a NAK's PSN: the
    run may answer that NAK, which the capture point dropped, rather than the seen NAK
    with its first resend lost. Which NAK the run answers is open."""
    c = x.conv
    ks = np.flatnonzero(above_nak(e) & (trigger == "nak") & (e["start_ext"] == e["nak_ext"] + 1))
    out = np.zeros(len(e), bool)
    if not len(ks):
        return out
    naks = np.flatnonzero(c.kind == NAK)  # events run by conversation, then in capture order
    at = np.searchsorted(naks, e["nak_ev"][ks])
    before = naks[np.maximum(at - 1, 0)]
    chain = (at > 0) & (c.conv[before] == e["conv"][ks]) & (c.ext[before] == e["nak_ext"][ks] - 1)
    ks = ks[chain]
    if len(ks) and not capture_drops(c):
        ks = ks[~x.losses_upstream[e["conv"][ks]]]
    out[ks] = True
    return out


def _sooner_than_answers(x: Context, e: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """Lone resends of a PSN the run right before them passed over, taking a NAK
    (cn.lone_passed_over), sooner after it than the path's shortest answer (plus the clock
    slack), or on a path whose answers the capture never timed: that run's copy may have
    been held on the way (a path that reorders) rather than lost, and this resend be that
    copy, late, not the NAK's answer (an RNR NAK's retry run's copy, say, read as the
    answer to the NAK of the hole it left). Only the time from the NAK tells the two
    apart."""
    c = x.conv
    floor = cn.path_floor(c, e["conv"])
    return cn.lone_passed_over(c) & ((floor < 0) | (wait + x.tol.slack_ns < floor))


def _copy_of_another_cause(
    x: Context,
    e: np.ndarray,
    trigger: np.ndarray,
    certainty: np.ndarray,
    copy_of_run: np.ndarray,
) -> np.ndarray:
    """Of the lone resends that may be the run right before them's copy (`copy_of_run`,
    _sooner_than_answers), those whose run is no NAK's surely (an RNR NAK's retry, a
    timer's, of open cause, or a NAK's open), or that took an RNR NAK: their trigger is
    open. Where both are surely a NAK's, the trigger is a NAK either way, and only which
    NAK is open: the run's joins the resend's (`x.near`)."""
    ks = np.flatnonzero(copy_of_run)
    prev = np.maximum(ks - 1, 0)
    by_nak = (trigger[prev] == "nak") & (e["nak_ev"][prev] >= 0) & (trigger[ks] == "nak")
    by_nak &= certainty[prev] != UNCERTAIN
    for k, n in zip(ks[by_nak].tolist(), e["nak_ev"][prev[by_nak]].tolist(), strict=True):
        x.near[k] = sorted({*x.near.get(k, []), int(n)})
    out = np.zeros(len(e), bool)
    out[ks[~by_nak]] = True
    return out


def _answerable_naks(
    x: Context, e: np.ndarray, asked: dict[int, list[int]]
) -> dict[int, list[int]]:
    """Per run of `asked` (NAK events of PSNs it resent after its first), those some resend
    of their PSN in the run came at least the path's shortest NAK answer after, less the
    slack (any, where the path shows no answer): a NAK's answer reaches the capture point
    no sooner than that after the NAK, wherever it stands (the NAK goes to the sender and
    the answer comes back), so a sooner resend is no answer of it but the run's own."""
    c, slack = x.conv, x.tol.slack_ns
    floor = cn.path_floor(c, e["conv"])
    out: dict[int, list[int]] = {}
    for k, naks in asked.items():
        lo, hi = int(e["first_ev"][k]), int(e["last_ev"][k])
        resends = np.flatnonzero(c.episode[lo : hi + 1] == k) + lo
        out[k] = [
            n
            for n in naks
            if floor[k] < 0
            or (
                c.ts[resends[(resends > n) & (c.ext[resends] == c.ext[n])]] - c.ts[n] + slack
                >= floor[k]
            ).any()
        ]
    return out


def _unanswered_naks(
    e: np.ndarray, certainty: np.ndarray, asked: dict[int, list[int]]
) -> dict[int, list[int]]:
    """Per episode of `asked` (the NAK events of PSNs it resent after its first), those no
    earlier episode took as its certain trigger: a NIC answers a NAK once, so a NAK an
    earlier run surely answered is no cause of a resend in this one."""
    taken = {int(n): j for j, n in enumerate(e["nak_ev"].tolist()) if n >= 0}
    return {
        k: [n for n in naks if not (taken.get(n, k) < k and certainty[taken[n]] == CERTAIN)]
        for k, naks in asked.items()
    }


def _reissue_may_answer_open_nak(
    c: cn.Conversations, e: np.ndarray, which: np.ndarray, certainty: np.ndarray
) -> np.ndarray:
    """Per READ asked again (`which`): was a NAK or RNR NAK of a PSN below it seen since
    the conversation's last new data, every PSN from there up to the READ acknowledged
    before it was asked again, and that NAK taken by no episode whose trigger stands? That
    NAK's go-back-N, overtaken by the acknowledgement up to the READ, resends the READ
    first: a re-issue or that NAK's answer, the capture cannot tell."""
    out = np.zeros(len(e), bool)
    ks = np.flatnonzero(which & (e["acked"] >= e["start_ext"] - 1))
    if not len(ks):
        return out
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    stands = e["nak_ev"][(certainty != UNCERTAIN) & (e["nak_ev"] >= 0)]
    naks = naks[~np.isin(naks, stands)]
    new = np.flatnonzero((c.flags & cn.NEW) != 0)
    for k in ks.tolist():  # READs asked again with an acknowledgement up to them: few
        first, conv = int(e["first_ev"][k]), int(e["conv"][k])
        before = new[(new < first) & (c.conv[new] == conv)]
        since = int(before[-1]) if len(before) else -1
        open_naks = naks[(naks > since) & (naks < first) & (c.conv[naks] == conv)]
        out[k] = bool((c.ext[open_naks] < e["start_ext"][k]).any())
    return out


def _reissue_as_repeat_tail(c: cn.Conversations, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Per READ asked again (a re-issue's reading) whose first PSN is the newest sent, right
    after a resend of another PSN that a NAK asked for before it (repeat_tail_naks): a
    selective repeat resends its NAKed PSN and then the newest packet sent, which is this
    READ request, so the READ may be that NAK's repeat going on rather than a re-issue for
    responses lost after the capture point. Trigger and mode are open: the capture shows
    the same request either way."""
    asked_again = read_reissue(e) & (trigger == "read_reissue")
    return among(len(e), repeat_tail_naks(c, e, asked_again)) & asked_again


def _after_reordering(x: Context, e: np.ndarray) -> np.ndarray:
    """Episodes of a conversation that showed a late original: this capture point is after
    a stage of the path that reorders, where arrival order is not send order. A resend may
    arrive long after the NAK it answers and after later NAKs, and a run's copies out of
    their order, so which NAK an episode answers and its mode, both read from the order of
    arrivals, are open (which copy of a PSN is the original may be too: late_copies.late_frames)."""
    if len(x.reorders) == 0:
        return np.zeros(len(e), bool)
    return x.reorders[e["conv"]]


def _lost_wire_ns(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Per run of `which` (above its NAKed PSN, above_nak), the wire time, at least, of
    the resends it lost before the capture point (from the NAKed PSN up to its first seen,
    each as long as its original, at the link speed the capture shows; 0 where none is
    known): a run goes back to back, so it began at least that long before its first resend
    seen."""
    out = np.zeros(len(e), np.int64)
    ks = np.flatnonzero(which)
    if not len(ks) or not x.tol.link_bps:
        return out
    requests = requests_by_psn(x)
    for k in ks.tolist():  # such runs are few
        conv, lo, hi = int(e["conv"][k]), int(e["nak_ext"][k]), int(e["start_ext"][k])
        out[k] = int(x.tol.frame_ns(requests.wire_between(conv, lo - 1, hi)))
    return out


def _held_runs(x: Context, e: np.ndarray, trigger: np.ndarray, certainty: np.ndarray) -> None:
    """Runs split off for a silence alone (unseen_pause) where the ACK timer cannot have
    fired by then (the silence plus a round trip short of the timeout the capture's own
    timeouts measure): a NIC resends only for a NAK, a timer or a run it goes on with, and
    the capture shows no NAK for it, so it is the run it went on from, held by a PFC pause
    this capture point does not see. It takes that run's trigger (likely at most: the
    pause is not seen), where the run's is a NAK's or an RNR NAK's and not open. In
    episode order, so a run held twice takes its first part's. `x.held_of` keeps, per
    episode so read, that run (-1: none)."""
    for k in np.flatnonzero(x.held_of >= 0).tolist():  # such runs are few
        run = int(x.held_of[k])
        if trigger[run] not in ("nak", "rnr") or certainty[run] == UNCERTAIN:
            x.held_of[k] = -1
            continue
        trigger[k] = trigger[run]
        certainty[k] = LIKELY if certainty[run] == CERTAIN else certainty[run]
