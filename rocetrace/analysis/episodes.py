"""Retransmission episodes: what triggered each and how the NIC resent, with the evidence and
how certain the capture makes each answer (docs/analysis.md gives every rule).

The state machine (connection.py) found the episodes and the protocol facts around each:
the NAK it answers, what had been sent and acknowledged, the shape of the resent PSNs. Here
those facts are weighed with the capture's own clock (tolerances.py) and its PFC pauses.
Each answer is `certain` (the capture excludes every alternative), `likely` (an
alternative needs something the capture shows no sign of, or the answer comes from the
same NIC's certain episodes: the recovery policy is a NIC setting) or `uncertain`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.nic_context import NO_MARGIN, NicContext
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    PFC,
    POS_FIRST,
    POS_LAST,
    POS_MIDDLE,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    Prepared,
)
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS, Tolerances
from rocetrace.dissectors.aeth import RNR_TIMER_US
from rocetrace.psn import PSN_MOD

CERTAIN, LIKELY, UNCERTAIN = "certain", "likely", "uncertain"
CERTAINTIES = (CERTAIN, LIKELY, UNCERTAIN)
TRIGGERS = ("nak", "rnr", "timeout", "read_reissue", "unknown")
MODES = ("go-back-n", "go-back-0", "selective-repeat")
READ_REQUEST_OP = 0x0C
ACK_TIMEOUT_UNIT_S = 4.096e-6
SEND_OPS = range(0x00, 0x06)  # SEND FIRST .. SEND ONLY WITH IMMEDIATE (low 5 bits)

EPISODE_COLUMNS = [
    "flow_id", "src_ip", "dst_ip", "dest_qp", "ts", "ts_ns", "trigger", "trigger_certainty",
    "nak_psn", "nak_frame", "nak_frames", "start_psn", "last_psn", "packets", "mode",
    "mode_certainty", "delay_s", "first_frame", "evidence_frames", "nak_latency_ns",
    "retransmission_latency_ns", "silence_ns", "paused_ns", "resumed", "late_frames",
]  # fmt: skip


@dataclass
class Context:
    """What the rules read besides the episode records; `nic`, the capture's NIC context
    when the episodes are a partition's (None: this table's own, made as it is weighed)."""

    conv: cn.Conversations
    pp: Prepared
    model: FlowModel
    tol: Tolerances
    paused_ns: np.ndarray  # per episode: PFC pause of its priority while it waited
    losses_upstream: np.ndarray  # per conversation: the capture saw requests lost before it
    nic: NicContext | None = None
    # per conversation: the capture saw a late original (F_REORDER), so this capture point
    # is after a stage of the path that reorders (_after_reordering)
    reorders: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    seen: dict[str, object] = field(default_factory=dict)  # this table's own NicContext parts
    # per episode: the run its first resend may continue instead (-1 none; _either_run)
    alt: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # per split that may continue either of two runs: the second (-1 none; _second_run)
    alt2: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # per episode in a run that went on through a PSN soon after its NAK: those NAK events
    near: dict[int, list[int]] = field(default_factory=dict)
    # per episode: a run resumed after a split in doubt whose trigger that leaves open
    split_open: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per restart that takes a NAK a split in doubt took (_claim_taken_naks): those NAKs
    claimed: dict[int, list[int]] = field(default_factory=dict)
    # those claims made by a selective repeat's shape (_repeat_of_own_psn)
    claimed_repeat: set[int] = field(default_factory=set)
    # per episode: a go-back-0 reading beside a NAK of its own first PSN that a clean
    # answer of another episode took (_own_nak_answered)
    own_answered: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per such go-back-0 reading: the episodes that took those NAKs (_own_nak_takers)
    own_takers: dict[int, np.ndarray] = field(default_factory=dict)
    # per episode: a go-back-0 reading beside a NAK of its own first PSN on a NIC that shows
    # selective repeat, which takes that NAK instead (_own_nak_on_repeat_nic)
    own_repeat: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per episode: the run it is, held by a PFC pause this capture point does not see, where
    # no timer can have fired by then (-1 none; _unseen_pause, _held_runs)
    held_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # the requests sorted by conversation and PSN, built when first needed (_requests_by_psn)
    requests: _RequestsByPsn | None = None
    # the progress events in _timer_progress's two readings, built when first needed
    # (_timer_armed_before: the slow answers and the timeouts' bounds both read them)
    timer_progress: tuple[np.ndarray, np.ndarray] | None = None


def _among(n: int, episodes: Iterable[int]) -> np.ndarray:
    """A mask over `n` episodes, true at those listed (the keys of `x.near`, `x.claimed`)."""
    out = np.zeros(n, bool)
    out[list(episodes)] = True
    return out


def _ts(c: cn.Conversations, ev: np.ndarray) -> np.ndarray:
    """Timestamps of events; events -1 read as the int64 minimum's neighbourhood (absent)."""
    return np.where(ev >= 0, c.ts[np.maximum(ev, 0)], np.iinfo(np.int64).min // 4)


def _read_reissue(e: np.ndarray) -> np.ndarray:
    """A READ request asked again, with no NAK to answer: the requester re-issued the READ
    from a response it is missing."""
    return (e["read_ev"] >= 0) & ((e["start_opcode"] & 0x1F) == READ_REQUEST_OP) & (e["nak_ev"] < 0)


def _triggers(x: Context, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each episode's trigger and its certainty. The cause the capture shows (a NAK, or a
    later READ response that revealed a missing one) is taken when the resend came within
    the shortest ACK timer of it; a slower resend may instead be the timer's, when the
    cause never reached the sender (_slow_answers)."""
    c, slack = x.conv, x.tol.slack_ns
    t0 = c.ts[e["first_ev"]]
    silence = t0 - _ts(c, e["prev_req_ev"])
    timer = silence >= MIN_ACK_TIMEOUT_NS - slack
    has_nak = e["nak_ev"] >= 0
    later = _read_reissue(e) & (e["resp_hi"] > e["start_ext"])
    cause = np.where(has_nak, e["nak_ev"], np.where(later, e["resp_hi_ev"], -1))
    wait = t0 - _ts(c, cause) - x.paused_ns
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
    above = _above_nak(e)
    certainty[above & (certainty == CERTAIN)] = LIKELY
    certainty[above & _right_after_no_cause(e, trigger)] = UNCERTAIN
    since = t0 - c.ts[_progress_before(c, e["conv"], e["first_ev"])]
    lost = _lost_wire_ns(x, e, above)  # the retry began before its first resend seen
    rnr_early, rnr_on_time = _rnr_timing(x, e, trigger, wait - lost)  # early: not by wait
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
    doubt = _split_at_the_floor(x, e, wait)
    # a resend kept in the run whose NAK a split in doubt took: were that split more of its
    # run, the NAK would have split this one; so too a NAK a go-back-0 reading beside a NAK
    # of its own first PSN took (were that restart the other NAK's answer)
    taker = e["taken_split"]
    t = np.maximum(taker, 0)
    below_own = has_nak & (e["start_ext"] < e["nak_ext"]) & (e["own_nak_seen"] == 1)
    x.own_answered = _own_nak_answered(x, e, below_own, wait)
    gb0_taker = (below_own[t] & ~x.own_answered[t]) | x.own_repeat[t]
    # or a restart above its NAKed PSN took it (its first resends lost): a later resend of
    # exactly that PSN may be that NAK's answer instead
    above_taker = _above_nak(e)[t]
    taken = (taker >= 0) & ((doubt[t] & (e["alt_of"][t] != -1)) | gb0_taker | above_taker)
    # a resend kept in the run not much after a NAK of its own PSN, or whose NAK a split in
    # doubt took: it may be that NAK's answer, and the run from there another episode; the
    # trigger is a NAK either way (only which NAK frame is open, _nak_frames), unless an
    # RNR NAK is among them
    two_ways = (e["near_split"] == 1) | taken
    x.near = _near_naks(c, e, two_ways)
    for k, naks in x.claimed.items():  # a restart that took a split's NAK: those NAKs too
        if k in x.near or not two_ways[k]:
            x.near[k] = sorted({*x.near.get(k, []), *naks})
    for k, naks in _repeat_tail_naks(c, e).items():  # a selective repeat's second resend
        x.near[k] = sorted({*x.near.get(k, []), *naks})
    copy_of_run = _sooner_than_answers(x, e, wait)
    certainty[_copy_of_another_cause(x, e, trigger, certainty, copy_of_run)] = UNCERTAIN
    kept = _among(len(e), x.near) & (e["nak_kind"] == NAK)
    x.split_open = _resumed_after_split(x, e) == -1
    open_split = x.split_open | (two_ways & ~kept)
    certainty[open_split] = UNCERTAIN
    # a restart for a NAK the open run's resend of that PSN may have answered: that reading
    # leaves the restart no cause (no NAK, no timer, no run to resume), which needs a NAK
    # the capture did not show
    certainty[(e["near_taken"] == 1) & (certainty == CERTAIN)] = LIKELY
    claimed = _among(len(e), x.claimed)
    certainty[claimed & (certainty == CERTAIN)] = LIKELY
    # a go-back-0 reading beside a NAK of its own PSN: open, unless another episode's clean
    # answer took that NAK (the other reading leaves that episode no cause), likely
    certainty[below_own & ~x.own_answered] = UNCERTAIN
    certainty[below_own & x.own_answered & (certainty == CERTAIN)] = LIKELY
    certainty[x.own_repeat & (certainty == CERTAIN)] = LIKELY  # _own_nak_on_repeat_nic
    slow = (cause >= 0) & (wait >= MIN_ACK_TIMEOUT_NS - slack)
    # a timer's run that skipped forward onto a PSN a NAK had asked for: that resend may be
    # the NAK's selective answer, another episode (a NIC answers a NAK inside a run)
    skipped = np.flatnonzero((trigger == "timeout") & (e["skips"] > 0))
    asked = _near_naks(c, e, _among(len(e), skipped))
    unanswered = _unanswered_naks(e, certainty, asked)
    certainty[[k for k in skipped.tolist() if unanswered.get(k, True)]] = UNCERTAIN  # RNR
    weighed = (trigger == "timeout") & (certainty != UNCERTAIN)
    x.seen["timer_ns"] = _timeout_silence(x, e, trigger, certainty)
    if slow.any():
        _slow_answers(x, e, slow, cause, wait, trigger, certainty, rnr_on_time)
    _dropped_nak(x, e, weighed & (certainty == UNCERTAIN), trigger, certainty)
    # sooner after its RNR NAK than the timer that NAK names: no retry of it
    certainty[rnr_early] = UNCERTAIN
    _unseen_pause(x, e, (e["start_kind"] == cn.START_TIMER) & (trigger == "timeout"), certainty)
    x.alt2 = _second_run(e, doubt)
    x.alt = _either_run(e, doubt, trigger, certainty, x.alt2)
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
    certainty[_after_reordering(x, e)] = UNCERTAIN  # last: whatever the rules above read
    certainty[_original_open(x, e)] = UNCERTAIN
    return trigger, certainty


def _dropped_nak_in_chain(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Per episode: a NAK's run, where the capture point drops frames (_capture_drops),
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
    if not (trigger == "nak").any() or not _capture_drops(c):
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


def _right_after_no_cause(e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Episodes right after a restart of no cause in their conversation (no NAK, sooner
    than any timer: `trigger` unknown), no request between. A NIC goes back only for a NAK,
    a timer or a run it resumes: such a restart shows copies arriving out of place (a path
    that reorders, or a NAK the capture point missed), and the run after it may be more of
    them, an earlier run's copies, late, rather than an answer of its own."""
    out = np.zeros(len(e), bool)
    ks = np.flatnonzero(e["conv"][1:] == e["conv"][:-1]) + 1
    prev = ks - 1
    out[ks] = (trigger[prev] == "unknown") & (e["prev_req_ev"][ks] == e["last_ev"][prev])
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
    after a resend of another PSN that a NAK asked for before it (_repeat_tail_naks): a
    selective repeat resends its NAKed PSN and then the newest packet sent, which is this
    READ request, so the READ may be that NAK's repeat going on rather than a re-issue for
    responses lost after the capture point. Trigger and mode are open: the capture shows
    the same request either way."""
    asked_again = _read_reissue(e) & (trigger == "read_reissue")
    return _among(len(e), _repeat_tail_naks(c, e, asked_again)) & asked_again


def _original_open(x: Context, e: np.ndarray) -> np.ndarray:
    """Episodes holding a copy the state machine flagged OPEN: a lone first copy of a
    skipped PSN that took its NAK, and a later restart that would answer that NAK were the
    copy the original, late, but that a timer may have caused. Which copy was the original,
    and so which NAK each answers, the capture cannot tell."""
    c = x.conv
    ev = np.flatnonzero(((c.flags & cn.OPEN) > 0) & (c.episode >= 0))
    out = np.zeros(len(e), bool)
    out[c.episode[ev]] = True
    return out


def _after_reordering(x: Context, e: np.ndarray) -> np.ndarray:
    """Episodes of a conversation that showed a late original: this capture point is after
    a stage of the path that reorders, where arrival order is not send order. A resend may
    arrive long after the NAK it answers and after later NAKs, and a run's copies out of
    their order, so which NAK an episode answers and its mode, both read from the order of
    arrivals, are open (which copy of a PSN is the original may be too: _late_or_resent)."""
    if len(x.reorders) == 0:
        return np.zeros(len(e), bool)
    return x.reorders[e["conv"]]


def _lost_wire_ns(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Per run of `which` (above its NAKed PSN, _above_nak), the wire time, at least, of
    the resends it lost before the capture point (from the NAKed PSN up to its first seen,
    each as long as its original, at the link speed the capture shows; 0 where none is
    known): a run goes back to back, so it began at least that long before its first resend
    seen."""
    out = np.zeros(len(e), np.int64)
    ks = np.flatnonzero(which)
    if not len(ks) or not x.tol.link_bps:
        return out
    requests = _requests_by_psn(x)
    for k in ks.tolist():  # such runs are few
        conv, lo, hi = int(e["conv"][k]), int(e["nak_ext"][k]), int(e["start_ext"][k])
        out[k] = int(x.tol.frame_ns(requests.wire_between(conv, lo - 1, hi)))
    return out


def _held_runs(x: Context, e: np.ndarray, trigger: np.ndarray, certainty: np.ndarray) -> None:
    """Runs split off for a silence alone (_unseen_pause) where the ACK timer cannot have
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


def _own_nak_takers(x: Context, e: np.ndarray, ks: np.ndarray) -> dict[int, np.ndarray]:
    """Per episode k of `ks`: the episodes that took the NAKs (and RNR NAKs) of its first
    PSN seen before its first resend, -1 for one no episode took. The NAKs are grouped by
    conversation and PSN once (a livelock may restart thousands of times)."""
    if not len(ks):
        return {}
    taker = np.full(len(x.conv.kind), -1, np.int64)
    took = np.flatnonzero(e["nak_ev"] >= 0)
    taker[e["nak_ev"][took]] = took
    return {k: taker[own] for k, own in _own_naks(x.conv, e, ks).items()}


def _own_naks(c: cn.Conversations, e: np.ndarray, ks: np.ndarray) -> dict[int, np.ndarray]:
    """Per episode k of `ks`: the events of the NAKs (and RNR NAKs) of its first PSN seen
    before its first resend. The NAKs are grouped by conversation and PSN once (a livelock
    may restart thousands of times)."""
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    of_psn = pd.Series(naks).groupby([c.conv[naks], c.ext[naks]]).indices
    out = {}
    for k in ks.tolist():
        own = naks[of_psn.get((int(e["conv"][k]), int(e["start_ext"][k])), [])]
        out[k] = own[own < e["first_ev"][k]]
    return out


def _own_nak_answered(
    x: Context, e: np.ndarray, below_own: np.ndarray, wait: np.ndarray
) -> np.ndarray:
    """Restarts below their NAKed PSN (a go-back-0 reading) beside a NAK of their own first
    PSN, where each such NAK was taken by another episode's clean answer: a NAK (no RNR NAK)
    answered sooner than any timer, by a run no split, resumption or other NAK puts in doubt,
    itself no such reading. Were the restart that NAK's answer instead, the other episode
    would have no cause (a NIC goes back only for a NAK, a timer or a run it resumes, and a
    NIC answers a NAK once), which needs a NAK the capture did not show."""
    out = np.zeros(len(e), bool)
    clean = (e["nak_kind"] == NAK) & (wait < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns)
    clean &= (e["alt_of"] == -1) & (e["nak_early"] == 0) & (e["near_taken"] == 0)
    clean &= (e["near_split"] == 0) & (e["taken_split"] < 0) & (e["cut_by_split"] == 0)
    clean &= ~below_own
    clean &= (e["orig_ev"] >= 0) | (e["n_resent"] >= 2)  # a lone first copy: maybe reordered
    x.own_takers = _own_nak_takers(x, e, np.flatnonzero(below_own))
    for k, takers in x.own_takers.items():
        out[k] = len(takers) > 0 and bool(((takers >= 0) & (takers != k)).all())
        out[k] &= bool(clean[np.maximum(takers, 0)].all())
    return out


def _claim_taken_naks(x: Context, e: np.ndarray) -> np.ndarray:
    """Restarts (the PSN went back) with no NAK of their own PSN left, because splits in
    doubt (_either_run) took every one: were each such split its NAK's answer, the restart
    would have no cause, and a NIC goes back only for a NAK, a timer or a run it resumes.
    With no silence a timer needs, and no run it may resume (one cut since the last new
    data that stopped at or below its PSN, with no SEND resend since: a SEND's run goes
    back, which ends every run before it) or a selective repeat's shape no run resumed
    makes (_repeat_of_own_psn), the restart answers those NAKs (each claimed by it alone)
    and the splits are more of their runs. Returns the episode records with
    such a restart's NAK filled in (a copy), `x.claimed` listing its NAK events."""
    x.claimed, x.claimed_repeat = {}, set()
    cand = (e["start_kind"] == cn.START_RESTART) & (e["nak_ev"] < 0) & (e["own_nak_seen"] == 1)
    if not cand.any():
        return e
    c = x.conv
    t0 = c.ts[e["first_ev"]]
    wait = t0 - _ts(c, e["nak_ev"]) - x.paused_ns
    doubt = _split_at_the_floor(x, e, wait) & (e["alt_of"] != -1) & (e["nak_ev"] >= 0)
    timer = t0 - _ts(c, e["prev_req_ev"]) >= MIN_ACK_TIMEOUT_NS - x.tol.slack_ns
    sends = _sends_only(x, e)
    repeat = _repeat_of_own_psn(x, e, cand & ~timer)
    index = np.arange(len(e))
    claims: dict[int, np.ndarray] = {}
    for k in np.flatnonzero(cand & ~timer):  # such restarts are few
        same = (e["conv"] == e["conv"][k]) & (index < k)
        own = (e["nak_ext"] == e["start_ext"][k]) & (e["nak_ev"] < e["first_ev"][k])
        takers = same & doubt & own
        if not takers.any() or (e["nak_kind"][takers] != NAK).any():
            continue
        if repeat[k] or _resumes_no_run(e, int(k), sends):
            claims[int(k)] = e["nak_ev"][takers]
            if repeat[k]:
                x.claimed_repeat.add(int(k))
    taken = Counter(ev for evs in claims.values() for ev in evs.tolist())
    out = e.copy()
    for run, evs in claims.items():
        if any(taken[ev] > 1 for ev in evs.tolist()):  # claimed by two restarts: open
            continue
        out["nak_ev"][run], out["nak_ext"][run] = evs.max(), e["start_ext"][run]
        out["nak_kind"][run] = NAK
        x.claimed[run] = sorted(evs.tolist())
    return out


def reserved_naks(x: Context) -> np.ndarray:
    """Per event: a NAK that a split made for timing alone took (_split_for_timing) and a
    later selective repeat of its PSN claims (_claim_taken_naks, _repeat_of_own_psn: a NIC
    sends one only for a NAK of its first PSN, and answers a NAK once), so the split was
    more of its run; and, for a restart that claims NAKs splits in doubt took, those NAKs
    and the later ones its run answers in order (_naks_in_order), each marked
    ANSWERS_RESERVED at the resend that takes it. The state machine runs again with these
    NAKs left to their answers (connection.rerun); those stay likely (_cap_reserved)."""
    out = np.zeros(len(x.conv.kind), np.int8)
    e = x.conv.episodes
    if len(e):
        _claim_taken_naks(x, e)
        for k, evs in x.claimed.items():
            out[evs] = k in x.claimed_repeat
        out[e["nak_ev"][(e["nak_ev"] >= 0) & ~_split_for_timing(x, e)]] = 0
        wait = x.conv.ts[e["first_ev"]] - _ts(x.conv, e["nak_ev"]) - x.paused_ns
        doubt = _split_at_the_floor(x, e, wait) & (e["alt_of"] != -1) & (e["nak_ev"] >= 0)
        for k, evs in x.claimed.items():
            if k in x.claimed_repeat:
                continue
            chain = _naks_in_order(x, e, k, doubt)
            if chain:  # the run repeats the splits' PSNs, one NAK each, in their order
                out[evs] = RESERVED_NAK
            for naks, resend in chain:
                out[naks], out[resend] = RESERVED_NAK, ANSWERS_RESERVED
        for nak, resend in _answered_after_an_older_nak(x, e):
            out[nak], out[resend] = RESERVED_NAK, ANSWERS_RESERVED
    return out


RESERVED_NAK, ANSWERS_RESERVED = 1, 2  # reserved_naks: a NAK left; the resend that takes it


def _naks_in_order(
    x: Context, e: np.ndarray, k: int, doubt: np.ndarray
) -> list[tuple[list[int], int]]:
    """Restart k answers NAKs of its PSN that splits in doubt took (x.claimed): those splits
    were more of their runs. A NIC answers NAKs in the order they reach it, the capture's
    order on one path, so every NAK after those was answered no sooner than k, and the
    splits in doubt that took one before k were more of their runs too. Where k's run goes
    on back to back through the next PSNs, each NAKed after the claimed NAK and before k
    (NAKs only, each taken by such a split) and resent nowhere after it, that resend is the
    only answer left to those NAKs: they are left to it (connection.rerun), where it splits
    k's run. The chain stops at the first PSN that fails. Returns (NAK events, resend
    event) pairs."""
    c = x.conv
    lo, hi = int(e["first_ev"][k]), int(e["last_ev"][k])
    end = int(np.searchsorted(c.conv, c.conv[lo], side="right"))  # grouped by conversation
    naks = np.flatnonzero(np.isin(c.kind[:lo], (NAK, RNR_NAK)))
    naks = naks[(naks > max(x.claimed[k])) & (c.conv[naks] == c.conv[lo])]
    taker = dict(zip(e["nak_ev"].tolist(), range(len(e)), strict=True))
    out: list[tuple[list[int], int]] = []
    prev = lo
    for r in (np.flatnonzero(c.episode[lo + 1 : hi + 1] == k) + lo + 1).tolist():
        p = int(c.ext[r])
        if p != c.ext[prev] + 1 or (c.kind[prev + 1 : r] == REQUEST).any():
            break  # not the run going on alone, back to back
        prev = r
        if ((c.kind[r + 1 : end] == REQUEST) & (c.ext[r + 1 : end] == p)).any():
            break  # resent again later: which copy answers the NAK is open
        own = naks[c.ext[naks] == p]
        if not len(own) or (c.kind[own] != NAK).any():
            break
        if not all(n in taker and doubt[taker[n]] for n in own.tolist()):
            break  # a NAK no split in doubt took: answered elsewhere, or open
        out.append((own.tolist(), r))
    return out


def _answered_after_an_older_nak(x: Context, e: np.ndarray) -> list[tuple[int, int]]:
    """Splits in doubt (_split_at_the_floor: the split may be more of the run it cut) made
    before the answer to an older NAK: a NIC answers NAKs in the order they reach it, the
    capture's order on one path, so a NAK seen after one answered only after the split is
    answered later still, and the split that took it was more of its run. That older
    answer is an episode of its own at exactly its NAK's PSN (_clean_answers), or a restart
    whose every cause is older (_restart_of_older_naks). The NAK is left to the first
    resend of its PSN from that answer on. Returns (NAK event, resend event) pairs."""
    c = x.conv
    wait = c.ts[e["first_ev"]] - _ts(c, e["nak_ev"]) - x.paused_ns
    doubt = _split_at_the_floor(x, e, wait) & (e["alt_of"] != -1)
    splits = np.flatnonzero(doubt & (e["nak_ev"] >= 0) & (e["nak_kind"] == NAK))
    if not len(splits):
        return []
    resent = np.flatnonzero((c.kind == REQUEST) & ((c.flags & cn.RESENT) > 0))
    clean = np.flatnonzero(_clean_answers(x, e, resent))
    clean = clean[np.argsort(e["first_ev"][clean], kind="stable")]
    restarts = _OlderRestarts.of(x, e, splits)
    out = []
    for s in splits.tolist():  # splits in doubt: a NAK storm's few
        conv, nak = e["conv"][s], e["nak_ev"][s]
        after = clean[np.searchsorted(e["first_ev"][clean], e["first_ev"][s], side="right") :]
        after = after[(e["conv"][after] == conv) & (e["nak_ev"][after] < nak)]
        start = int(e["first_ev"][after[0]]) if len(after) else restarts.first_after(s)
        if start < 0 or not _run_resent_between(x, e, s, start, restarts.naks):
            continue
        a, b = np.searchsorted(resent, [start, np.searchsorted(c.conv, conv, side="right")])
        later = resent[a:b][c.ext[resent[a:b]] == e["start_ext"][s]]
        if len(later):
            out.append((int(nak), int(later[0])))
    return out


def _run_resent_between(x: Context, e: np.ndarray, s: int, start: int, naks: np.ndarray) -> bool:
    """Between split s and event `start` (the older NAK's answer), a resend below the newest
    PSN sent of a PSN no NAK seen before it asked for: a run's (a go-back-N's, or a timer's),
    no selective repeat's. A NIC whose selective repeat for s's NAK cut short the answer to
    an older NAK before its first resend may go on with that answer right after the repeat,
    which would look like the older NAK answered after s; a run's resend between them
    shows the sender doing more than that repeat."""
    c = x.conv
    lo = int(e["first_ev"][s]) + 1
    ev = np.arange(lo, start)
    ev = ev[(c.kind[ev] == REQUEST) & ((c.flags[ev] & cn.RESENT) > 0)]
    ev = ev[c.ext[ev] < e["last_sent_first"][s]]
    if not len(ev):
        return False
    a, b = np.searchsorted(naks, [np.searchsorted(c.conv, e["conv"][s]), start])
    asked = naks[a:b]
    # between a split and an answer: few resends
    return any(not (c.ext[asked[asked < r]] == c.ext[r]).any() for r in ev.tolist())


def _clean_answers(x: Context, e: np.ndarray, resent: np.ndarray) -> np.ndarray:
    """Episodes that can only be their NAK's answer: at exactly its PSN (after new data or
    going back), the only resend of that PSN since the NAK (events `resent`), sooner than
    the shortest ACK timer after the request before it, with no run they may continue and
    the NAK not there before the run they cut began."""
    c = x.conv
    t0 = c.ts[e["first_ev"]]
    clean = (e["nak_ev"] >= 0) & (e["nak_kind"] == NAK) & (e["start_ext"] == e["nak_ext"])
    clean &= np.isin(e["start_kind"], (cn.START_FIRST, cn.START_RESTART))
    clean &= (e["alt_of"] == -1) & (e["nak_early"] == 0) & (e["orig_ev"] >= 0)
    clean &= t0 - _ts(c, e["prev_req_ev"]) < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns
    for k in np.flatnonzero(clean).tolist():  # between a NAK and its answer: few resends
        a, b = np.searchsorted(resent, [e["nak_ev"][k] + 1, e["first_ev"][k]])
        if (c.ext[resent[a:b]] == e["start_ext"][k]).any():
            clean[k] = False  # another resend of that PSN since the NAK may answer it
    return clean


@dataclass
class _OlderRestarts:
    """Restarts that may answer only NAKs older than a split's (_restart_of_older_naks)."""

    x: Context
    e: np.ndarray
    cand: np.ndarray  # restarts with a NAK, no timer's silence, one run at most to resume
    naks: np.ndarray  # NAK and RNR NAK events
    nak_first: dict[int, int]  # per split: its NAK's message's first PSN
    sends: np.ndarray  # per episode: SEND resends only (_sends_only)

    @classmethod
    def of(cls, x: Context, e: np.ndarray, splits: np.ndarray) -> _OlderRestarts:
        c = x.conv
        quiet = c.ts[e["first_ev"]] - _ts(c, e["prev_req_ev"])
        cand = (quiet < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns) & (e["nak_ev"] >= 0)
        cand &= (e["start_kind"] == cn.START_RESTART) & (e["alt_of"] != -2) & (e["alt_lo"] < 0)
        cand_ev = np.flatnonzero(cand)
        cand_ev = cand_ev[np.argsort(e["first_ev"][cand_ev], kind="stable")]
        firsts = _message_first(x, e["nak_ev"][splits])
        return cls(
            x, e, cand_ev, np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK))),
            dict(zip(splits.tolist(), firsts.tolist(), strict=True)), _sends_only(x, e),
        )  # fmt: skip

    def first_after(self, s: int) -> int:
        """The first event of a restart after split s whose every cause answers a NAK older
        than s's, -1 none. A NIC goes back only for a NAK, a timer or a run it resumes: no
        silence a timer needs; no NAK seen after s's before it (its NAK is older), and s's
        NAK none of its (not of its PSN, nor inside the message it begins: a go-back-0);
        where it may resume a cut run, the split that last cut that run comes after s (in
        that reading that split answers its NAK, older too). Not on a conversation seen
        reordering."""
        x, e, c = self.x, self.e, self.x.conv
        conv, nak = int(e["conv"][s]), int(e["nak_ev"][s])
        if len(x.reorders) > conv and x.reorders[conv]:
            return -1
        at = int(np.searchsorted(e["first_ev"][self.cand], e["first_ev"][s], side="right"))
        for r in self.cand[at:].tolist():  # restarts after the split, until a NAK comes
            if e["conv"][r] != conv:
                break
            a, b = np.searchsorted(self.naks, [nak + 1, e["first_ev"][r]])
            if b > a:
                break  # a NAK after s's: it, or a later one, may be this restart's
            if e["start_ext"][r] in (c.ext[nak], self.nak_first[s]):
                continue
            runs = [int(e["alt_of"][r])] if e["alt_of"][r] >= 0 else self._resumable(r)
            if not all(self._cut_after(run, r, s) for run in runs):
                continue
            return int(e["first_ev"][r])
        return -1

    def _resumable(self, r: int) -> list[int]:
        """The runs restart r may resume as _resumes_no_run reads them: cut since the last
        new data, stopped at or below its PSN, with no SEND resend since."""
        e, index = self.e, np.arange(len(self.e))
        same = (e["conv"] == e["conv"][r]) & (index < r)
        runs = same & (e["sent_hi"] == e["sent_hi"][r]) & (e["cursor"] <= e["start_ext"][r])
        return [k for k in np.flatnonzero(runs).tolist() if not (same & self.sends)[k + 1 :].any()]

    def _cut_after(self, run: int, r: int, s: int) -> bool:
        """Did the split that last cut `run` before restart r come after split s?"""
        e = self.e
        asked = (e["start_kind"] == cn.START_ASKED) & (e["cut_of"] == run)
        cut = np.flatnonzero(asked & (e["first_ev"] < e["first_ev"][r]))
        return bool(len(cut)) and bool(e["first_ev"][cut].max() > e["first_ev"][s])


def _split_for_timing(x: Context, e: np.ndarray) -> np.ndarray:
    """Splits at a run's next PSN in doubt for timing alone: sooner after their NAK than
    the path's shortest answer plus the slack, the NAK not there before the run began (a
    chain of readings then, _either_run; and a restart's NAK stays its own)."""
    wait = x.conv.ts[e["first_ev"]] - _ts(x.conv, e["nak_ev"]) - x.paused_ns
    close = wait - cn.path_floor(x.conv, e["conv"]) < x.tol.slack_ns
    return (e["start_kind"] == cn.START_ASKED) & close & (e["nak_early"] == 0)


def _cap_reserved(
    x: Context, e: np.ndarray, certainty: np.ndarray, mode_certainty: np.ndarray
) -> None:
    """After a rerun (reserved_naks): the restart that took a reserved NAK is its answer,
    likely, not certain (the other reading needs a NAK the capture did not show); and
    every other run that resent that NAK's PSN after the NAK has its mode at most likely
    (were that resend the NAK's answer, the run would end before it)."""
    c = x.conv
    if not len(c.reserved) or not c.reserved.any():
        return
    reserved = c.reserved == RESERVED_NAK
    took = (e["nak_ev"] >= 0) & reserved[np.maximum(e["nak_ev"], 0)]
    certainty[took & (certainty == CERTAIN)] = LIKELY
    naks = np.flatnonzero(reserved)
    first = pd.Series(naks).groupby([c.conv[naks], c.ext[naks]]).min()
    resent = np.flatnonzero(c.episode >= 0)
    key = pd.MultiIndex.from_arrays([c.conv[resent], c.ext[resent]])
    nak = first.reindex(key).to_numpy(dtype=float, na_value=np.inf)
    after = resent[resent > nak]
    runs = np.unique(c.episode[after])
    runs = runs[~took[runs]]
    mode_certainty[runs[mode_certainty[runs] == CERTAIN]] = LIKELY


def _resumes_no_run(e: np.ndarray, k: int, sends: np.ndarray) -> bool:
    """Does restart k find no run it may resume: one cut since the last new data that
    stopped at or below its PSN, with no SEND resend since (a SEND's run goes back, which
    ends every run before it)?"""
    index = np.arange(len(e))
    same = (e["conv"] == e["conv"][k]) & (index < k)
    runs = same & (e["sent_hi"] == e["sent_hi"][k]) & (e["cursor"] <= e["start_ext"][k])
    return all((same & sends & (index > r)).any() for r in np.flatnonzero(runs))


def _own_nak_on_repeat_nic(x: Context, e: np.ndarray) -> np.ndarray:
    """Restarts below their NAKed PSN (a go-back-0 reading, at the NAKed PSN's message start
    or a run inside it) beside a NAK of their own first PSN, sent by a NIC that shows a
    selective repeat no go-back makes (_repeat_of_own_psn): recovery is a NIC setting, and
    a NIC that repeats selectively goes back N (SENDs, timers), never to a message's start.
    A SEND's restart (a READ's or WRITE's NAK it would repeat, not go back for) answers its
    own PSN's NAK (the newest seen before it; no RNR NAK among them) when it needs it: no
    silence a timer needs, no run it may resume (_resumes_no_run), and not each such NAK
    gone to another episode's clean answer (_own_nak_answered: open). Returns the episode
    records with that NAK filled in (a copy), `x.own_repeat` marking them."""
    x.own_repeat = np.zeros(len(e), bool)
    c = x.conv
    shape = _repeat_of_own_psn(x, e, np.ones(len(e), bool))
    hosts = _hosts(x, e)
    x.seen["repeat_hosts"] = frozenset(np.unique(hosts[shape]).tolist())
    nic = x.nic or NicContext(repeat_hosts=x.seen["repeat_hosts"])  # type: ignore[arg-type]
    below_own = (e["nak_ev"] >= 0) & (e["start_ext"] < e["nak_ext"]) & (e["own_nak_seen"] == 1)
    cand = below_own & np.isin(hosts, list(nic.repeat_hosts)) & (e["nak_kind"] == NAK)
    cand &= _op_class(e["start_opcode"]) == "send"  # a READ's or WRITE's NAK: repeated
    if not cand.any():
        return e
    t0 = c.ts[e["first_ev"]]
    wait = t0 - _ts(c, e["nak_ev"]) - x.paused_ns
    answered = _own_nak_answered(x, e, below_own, wait)
    cand &= t0 - _ts(c, e["prev_req_ev"]) < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns  # no timer
    sends = _sends_only(x, e)
    out = e.copy()
    for k, own in _own_naks(c, e, np.flatnonzero(cand & ~answered)).items():  # few
        if not len(own) or (c.kind[own] != NAK).any() or not _resumes_no_run(e, k, sends):
            continue
        out["nak_ev"][k], out["nak_ext"][k], out["nak_kind"][k] = own.max(), e["start_ext"][k], NAK
        x.own_repeat[k] = True
    return out


def _repeat_of_own_psn(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Of the restarts in `which`: two resends, their first PSN and then a skip to the newest
    PSN sent (not onto the PSN after an ACK), no NAK of the newest before it (it would be
    that NAK's answer), which only a selective repeat of the first PSN makes. A go-back-N
    goes on from its first PSN (a run it resumes too) and skips only what is acknowledged
    or lost on the way; where the capture point loses requests, the newest may also be the
    tail of another NAK's selective repeat or go-back-N whose resends before it were lost.
    There it needs no NAK of a READ or WRITE PSN the skip passes over since the first PSN
    was first sent, no acknowledgement between the two resends, and the two back to back
    with no NAK of a PSN between, or more resends lost in a row than the path loses
    anywhere else (_modes) from any PSN a go-back-N may have gone on from: past the first,
    past one an ACK acknowledged, or one a NAK asked for."""
    shape = which & (e["n_resent"] == 2) & (e["skips"] == 1) & (e["tail_skips"] == 1)
    shape &= (e["unasked"] == 0) & (e["ack_skips"] == 0)
    if not shape.any():
        return shape
    c = x.conv
    asked = _near_naks(c, e, shape)
    upstream = x.losses_upstream[e["conv"]]
    longest = _longest_loss(c)
    b2b = _back_to_back(x, e, shape & upstream)
    naks, acks = _responses_of(c)
    for k in np.flatnonzero(shape).tolist():  # such restarts are few
        shape[k] = k in asked and not asked[k]
        if not shape[k] or not upstream[k]:
            continue
        second = int(e["last_ev"][k])
        p, newest = int(e["start_ext"][k]), int(c.ext[second])  # a READ's PSN, not its span
        conv, orig = int(e["conv"][k]), int(e["orig_ev"][k])
        mine, rdma = _naks_above(x, naks, conv, p, newest, orig, second)
        between = np.arange(e["first_ev"][k] + 1, second)
        if rdma or ((c.flags[between] & cn.ADVANCE) > 0).any():
            shape[k] = False  # another NAK's selective repeat, its first resend lost
            continue
        lost = _go_back_lost(c, acks, (conv, orig, second), p + 1, newest, mine)
        burst = lost >= 2 and lost > longest[e["conv"][k]]
        shape[k] = burst or (bool(b2b[k]) and not len(mine))
    return shape


def _tail_of_lost_repeat(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Of the runs in `which` (above their NAKed PSN, at the newest PSN sent): one resend,
    the NAK of a READ's or WRITE's PSN, no NAK of another PSN up to the newest since that
    PSN was first sent, and a go-back-N that reached the newest would have lost more
    resends in a row than the path loses anywhere else, two or more (_go_back_lost; a
    selective repeat lost one, its first): the tail of the NAK's selective repeat."""
    out = which & (e["n_resent"] == 1)
    c = x.conv
    requests = _requests_by_psn(x)
    longest = _longest_loss(c)
    naks, acks = _responses_of(c)
    for k in np.flatnonzero(out).tolist():  # such runs are few
        # the resend's own PSN: a READ request's span is no PSNs a go-back-N would resend
        conv, n, newest = int(e["conv"][k]), int(e["nak_ext"][k]), int(e["start_ext"][k])
        first, until = requests.first_copy(conv, n), int(e["first_ev"][k])
        naked = _op_class(x.pp.opcodes_at(c.row[first : first + 1]))[0] if first >= 0 else ""
        asked, _ = _naks_above(x, naks, conv, n, newest, first, until)
        lost = _go_back_lost(c, acks, (conv, first, until), n, newest, asked)
        out[k] = naked == "rdma" and not len(asked) and lost >= 2 and lost > longest[conv]
    return out


def _responses_of(c: cn.Conversations) -> tuple[np.ndarray, np.ndarray]:
    """The events of NAKs (and RNR NAKs), and of ACKs, atomic ACKs and READ responses."""
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    return naks, np.flatnonzero(np.isin(c.kind, (ACK, ATOMIC_ACK, READ_RESPONSE)))


def _naks_above(
    x: Context, naks: np.ndarray, conv: int, lo: int, hi: int, since: int, until: int
) -> tuple[np.ndarray, bool]:
    """The PSNs in (lo, hi] that a NAK (or RNR NAK; events `naks`) of conversation `conv`
    asked for between events `since` (-1: any) and `until`, and whether any of them is a
    READ's or WRITE's (or never seen): its selective repeat resends it and then the newest."""
    c = x.conv
    a, b = np.searchsorted(naks, [max(since, 0), until])
    mine = naks[a:b][c.conv[naks[a:b]] == conv]
    psns = c.ext[mine[(c.ext[mine] > lo) & (c.ext[mine] <= hi)]]
    requests = _requests_by_psn(x)
    firsts = [requests.first_copy(conv, int(q)) for q in psns]
    op = [_op_class(x.pp.opcodes_at(c.row[f : f + 1]))[0] if f >= 0 else "" for f in firsts]
    return psns, any(o != "send" for o in op)


def _go_back_lost(
    c: cn.Conversations,
    acks: np.ndarray,
    window: tuple[int, int, int],
    first: int,
    newest: int,
    asked: np.ndarray,
) -> int:
    """The fewest resends in a row a go-back-N that reached the newest PSN would have lost
    before the capture point: from `first`, past a PSN an ACK or response (events `acks`)
    of the conversation acknowledged below the newest, between the events of `window`
    (conversation; since: the first copy of a PSN below `first`, sent before any such
    acknowledgement, -1 unknown; until), as the sender may have had it (not one of the
    newest or beyond: then it would not resend the newest), or from a PSN a NAK asked for
    (`asked`)."""
    conv, since, until = window
    if since < 0:
        since = int(np.searchsorted(c.conv, conv))  # events are grouped by conversation
    a, b = np.searchsorted(acks, [since, until])
    psns = c.ext[acks[a:b][c.conv[acks[a:b]] == conv]]
    psns = psns[(psns >= first - 1) & (psns < newest)]
    return newest - max([first, *(psns + 1).tolist(), *asked.tolist()])


def _resumed_split(x: Context, e: np.ndarray) -> np.ndarray:
    """Runs resumed after a cut whose first resend is a split in doubt (it may be more of
    the run before it, `x.alt`): the resumption may then continue that run instead, and
    this one be its first resend alone, its NAK's answer. A SEND's goes back N either way
    (selective repeat covers RDMA READ and WRITE only); a WRITE's or READ's may be a
    selective repeat, so its mode is open."""
    if len(x.alt) != len(e):
        return np.zeros(len(e), bool)
    return (e["resumed"] > 0) & (x.alt >= 0)


def _resumed_into_repeat(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
    """Runs resumed at the PSN another episode had just resent, whose next resend skips to
    the newest PSN sent, left unswapped (the state machine swaps the two copies only where
    no request was lost before the capture point so far): the resumed copy and the skip may
    be that episode's selective repeat (its first resend the second copy), which a run's
    PSNs then do not show."""
    out = np.zeros(len(e), bool)
    for k in np.flatnonzero((e["resumed"] > 0) & (e["cut_by_split"] == 1)).tolist():
        lo = int(e["first_ev"][k])
        ev = np.flatnonzero(c.episode[lo : e["last_ev"][k] + 1] == k) + lo
        for a, b in zip(ev[:-1].tolist(), ev[1:].tolist(), strict=True):
            if c.ext[b] != e["last_sent_first"][k] or c.ext[b] <= c.ext[a] + 1:
                continue
            prev = a - 1
            while prev >= lo and c.kind[prev] != REQUEST:
                prev -= 1
            if prev >= lo and c.episode[prev] != k and c.ext[prev] == c.ext[a]:
                out[k] = True
    return out


def _near_naks(c: cn.Conversations, e: np.ndarray, which: np.ndarray) -> dict[int, list[int]]:
    """Per episode of `which` (runs that went on through a PSN whose own NAK they may
    answer instead: seen not much sooner, or taken by a split in doubt), the NAK events of
    the PSNs it resent after its first, seen before those resends: were such a resend that
    NAK's answer, the run from there on would be its episode. An RNR NAK among them makes
    the trigger kind itself open (absent then)."""
    out: dict[int, list[int]] = {}
    all_naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    nak_conv = c.conv[all_naks]  # events are grouped by conversation: sorted
    for k in np.flatnonzero(which):  # such runs are few
        lo, hi = int(e["first_ev"][k]), int(e["last_ev"][k])
        start, stop = np.searchsorted(nak_conv, [e["conv"][k], e["conv"][k] + 1])
        own = all_naks[start:stop]
        resends = np.flatnonzero(c.episode[lo + 1 : hi + 1] == k) + lo + 1
        asked = [own[(own < ev) & (c.ext[own] == c.ext[ev])] for ev in resends.tolist()]
        naks = np.unique(np.concatenate(asked)) if asked else own[:0]
        if not (c.kind[naks] == RNR_NAK).any():
            out[int(k)] = naks.tolist()
    return out


def _repeat_tail_naks(
    c: cn.Conversations, e: np.ndarray, which: np.ndarray | None = None
) -> dict[int, list[int]]:
    """Per run of `which` (by default those above their NAKed PSN, _above_nak) that begins
    at the newest PSN sent right after a resend of another PSN (no request between) that a
    NAK (not an RNR NAK) asked for before it: those NAK events. A selective repeat resends
    its NAKed PSN and then the newest, so the run may be that NAK's repeat going on, not its
    own NAK's go-back-N whose first resends were lost before the capture point (a READ
    asked again splits the two: each READ of a run of re-issues is an episode). A NAK's
    answer either way: only which NAK is open."""
    out: dict[int, list[int]] = {}
    prev = e["prev_req_ev"]
    p = np.maximum(prev, 0)
    ks = _above_nak(e) if which is None else which
    ks = ks & (e["start_ext"] >= e["last_sent_first"]) & (prev >= 0)
    ks &= ((c.flags[p] & cn.RESENT) > 0) & (c.ext[p] != e["start_ext"]) & (c.episode[p] >= 0)
    if not ks.any():
        return out
    naks = np.flatnonzero(c.kind == NAK)
    for k in np.flatnonzero(ks).tolist():  # such runs are few
        before = naks[(naks < p[k]) & (c.conv[naks] == e["conv"][k])]
        asked = before[c.ext[before] == c.ext[p[k]]]
        if len(asked):
            out[k] = asked.tolist()
    return out


def _resumed_after_split(x: Context, e: np.ndarray) -> np.ndarray:
    """Per episode: -2 when its run was not resumed after a split in doubt (cut_by_split);
    else the split, when both answer a NAK (a NAK kind each): were that split more of this
    run, the resumption would be the split's answer instead (the same PSN, or a restart no
    cause explains), so the trigger is a NAK either way and only which NAK is open
    (`x.near` gets the split's NAK); -1 when the cause itself is open."""
    split = e["split_by"]
    out = np.full(len(e), -2, np.int64)
    cut = np.flatnonzero(e["cut_by_split"] == 1)
    out[cut] = -1
    s = np.maximum(split[cut], 0)
    both = (split[cut] >= 0) & (e["nak_kind"][cut] == NAK) & (e["nak_kind"][s] == NAK)
    for k, other in zip(cut[both].tolist(), s[both].tolist(), strict=True):
        out[k] = other
        x.near[k] = sorted({*x.near.get(k, []), int(e["nak_ev"][other])})
    for k in cut[(split[cut] == -2) & (e["nak_kind"][cut] == NAK)].tolist():
        splits = _splits_of(e, k)
        if len(splits) and (e["nak_kind"][splits] == NAK).all():
            out[k] = splits[0]
            x.near[k] = sorted({*x.near.get(k, []), *e["nak_ev"][splits].tolist()})
    return out


def _splits_of(e: np.ndarray, k: int) -> np.ndarray:
    """The splits (runs split off for a NAK of their first PSN) that cut run k, which
    resumed after each (split_by -2: several)."""
    asked = e["start_kind"] == cn.START_ASKED
    return np.flatnonzero(asked & (e["cut_of"] == k) & (e["first_ev"] > e["first_ev"][k]))


RANK = {CERTAIN: 0, LIKELY: 1, UNCERTAIN: 2}


def _either_run(
    e: np.ndarray,
    doubt: np.ndarray,
    trigger: np.ndarray,
    certainty: np.ndarray,
    alt2: np.ndarray,
) -> np.ndarray:
    """Episodes split off for a NAK where the capture cannot tell the split from more of
    the run it cut (`doubt`): the resend answers that NAK, or it continues that run (`alt`),
    whose trigger is then its trigger. When both readings name the same trigger kind, the
    trigger is as certain as the less certain of the two, and only which NAK frame is
    open; else it is uncertain. Chains (a NAK storm: each split may continue the one before)
    are followed to their first run. A split that may continue either of two runs
    (`alt2`, _second_run) is weighed by both. Returns per episode the run it may continue
    (-1 none), with `certainty` updated in place."""
    alt = np.where(doubt, np.where(e["alt_of"] >= 0, e["alt_of"], -1), -1)
    alt = np.where(alt2 >= 0, e["cut_of"], alt)
    certainty[doubt & (alt < 0)] = UNCERTAIN  # no run, or two runs, it may continue
    rank = pd.Series(certainty, dtype=object).map(RANK).to_numpy(np.int8)
    has = alt >= 0
    rank[has & (trigger != trigger[np.maximum(alt, 0)])] = RANK[UNCERTAIN]
    rank[(alt2 >= 0) & (trigger != trigger[np.maximum(alt2, 0)])] = RANK[UNCERTAIN]
    rank[_chain_misses(alt, e["alt_lo"])] = RANK[UNCERTAIN]
    if (alt2 >= 0).any():  # runs come before the splits that may continue them
        for k in np.flatnonzero(has).tolist():
            rank[k] = max(rank[k], rank[alt[k]], rank[alt2[k]] if alt2[k] >= 0 else 0)
    up = alt.copy()
    while (up >= 0).any():  # pointer jumping: the worst rank along each chain
        on = up >= 0
        rank[on] = np.maximum(rank[on], rank[up[on]])
        up[on] = up[up[on]]
    certainty[has] = np.asarray(CERTAINTIES, dtype=object)[rank[has]]
    return alt


def _second_run(e: np.ndarray, doubt: np.ndarray) -> np.ndarray:
    """Per split in doubt of exactly the PSN where a cut run would resume, that may also
    continue the run it split (the state machine's alt_two): the cut run, its second
    reading's run (-1 none). Either reading answers that run's NAK, or the split answers
    its own: when all are NAKs the trigger stands (_either_run)."""
    return np.where(doubt & (e["alt_of"] == -2) & (e["cut_of"] >= 0), e["alt_two"], -1)


def _split_at_the_floor(x: Context, e: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """Runs split off at a resend of exactly a PSN a newer NAK asked for, when that NAK came
    less than the shortest answer the path shows (plus the clock slack) before it (the
    sender may have chosen that resend as the next PSN of the run it was sending before
    the NAK reached it; sooner still, the run does not split at all), or came before the
    run began (the sender had both NAKs when it chose the run, which may go on through this
    PSN); and resends of a NAKed PSN where a run cut before would resume."""
    c = x.conv
    asked = (e["start_kind"] == cn.START_ASKED) & (e["nak_ev"] >= 0)
    floor = cn.path_floor(c, e["conv"])
    close = wait - floor < x.tol.slack_ns
    again = asked & _resumed_at_split_psn(c, e)
    # a split whose PSN the run it cut had just resent (swapped): no more of that run
    return ((asked & ((floor < 0) | close | again)) | (e["nak_early"] == 1)) & (e["swapped"] == 0)


def _resumed_at_split_psn(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
    """Per episode: a split whose cut run (`alt_of`) resumed after it at exactly the split's
    first PSN: the same PSN twice, one copy the run's next resend and one the split's NAK's
    answer, in an order the capture cannot tell (a NIC that goes back for a NAK does not
    return to the run it left, so the second copy may as well be the answer)."""
    out = np.zeros(len(e), bool)
    ks = np.flatnonzero((e["alt_of"] >= 0) & (e["start_kind"] == cn.START_ASKED))
    run = e["alt_of"][ks]
    ks = ks[(e["cut_by_split"][run] == 1) & (e["split_by"][run] == ks)]
    if not len(ks):
        return out
    ev = np.flatnonzero(c.episode >= 0)
    n = len(c.episode) + 1
    key = np.sort(c.episode[ev].astype(np.int64) * n + ev)  # by episode, then event
    want = e["alt_of"][ks] * n + e["first_ev"][ks] + 1
    at = np.minimum(np.searchsorted(key, want), len(key) - 1)
    found = key[at] // n == e["alt_of"][ks]  # the run's first resend after the split
    out[ks] = found & (c.ext[key[at] % n] == e["start_ext"][ks])
    return out


def _slow_answers(
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
    that NAK names lapsed (`rnr_on_time`, _rnr_timing) is its retry, likely: the other
    reading needs the ACK timer to fire at that very moment. The timer fires no sooner
    than its timeout after the last progress the sender had seen before that cause. The
    capture's own timeouts bound the timeout from above only (a timer that fired twice,
    its first resends lost; a resend held by a PFC pause this capture point does not see;
    re-arms on events the capture does not show); from below, the shortest silence since
    a re-arm before a timeout bounds it (_timeout_silence), unless the capture shows runs
    held by pauses, else the IBTA minimum: a resend sooner than that after the last
    progress (plus the path's slowest answer: the progress and the resend reach a capture
    point away from the sender each a path's delay late) is the cause's answer; else the
    capture cannot tell."""
    c = x.conv
    t0 = c.ts[e["first_ev"]]
    since = t0 - c.ts[_timer_armed_before(x, e["conv"], cause)]
    timers = x.nic or NicContext(
        timer_ns=x.seen.get("timer_ns"),  # type: ignore[arg-type]
        timer_lo_ns=x.seen.get("timer_lo_ns"),  # type: ignore[arg-type]
    )
    timer = timers.least_timer()  # the timer may be as short as the timeouts allow
    lag = cn.slowest_answers(c)[e["conv"]]
    reach = since + x.tol.slack_ns + lag  # a timer no longer than this may have fired
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
    out &= ~x.split_open & ~_among(len(e), x.near) & (e["alt_of"] == -1)
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
    burst = (e["skipped"] >= 2) & (e["skipped"] > _longest_loss(c)[e["conv"]])
    return out & (e["ack_skips"] == 0) & (~x.losses_upstream[e["conv"]] | burst)


def _lone_repeat_shape(x: Context, e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Slow NAK answers of one resend, of a READ's or WRITE's NAKed PSN, sent by a NIC that
    shows a selective repeat no go-back makes, where a go-back-N from that PSN would have
    lost two or more resends in a row, more than the path loses anywhere else
    (_lone_resend_run_lost), and no resend may be another episode's. The NIC's answer is a
    selective repeat that lost only its resend of the newest; an ACK timer's restart goes
    back N from the first unacknowledged PSN (that very PSN) on any NIC, so it would have
    lost the rest of its run in a row."""
    out = _undoubted_own_answer(x, e, trigger)
    out &= (e["n_resent"] == 1) & (e["end_ext"] < e["last_sent_first"])
    out &= _op_class(e["start_opcode"]) == "rdma"
    out &= np.isin(_hosts(x, e), list(_repeat_hosts(x)))
    lost = _lone_resend_run_lost(x, e, out)
    return out & (lost >= 2) & (lost > _longest_loss(x.conv)[e["conv"]])


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
    out = _undoubted_own_answer(x, e, trigger) & (_op_class(e["start_opcode"]) == "send")
    acked = _acked_by_responses(c, e)
    out &= e["start_ext"] > acked + 1
    lost = e["sent_hi"] - e["nak_ext"] + 1  # a go-back-N answer lost whole
    longest = _longest_loss(c)[e["conv"]]
    out &= ~x.losses_upstream[e["conv"]] | ((lost >= 2) & (lost > longest))
    naks, _ = _responses_of(c)
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
    timed &= ~x.split_open & ~_among(len(e), x.near)
    reach = wait + x.tol.slack_ns + floor  # a timeout no longer than this: the timer's
    # no timeout measured: the rule reads none (as if every timeout were beyond reach)
    threshold = NO_MARGIN[1] if measured is None else max(measured, MIN_ACK_TIMEOUT_NS)
    margin = timer_margin(reach[timed], threshold)
    x.seen["timer_margin"] = narrowed(x.seen["timer_margin"], margin)  # type: ignore[arg-type]
    timed &= reach >= threshold
    trigger[timed] = "timeout"
    certainty[timed] = LIKELY


def _unseen_pause(x: Context, e: np.ndarray, which: np.ndarray, certainty: np.ndarray) -> None:
    """Runs of `which` the state machine split off for a silence of at least the shortest
    ACK timer (a resend at the run's next PSN or further on): the ACK timer's restart, or
    the run itself held by a PFC pause this capture point did not see (PFC is per link: a
    capture point away from the sender's port sees no pause frame sent to it). The NIC's
    timeout is at most the capture's timeouts that went back show (_timeout_silence), and
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
    nowhere = which & _repeat_goes_nowhere(x, e, e["cut_of"])
    if timers.timer_ns is None:
        certainty[which & ~nowhere] = UNCERTAIN  # no run to hold: the timer, likely
    else:
        c = x.conv
        since = c.ts[e["first_ev"]] - c.ts[_progress_before(c, e["conv"], e["first_ev"])]
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


def _repeat_hosts(x: Context) -> frozenset[str]:
    """The hosts that show a selective repeat no go-back makes (_own_nak_on_repeat_nic
    found them before the triggers were weighed), in the capture's NIC context."""
    if x.nic is not None:
        return x.nic.repeat_hosts
    hosts = x.seen.get("repeat_hosts", frozenset())
    return hosts if isinstance(hosts, frozenset) else frozenset()


def _repeat_goes_nowhere(x: Context, e: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Per episode, is run `runs[k]` (-1: none) a selective repeat that nothing can go on
    from: the answer to a NAK of a READ's or WRITE's PSN, its NAKed PSN and at most the
    newest PSN sent after it, sent by a NIC that shows a selective repeat no go-back makes
    (_repeat_of_own_psn: recovery is a NIC setting, and such a NIC repeats a READ's or
    WRITE's NAKed PSN selectively), and so is every run it may continue (a split in doubt,
    `alt_of`)? Such a run ends with its newest resend: a later resend at its next PSN is no
    more of it, held by a pause or not."""
    repeat = np.isin(_hosts(x, e), list(_repeat_hosts(x))) & (e["nak_kind"] == NAK)
    repeat &= (e["start_ext"] == e["nak_ext"]) & (_op_class(e["start_opcode"]) == "rdma")
    shape = (e["n_resent"] == 1) | ((e["n_resent"] == 2) & (e["tail_skips"] == 1))
    repeat &= shape & (e["unasked"] == 0) & (e["resumed"] == 0) & (e["alt_two"] < 0)
    out = np.zeros(len(runs), bool)
    for k in np.flatnonzero(runs >= 0).tolist():  # runs split off for a silence: few
        run = int(runs[k])
        while repeat[run] and e["alt_of"][run] >= 0:
            run = int(e["alt_of"][run])
        out[k] = bool(repeat[run]) and e["alt_of"][run] != -2
    return out


def _rnr_timing(
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
    since = c.ts[e["first_ev"]] - _ts(c, e["nak_ev"])
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


def _progress_before(
    c: cn.Conversations, conv: np.ndarray, ev: np.ndarray, adv: np.ndarray | None = None
) -> np.ndarray:
    """Per (conversation, event): the conversation's latest event before it that
    acknowledged something new (`adv`: those events, by default the state machine's),
    else its first event."""
    first = np.searchsorted(c.conv, conv)  # events are grouped by conversation
    adv = np.flatnonzero((c.flags & cn.ADVANCE) > 0) if adv is None else adv
    if len(adv) == 0:
        return first
    k = np.maximum(np.searchsorted(adv, ev) - 1, 0)
    found = (adv[k] < ev) & (c.conv[adv[k]] == conv)
    return np.where(found, adv[k], first)


def _timer_armed_before(x: Context, conv: np.ndarray, ev: np.ndarray) -> np.ndarray:
    """Per event `ev` of conversation `conv`: the last progress before it that re-armed the
    sender's ACK timer, the earlier in two readings of what a NAK acknowledges
    (_timer_progress: the timer may be older; a go-back-0 NIC's timer is not re-armed by a
    NAK inside the message it redoes)."""
    if x.timer_progress is None:
        x.timer_progress = _timer_progress(x)
    ibta, whole_message = x.timer_progress
    c = x.conv
    return np.minimum(
        _progress_before(c, conv, ev, ibta), _progress_before(c, conv, ev, whole_message)
    )


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
    whole = np.where(nak, _message_first(x, ev) - 1, level)
    return _advanced(c, ev, level), _advanced(c, ev, whole)


def _advanced(c: cn.Conversations, ev: np.ndarray, level: np.ndarray) -> np.ndarray:
    """Of events `ev` (in event order), those acknowledging beyond every one before them in
    their conversation (`level`: the highest PSN each acknowledges)."""
    if len(ev) == 0:
        return ev
    before = pd.Series(level).groupby(c.conv[ev]).cummax().groupby(c.conv[ev]).shift()
    return ev[~(before.to_numpy(float) >= level)]


def _message_first(x: Context, ev: np.ndarray) -> np.ndarray:
    """Per event: the first PSN of the message its PSN belongs to, as the requests the
    capture saw in its conversation show (the nearest message start at or below it; the
    PSN itself when none is seen)."""
    c = x.conv
    req = np.flatnonzero(c.kind == REQUEST)
    pos = x.pp.position[c.row[req]]
    starts = req[~np.isin(pos, (POS_MIDDLE, POS_LAST))]
    span = np.int64(1) << 40  # unwrapped PSNs of one conversation stay well inside this
    key = np.unique(c.conv[starts] * span + c.ext[starts] + (span >> 1))
    if not len(key):  # no message start seen (a capture of middles and lasts only)
        return c.ext[ev].copy()
    want = c.conv[ev] * span + c.ext[ev] + (span >> 1)
    at = np.searchsorted(key, want, side="right") - 1
    found = (at >= 0) & (key[np.maximum(at, 0)] // span == c.conv[ev])
    return np.where(found, key[np.maximum(at, 0)] - c.conv[ev] * span - (span >> 1), c.ext[ev])


def _timeout_silence(
    x: Context, e: np.ndarray, trigger: np.ndarray, certainty: np.ndarray
) -> int | None:
    """The shortest silence since the last progress before a timeout resend, None: none.
    Not a run that went on after a silence (_unseen_pause): that may be a PFC pause; nor a
    timeout already in doubt (it may be no timer's): one a NAK may have caused
    (_nak_before_timer, _rnr_retry_fits). Each timeout bounds the timer (_timer_bounds);
    one whose silence since the last progress is shorter than the longest silence since
    a re-arm before a timeout (the timer floor, joined in the context), or than the IBTA
    minimum, cannot be the same timer's: in doubt (the capture point may have missed the
    NAK it answers), and no measure of it."""
    went_back = e["start_kind"] != cn.START_TIMER
    timeouts = np.flatnonzero(
        (trigger == "timeout") & (e["nak_ev"] < 0) & went_back & (certainty != UNCERTAIN)
    )
    asked = _nak_before_timer(x, e, timeouts) | _rnr_retry_fits(x, e, timeouts)
    asked |= _seen_rnr_retry_fits(x, e, timeouts, _rnr_retry_lag(x, e, trigger, certainty))
    asked |= _original_open(x, e)[timeouts]  # a NAK's answer, were a late copy the original
    asked |= _dropped_nak_fits(x, e, trigger, timeouts)
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
    whole = (run >= 2) & (run > _longest_loss(x.conv)[conv])
    sure = ~x.losses_upstream[conv] | whole
    if sure.any():
        x.seen["timer_floor_ns"] = int(least[sure].max())
    timers = x.nic or NicContext(timer_floor_ns=x.seen["timer_floor_ns"])  # type: ignore[arg-type]
    x.seen["floor_margin"] = timer_margin(most, timers.timer_floor())
    none = most < timers.timer_floor()
    certainty[timeouts[none]] = UNCERTAIN
    if (sure & ~none).any():
        # a run held after a silence (_unseen_pause) or a PFC pause the capture shows: a
        # timeout's resend, too, may have been held back, its silence longer than the timer
        held = (e["start_kind"] == cn.START_TIMER).any() or bool((x.paused_ns > 0).any())
        x.seen["timer_lo_ns"] = 0 if held else int(least[sure & ~none].min())
    if none.all():
        return None
    return int((most[~none] - x.tol.slack_ns).min())


def _dropped_nak(
    x: Context, e: np.ndarray, doubted: np.ndarray, trigger: np.ndarray, certainty: np.ndarray
) -> None:
    """Restarts read as timeouts that _timeout_silence put in doubt (`doubted`), which went
    back, where the capture point drops frames (_capture_drops): a NAK the sender took may
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
    response dropped too may have made it a re-issue), nor where a NAK or RNR NAK it shows
    may be the cause (_timeout_silence keeps those open)."""
    timers = x.nic or NicContext(timer_lo_ns=x.seen.get("timer_lo_ns"))  # type: ignore[arg-type]
    ks = np.flatnonzero(doubted & (e["start_kind"] != cn.START_TIMER) & (e["nak_ev"] < 0))
    ks = ks[(e["start_opcode"][ks] & 0x1F) != READ_REQUEST_OP]
    if len(ks) == 0 or not _capture_drops(x.conv):
        return
    shown = _nak_before_timer(x, e, ks) | _rnr_retry_fits(x, e, ks) | _original_open(x, e)[ks]
    ks = ks[~shown]
    c = x.conv
    most = c.ts[e["first_ev"][ks]] - c.ts[_timer_armed_before(x, e["conv"][ks], e["first_ev"][ks])]
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
    progress = _progress_before(c, conv, start)
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    nak = _progress_before(c, conv, start, naks)
    seen = np.isin(c.kind[nak], (NAK, RNR_NAK)) & (nak >= progress)
    floor = cn.path_floor(c, conv)
    lag = np.where(floor >= 0, floor, cn.slowest_answers(c)[conv]) + x.tol.slack_ns
    return seen & (c.ts[start] - c.ts[progress] - lag < MIN_ACK_TIMEOUT_NS)


def _dropped_nak_fits(x: Context, e: np.ndarray, trigger: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Per timeout episode of `ks`, where the capture point drops frames (_capture_drops):
    its silence since the last request before it is no longer than the slowest NAK answer
    its sending host shows in the capture, plus the path's slowest answer (the NAK a
    request caused reaches the sender up to a round trip after it). It may answer a NAK
    the capture point dropped: a NIC busy with other queues answers NAKs that slowly."""
    out = np.zeros(len(ks), bool)
    if len(ks) == 0 or not _capture_drops(x.conv):
        return out
    c = x.conv
    naks = np.flatnonzero((trigger == "nak") & (e["nak_ev"] >= 0))
    wait = pd.Series(c.ts[e["first_ev"][naks]] - c.ts[e["nak_ev"][naks]])
    slowest = wait.groupby(_hosts(x, e)[naks]).max()
    host = pd.Series(_hosts(x, e)[ks]).map(slowest).fillna(-1).to_numpy(np.int64)
    silence = c.ts[e["first_ev"][ks]] - _ts(c, e["prev_req_ev"][ks])
    lag = cn.slowest_answers(c)[e["conv"][ks]] + x.tol.slack_ns
    return (host >= 0) & (e["prev_req_ev"][ks] >= 0) & (silence <= host + lag)


def _capture_drops(c: cn.Conversations) -> bool:
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


def _rnr_retry_fits(x: Context, e: np.ndarray, ks: np.ndarray) -> np.ndarray:
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
    asked = _progress_before(c, c.conv[answers], answers, np.flatnonzero(c.kind == REQUEST))
    took = c.ts[answers] - c.ts[asked]  # since the request before it
    slowest = pd.Series(took).groupby(c.conv[answers]).max()
    silence = c.ts[e["first_ev"][ks]] - _ts(c, e["prev_req_ev"][ks])
    timeouts = pd.DataFrame({"k": np.arange(len(ks)), "conv": e["conv"][ks], "silence": silence})
    named = pd.DataFrame({"conv": c.conv[rnr], "named": timer}).drop_duplicates()
    pairs = timeouts.merge(named, on="conv")  # each timeout beside each timer its RNR NAKs name
    late = pairs["named"] + slowest.reindex(pairs["conv"]).to_numpy() + slack
    fits = (pairs["silence"] >= pairs["named"] - slack) & (pairs["silence"] <= late)
    out[pairs.loc[fits, "k"].to_numpy()] = True
    return out


def _rnr_retry_lag(x: Context, e: np.ndarray, trigger: np.ndarray, certainty: np.ndarray) -> int:
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
    lag = lag[lag >= -slack]  # sooner than the timer: no retry (_rnr_timing)
    return int(max(lag.max(), 0)) if len(lag) else 0


def _seen_rnr_retry_fits(x: Context, e: np.ndarray, ks: np.ndarray, retry_lag: int) -> np.ndarray:
    """Per timeout episode of `ks`: it came as long after an RNR NAK of its conversation
    that this capture point saw as the RNR timer that NAK names (no sooner, less the
    slack; no later than that timer plus the lag and twice the slack, less any PFC pause
    it waited through and the train its sender's wire was busy with right before it, as
    an on-time retry, _rnr_timing), so it may be that NAK's retry. Why: a requester holds
    an RNR NAK's retry for the timer whatever else it resends meanwhile (a NAK's go-back-N
    may resend, and the responder acknowledge, the very PSNs the RNR NAK named); the retry
    then restarts from the first PSN still unacknowledged, above the NAKed one, after a
    silence a timer would show alike. The lag: the longest of the path's shortest NAK
    answer (a retry is seen away from the sender up to a round trip later), its slowest
    answer, and the longest any RNR retry the capture shows came after its timer
    (`retry_lag`, _rnr_retry_lag: at a capture point beside the responder, no answer
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
    most = t0 - c.ts[_timer_armed_before(x, conv, start)] + slack
    responses = np.flatnonzero(np.isin(c.kind, cn.RESPONSE_KINDS))
    floor = cn.path_floor(c, conv)
    lag = np.maximum(cn.slowest_answers(c)[conv], floor)
    took = c.ts[_progress_before(c, conv, start, responses)] + lag
    least = t0 - np.maximum(_ts(c, e["prev_req_ev"][ks]), took) - slack
    return most, np.minimum(least, most)


def _op_class(opcode: np.ndarray) -> np.ndarray:
    """send | rdma: selective repeat covers RDMA READ and WRITE only (ConnectX-6 Dx and
    later); SENDs still go back N on the same NIC."""
    return np.where(np.isin(opcode & 0x1F, SEND_OPS), "send", "rdma").astype(object)


def _sends_only(x: Context, e: np.ndarray, reached: bool = False) -> np.ndarray:
    """Per episode: were all its resends SENDs (a WRITE's among them may answer a NAK of
    its own by selective repeat: another episode)? A resend where the run resumed after a
    selective repeat that had sent its newest PSN before it does not count: the two cannot
    have swapped (a selective repeat resends the NAKed PSN first), nor can that split be
    more of the run (a go-back-N does not skip to the newest), so it is the run's. With
    `reached` (the run's mode), nor do those where it resumed after a split that went one
    by one to the newest (_resumed_after_newest): they go back N in either reading."""
    c = x.conv
    ev = np.flatnonzero(c.episode >= 0)
    rdma = _op_class(x.pp.opcodes_at(c.row[ev]).astype(np.int64)) == "rdma"
    rdma &= ~_resumed_after_tail(e, c, ev)
    if reached:
        rdma &= ~_resumed_after_newest(x, e, ev)
    out = np.ones(len(e), bool)
    out[c.episode[ev][rdma]] = False
    return out


def _resumed_after_tail(e: np.ndarray, c: cn.Conversations, ev: np.ndarray) -> np.ndarray:
    """Per resend event of `ev`: the run resumed there after the split that cut it had
    skipped to the newest PSN (its tail) before this resend."""
    run = c.episode[ev]
    after_other = np.r_[False, (run[1:] != run[:-1]) & (c.conv[ev][1:] == c.conv[ev][:-1])]
    split = e["split_by"][run]
    s = np.maximum(split, 0)
    tail = (split >= 0) & (e["tail_skips"][s] > 0) & (e["last_ev"][s] < ev)
    return after_other & (ev != e["first_ev"][run]) & (e["cut_by_split"][run] == 1) & tail


def _resumed_after_newest(x: Context, e: np.ndarray, ev: np.ndarray) -> np.ndarray:
    """Per resend event of `ev`: the run resumed there after the split that cut it had
    resent from its NAKed PSN one by one up to the newest PSN sent (no skip), where the
    capture point loses no requests on the way. That split may be more of the run (a
    go-back-N reaches the newest by going on), and this resend its NAK's answer instead;
    but that answer then resends what both policies would (its NAKed PSN on, with the
    newest missing only where an ACK overtook it: a selective repeat's newest, and a
    go-back-N's run, would follow it), so it shows no policy of its own, and the run
    goes back N in either reading when its own NAK was a SEND's."""
    c = x.conv
    run = c.episode[ev]
    after_other = np.r_[False, (run[1:] != run[:-1]) & (c.conv[ev][1:] == c.conv[ev][:-1])]
    split = e["split_by"][run]
    s = np.maximum(split, 0)
    newest = (e["end_ext"][s] >= e["last_sent_first"][s]) & (e["skips"][s] == 0)
    newest &= (e["nak_ev"][s] >= 0) & (e["start_ext"][s] == e["nak_ext"][s])
    newest &= (split >= 0) & (e["n_resent"][s] >= 2) & (e["last_ev"][s] < ev)
    newest &= ~x.losses_upstream[e["conv"][run]]
    out = after_other & (ev != e["first_ev"][run]) & (e["cut_by_split"][run] == 1) & newest
    # the run's resends that go on from there one by one are that answer's too: a
    # go-back-N's (a selective repeat skips to the newest, unless it is the next PSN)
    ext = c.ext[ev]
    for i in np.flatnonzero(out).tolist():  # such resumptions are few
        j = i + 1
        while j < len(ev) and run[j] == run[i] and ext[j] == ext[j - 1] + 1:
            out[j] = True
            j += 1
    return out


def _settled_modes(
    x: Context, e: np.ndarray, trigger: np.ndarray, trigger_certainty: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """_modes, again while an episode whose certain mode showed its NIC's policy ends up
    less than certain (its run cut by an episode of open cause, say): a policy shows only
    in modes that stay certain, and leaving one out only takes answers away."""
    shown = np.zeros(len(e), bool)  # modes certain when the policy was read, not in the end
    while True:
        mode, certainty, sure = _modes(x, e, trigger, trigger_certainty, shown)
        lost = sure & (certainty != CERTAIN)
        if not (lost & ~shown).any():
            return mode, certainty
        shown |= lost


def _modes(
    x: Context,
    e: np.ndarray,
    trigger: np.ndarray,
    trigger_certainty: np.ndarray,
    not_shown: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each episode's recovery mode and its certainty, from the PSNs it resent: what only
    one policy resends (a go-back-0's restart below the NAKed PSN, a go-back-N's PSN between
    the first and the newest that no NAK of its own asked for, a selective repeat's skip
    to the newest) is certain; what two policies would both have sent takes the policy the
    same NIC shows elsewhere (not in `not_shown`). Also returns the episodes the policy was
    read from."""
    middle = e["unasked"]
    tail_skip = (e["tail_skips"] > 0) & (middle == 0)
    # a skip onto the PSN after one just acknowledged is also what a go-back-N that the ACK
    # overtook sends: no sign of selective repeat then
    overtaken = e["ack_skips"] > 0
    same_packets = (middle == 0) & (e["skips"] == 0) & (e["end_ext"] >= e["last_sent_first"])
    gb0 = _go_back_0(e)
    mode = np.select([gb0, tail_skip], ["go-back-0", "selective-repeat"], "go-back-n")
    mode = mode.astype(object)
    mode[_read_reissue(e)] = "go-back-n"
    certainty = np.full(len(e), UNCERTAIN, dtype=object)
    reissue = _read_reissue(e) & (trigger == "read_reissue") & (trigger_certainty != UNCERTAIN)
    certainty[reissue | gb0 | (middle > 0)] = CERTAIN
    # below a NAK of a later PSN while a NAK of its own first PSN was seen too: that NAK's
    # answer may be this restart, taken for another run (a NAK storm)
    certainty[gb0 & (e["own_nak_seen"] == 1) & ~x.own_answered] = UNCERTAIN
    certainty[gb0 & x.own_answered] = LIKELY  # as its trigger (_own_nak_answered)
    upstream = x.losses_upstream[e["conv"]]
    # no NIC repeats a SEND selectively (selective repeat covers RDMA READ and WRITE only):
    # a SEND run's skip shows resends lost on the way or missed by the capture point
    repeat = tail_skip & ~overtaken & ~_sends_only(x, e)
    certainty[repeat & ~upstream] = CERTAIN
    # back to back where requests are lost upstream: a switch queue between the loss and
    # the capture point may have closed the gap a lost resend left, so only likely
    certainty[_back_to_back(x, e, repeat & upstream)] = LIKELY
    # a go-back-N would have lost every resend the skip passes over, more in a row than the
    # path loses anywhere else in the capture
    burst = repeat & (certainty != CERTAIN) & (e["skipped"] >= 2)
    certainty[burst & (e["skipped"] > _longest_loss(x.conv)[e["conv"]])] = LIKELY
    hidden_any = _hidden_first(x, e, trigger, gb0)
    # a timer's restart whose message begins at or above the first PSN not acknowledged: a
    # go-back-0 would begin where its go-back-N does, so it is no restart inside a message
    same_start = (trigger == "timeout") & (hidden_any > 0)
    same_start &= _more_lost_than_go_back_n(e, trigger, hidden_any) <= 0
    hidden_any = np.where(same_start, 0, hidden_any)
    hidden = np.where(middle > 0, hidden_any, 0)
    certainty[hidden != 0] = UNCERTAIN
    host = _hosts(x, e)
    gb0_shows = gb0 & (certainty == CERTAIN) & ~not_shown
    below_nak = _timer_below_answered_nak(x, e, trigger, trigger_certainty) & ~not_shown
    x.seen["gb0_hosts"] = frozenset(np.unique(host[gb0_shows | below_nak]).tolist())
    # every restart inside a message counts, a single resend too: a go-back-0 NIC would
    # have lost its message's first resends on each
    inside = pd.Series(host[hidden_any != 0]).value_counts()
    x.seen["hidden"] = tuple(sorted((str(k), int(v)) for k, v in inside.items()))
    nic = x.nic or NicContext(gb0_hosts=x.seen["gb0_hosts"], hidden=x.seen["hidden"])  # type: ignore[arg-type]
    more = _more_lost_than_go_back_n(e, trigger, hidden)
    _resolve_hidden_first(host, hidden, more, mode, certainty, nic, trigger == "nak")
    cut_short = (e["n_resent"] == 1) & (e["end_ext"] < e["last_sent_first"])
    below_ack = _below_ack(x, e, trigger, _hidden_first(x, e, trigger, gb0))
    certainty[below_ack] = UNCERTAIN
    certainty[x.split_open] = UNCERTAIN  # its runs may be two episodes' (above)
    certainty[_resumed_into_repeat(x.conv, e)] = UNCERTAIN
    send_class = _op_class(e["start_opcode"]) == "send"
    certainty[_resumed_split(x, e) & ~send_class] = UNCERTAIN
    # a SEND run cut short after several resends, each of a PSN a NAK asked for: what both
    # policies resend (selective repeat each NAKed PSN, go-back-N the run), and a SEND's
    # policy is go-back-N (below)
    sends_only = _sends_only(x, e, reached=True)
    cut_run = sends_only & (middle == 0) & (e["skips"] == 0)
    cut_run &= e["end_ext"] < e["last_sent_first"]
    # a SEND's first resend, then a skip to the newest: no NIC repeats a SEND selectively,
    # and a go-back-N whose resends the skip passed over were lost on the way (or missed by
    # the capture point, which may drop frames) sends the same (the policy, as for what
    # both resend)
    send_skip = tail_skip & ~overtaken & _sends_only(x, e)
    either = (same_packets | cut_short | cut_run | below_ack | (tail_skip & overtaken)) & ~gb0
    either = (either | send_skip) & (certainty != CERTAIN)
    # an episode of open cause shows no policy for a cause (a run held by a pause, say), nor
    # does a held run's second part (its PSNs are the run's, below)
    held = x.held_of >= 0 if len(x.held_of) == len(e) else np.zeros(len(e), bool)
    shows = (certainty == CERTAIN) & (trigger_certainty != UNCERTAIN) & ~not_shown & ~held
    policy = _host_policy(x, e, trigger, mode, np.where(shows, CERTAIN, UNCERTAIN))
    shown_policy = policy.copy()  # the NIC's own, before the defaults below
    # selective repeat covers RDMA READ and WRITE only: a SEND both policies would resend
    # alike went back N (unless a go-back-0 could have: a NIC that shows one, a restart
    # inside a message whose first resends may be lost, or below a seen ACK)
    send = send_class & (policy == "") & ~_go_back_0_may_hide(e, trigger, hidden_any, host, nic)
    send &= ~below_ack & ~np.isin(host, list(nic.gb0_hosts))
    policy[send] = "go-back-n"
    # an ACK timer resends from the sender's first unacknowledged PSN and goes back N
    # (selective repeat answers NAKs): a restart at or above every ACK and response seen is
    # at that PSN whatever the NIC's policy (_below_ack), unless it is inside a message
    # whose first resends (a go-back-0's) may have been lost before the capture point
    timer = (trigger == "timeout") & (policy == "") & ~below_ack
    timer &= hidden_any == 0
    policy[timer] = "go-back-n"
    # below an ACK the sender may not have had: a go-back-0 NIC would restart there both
    # when it had the ACK (going back) and when it had not (at its first unacked PSN)
    policy[below_ack & (policy == "go-back-0")] = ""
    # so too a go-back-0 NIC whose timer shows go-back-N elsewhere: there it restarted at
    # its first unacknowledged PSN, a message's first, where both policies begin
    policy[below_ack & np.isin(host, list(nic.gb0_hosts))] = ""
    # the policy a NIC applies depends on the operation the NAK was about: without a known
    # trigger, which one applies is open
    policy[trigger_certainty == UNCERTAIN] = ""
    known = either & (policy != "")
    mode[known] = policy[known]
    certainty[known] = LIKELY
    # one resend of a WRITE's or READ's NAKed PSN, then no more of a run before new data or
    # a timer's silence: a go-back-N would have lost the rest of its run in a row
    rdma_nak = (policy == "") & (trigger == "nak") & (e["nak_kind"] == NAK)
    rdma_nak &= (e["start_ext"] == e["nak_ext"]) & (_op_class(e["start_opcode"]) == "rdma")
    lone = cut_short & rdma_nak
    lost = _lone_resend_run_lost(x, e, lone)
    # or, no split in doubt (more of the run before it, maybe), on a NIC that shows a
    # selective repeat no go-back makes: it repeats a READ's or WRITE's NAKed PSN
    # selectively (its resend of the newest lost on the way)
    repeat_nic = np.isin(host, list(_repeat_hosts(x)))
    alone = np.ones(len(e), bool)
    tail = np.zeros(len(e), bool)
    if len(x.alt) == len(e):
        alone = (x.alt < 0) & (x.alt2 < 0)
        # a split of the newest PSN that may be more of such a repeat, of one resend so
        # far: then it is that repeat's own resend of the newest
        tail = (x.alt >= 0) & (x.alt2 < 0) & _repeat_goes_nowhere(x, e, x.alt)
        tail &= e["n_resent"][np.maximum(x.alt, 0)] == 1
    lone &= ((lost >= 2) & (lost > _longest_loss(x.conv)[e["conv"]])) | (repeat_nic & alone)
    # and a lone resend of the newest PSN sent, what both policies resend alone
    newest = same_packets & (e["n_resent"] == 1) & rdma_nak & repeat_nic & (alone | tail)
    lone |= newest & (certainty != CERTAIN)
    mode[lone], certainty[lone] = "selective-repeat", LIKELY
    # a run that went on through a PSN soon after its NAK may be two episodes, the second
    # from that resend on: its shape shows one policy only as likely (the other reading
    # needs an answer sooner than any the path shows)
    near = _among(len(e), x.near)
    certainty[(near | x.own_repeat) & (certainty == CERTAIN)] = LIKELY
    # such a run whose resends show both policies' marks (a PSN no NAK asked for, and a
    # skip to the newest PSN sent): read as two episodes, each may show its own policy
    certainty[near & (e["unasked"] > 0) & (e["tail_skips"] > 0)] = UNCERTAIN
    # a run above its NAKed PSN (its first resends lost, _above_nak): a go-back-0 would have
    # begun at that PSN's message, which only a message begun at that PSN rules out
    above = _above_nak(e)
    certainty[above & (certainty == CERTAIN)] = LIKELY
    certainty[above & _right_after_no_cause(e, trigger)] = UNCERTAIN
    # unless the same NIC shows a certain go-back-N (from inside a message) for the same
    # operation class and cause: it is no go-back-0 NIC (recovery is a NIC setting)
    back_n = (mode == "go-back-n") & (shown_policy == "go-back-n")
    back_n &= trigger_certainty != UNCERTAIN
    # or a go-back-0 of that NAK would have lost more in a row on the way (as for a restart
    # inside a message, _resolve_hidden_first)
    back_n |= _go_back_0_lost_more_above(x, e, above, host, nic)
    certainty[above & ~_message_starts_at_nak(x, e) & ~(back_n & (certainty != UNCERTAIN))] = (
        UNCERTAIN
    )
    # or a selective repeat's skip to the newest PSN sent after its lost resend
    newest = above & (e["start_ext"] >= e["last_sent_first"])
    certainty[newest] = UNCERTAIN
    # which it is, likely, when a go-back-N would have lost more resends in a row than the
    # path loses anywhere else (_tail_of_lost_repeat), and the NIC shows no other policy
    # for READ and WRITE NAKs
    shown = (x.nic or NicContext(modes=x.seen["modes"])).policy()  # type: ignore[arg-type]
    rdma_policy = pd.Series(host + "/rdma/nak").map(shown).to_numpy(object)
    newest &= pd.isna(rdma_policy) | np.isin(rdma_policy, ("", "selective-repeat"))
    tail = _tail_of_lost_repeat(x, e, newest)
    mode[tail], certainty[tail] = "selective-repeat", LIKELY
    # an episode whose cause is open may be two NICs' episodes run together: its PSNs then
    # show no one policy; and a run cut by such an episode may go on in it, unless none of
    # its resends can go on there
    certainty[trigger_certainty == UNCERTAIN] = UNCERTAIN
    # a restart that took a split's NAK (_claim_taken_naks): each resend after its first
    # may answer a NAK of its own, a WRITE's by selective repeat; a SEND's goes back N; not
    # a selective repeat of its own PSN whose newest no NAK asked for
    claimed = _among(len(e), x.claimed)
    repeat = _repeat_of_own_psn(x, e, claimed & (mode == "selective-repeat"))
    certainty[claimed & ~repeat & ~sends_only] = UNCERTAIN
    cutter = np.flatnonzero((trigger_certainty == UNCERTAIN) & (e["cut_of"] >= 0))
    cutter = cutter[~repeat[e["cut_of"][cutter]]]  # a whole selective repeat: goes on nowhere
    certainty[e["cut_of"][cutter[~_cannot_go_on(e, cutter)]]] = UNCERTAIN
    if len(x.alt) == len(e):
        whole = _whole_selective_repeat(x, e, mode, certainty)
        # where requests are lost upstream (the two back to back), and a lone resend's split
        # (above: more of the run it split, that run would be a go-back-N that lost as many
        # in a row, as no selective repeat resends a PSN but its NAKed one and the newest),
        # the split keeps its mode; the run's, which may hold two episodes' resends, is
        # weighed as before
        keep = (whole & x.losses_upstream[e["conv"]]) | (lone & (certainty != UNCERTAIN))
        whole &= ~x.losses_upstream[e["conv"]]
        twin = _newest_twice(x.conv, e) & (x.alt == e["alt_of"])
        single = (lone | known) & (mode == "selective-repeat") & (certainty != UNCERTAIN)
        single &= cut_short
        twin |= _repeat_completed(x, e, x.alt, single)
        alt = np.where(whole, -1, x.alt)
        _same_mode_either_run(alt, mode, certainty, sends_only, keep, twin)
        if len(x.alt2) == len(e):  # a split that may continue either of two runs: both
            alt2 = np.where(whole, -1, x.alt2)
            twin2 = _repeat_completed(x, e, x.alt2, single)
            _same_mode_either_run(alt2, mode, certainty, sends_only, keep, twin2)
    # a run held by a pause the capture point does not see (_held_runs): its second part
    # resends by the run's policy, as likely as its trigger
    for k in np.flatnonzero(held).tolist():  # such runs are few
        run = int(x.held_of[k])
        mode[k] = mode[run]
        certainty[k] = LIKELY if certainty[run] == CERTAIN else certainty[run]
        certainty[k] = UNCERTAIN if trigger_certainty[k] == UNCERTAIN else certainty[k]
    # a go-back-0 NIC's answer at its NAKed PSN where that PSN begins a message: it resends
    # what a go-back-N does (a go-back-0 goes back only below its NAKed PSN, to the
    # message's first), so it reads as a go-back-N, its certainty as weighed
    at_own = (trigger == "nak") & (e["start_ext"] == e["nak_ext"])
    at_own &= np.isin(e["start_pos"], (POS_FIRST, POS_ONLY))
    mode[at_own & (mode == "go-back-0")] = "go-back-n"
    return mode, certainty, shows | gb0_shows


def _above_nak(e: np.ndarray) -> np.ndarray:
    """Runs that begin above the PSN their NAK asked for: since the NAK the capture saw no
    request from that PSN up to the run's first, so the NAK's go-back-N lost its first
    resends before the capture point (the state machine's nak_below_unseen)."""
    return (e["nak_ev"] >= 0) & (e["start_ext"] > e["nak_ext"])


def _timer_below_answered_nak(
    x: Context, e: np.ndarray, trigger: np.ndarray, trigger_certainty: np.ndarray
) -> np.ndarray:
    """Timer restarts at a message's first PSN below the PSN of a NAK (not an RNR NAK) an
    earlier episode of the conversation answered, inside that PSN's message: the sender had
    the NAK. IBTA's NAK acknowledges every PSN below its own, and a go-back-N or selective
    repeat that had it never resends those again; a go-back-0 NIC's NAK acknowledges only
    what precedes its message (it redoes the message), so its timer restarts at the
    message's first PSN. Such a restart shows a go-back-0 NIC as a certain go-back-0 does.
    Only a NAK the answer took alone (not one of several it may answer, `x.near`)."""
    out = np.zeros(len(e), bool)
    msg_start = np.isin(e["start_pos"], (POS_FIRST, POS_ONLY))
    timers = np.flatnonzero((trigger == "timeout") & (trigger_certainty != UNCERTAIN) & msg_start)
    answered = (trigger == "nak") & (trigger_certainty != UNCERTAIN) & (e["nak_kind"] == NAK)
    answered &= e["msg_first"] > np.iinfo(np.int64).min // 4
    answered &= ~_among(len(e), x.near) & ~_among(len(e), x.claimed)
    naks = np.flatnonzero(answered & (e["nak_ev"] >= 0))
    for k in timers.tolist():  # timer restarts are few
        j = naks[(e["conv"][naks] == e["conv"][k]) & (e["first_ev"][naks] < e["first_ev"][k])]
        below = (e["start_ext"][k] < e["nak_ext"][j]) & (e["start_ext"][k] >= e["msg_first"][j])
        out[k] = bool(below.any())
    return out


def _go_back_0_lost_more_above(
    x: Context, e: np.ndarray, above: np.ndarray, host: np.ndarray, nic: NicContext
) -> np.ndarray:
    """Runs above their NAKed PSN (`above`, their first resends lost before the capture
    point) inside the message of that PSN, on a NIC that shows no go-back-0: a go-back-0 of
    the NAK would have lost, besides the go-back-N's lost resends (from the NAKed PSN up to
    the run's first), the message's first PSNs up to the NAKed one. Its go-back-N is as
    likely as a restart inside a message (_resolve_hidden_first) when that is two resends
    or more in a row, or when the NIC restarts inside messages twice or more (a go-back-0
    NIC would have lost its message's first resends on each). The message's first PSN
    counts only where the capture saw its first copy begin the message (a message whose
    first packet the capture never saw would read as part of the one before it)."""
    known = e["msg_first"] > np.iinfo(np.int64).min // 4
    inside = above & known & (e["msg_first"] <= e["nak_ext"])  # the NAKed PSN's message
    inside &= ~np.isin(host, list(nic.gb0_hosts))
    ks = np.flatnonzero(inside)
    if len(ks):
        requests = _requests_by_psn(x)
        for k in ks.tolist():  # such runs are few
            ev = requests.first_copy(int(e["conv"][k]), int(e["msg_first"][k]))
            inside[k] = ev >= 0 and x.pp.position[x.conv.row[ev]] in (POS_FIRST, POS_ONLY)
    more = e["nak_ext"] - e["msg_first"]
    counts = dict(nic.hidden)
    twice = np.array([counts.get(h, 0) >= 2 for h in host.tolist()], bool)
    return inside & ((more >= 2) | twice)


def _lone_resend_run_lost(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Per episode of `which` (one resend, of its NAKed PSN, not the newest PSN sent): how
    many resends a go-back-N would have lost in a row after it, at least, when the
    conversation's next request is new data (a go-back-N sends it only after its run) or
    comes the shortest ACK timer after it (a run goes back to back; not where the capture
    shows PFC pauses, which hold a run back): one per PSN the capture saw requested from
    where the run would have gone on (past the resend, past what was acknowledged, or at a
    PSN a NAK since the episode's asked for, whichever is highest) up to the newest PSN
    sent. A selective repeat resends the NAKed PSN and then the newest: one lost resend.
    0 where the next request may be more of such a run."""
    out = np.zeros(len(e), np.int64)
    c = x.conv
    quiet_ok = not (x.pp.kind == PFC).any()
    requests = _requests_by_psn(x)
    acks = (ACK, ATOMIC_ACK, READ_RESPONSE)
    for k in np.flatnonzero(which).tolist():  # such resends are few
        conv, first = int(e["conv"][k]), int(e["first_ev"][k])
        end = int(np.searchsorted(c.conv, conv, "right"))  # grouped by conversation
        ev = np.arange(int(e["nak_ev"][k]) + 1, end)
        after = ev[(ev > first) & (c.kind[ev] == REQUEST)]
        nxt = int(after[0]) if len(after) else end
        quiet = nxt < end and c.ts[nxt] - c.ts[first] >= MIN_ACK_TIMEOUT_NS - x.tol.slack_ns
        if not (nxt < end and ((c.flags[nxt] & cn.NEW) or (quiet and quiet_ok))):
            if quiet_ok:
                out[k] = _unseen_train(x, e, k, nxt, requests)
            continue
        ev = ev[(ev < nxt) & ((c.flags[ev] & cn.UNSENT) == 0)]
        acked = ev[np.isin(c.kind[ev], acks)]
        naked = ev[np.isin(c.kind[ev], (NAK, RNR_NAK))]
        floor = max(
            int(e["cursor"][k]),
            int(e["acked"][k]) + 1,
            int(c.ext[acked].max(initial=-(1 << 62))) + 1,
            int(c.ext[naked].max(initial=-(1 << 62))),
        )
        out[k] = requests.psns_between(conv, floor, int(e["last_sent_first"][k]) + 1)
    return out


def _unseen_train(x: Context, e: np.ndarray, k: int, nxt: int, requests: _RequestsByPsn) -> int:
    """How many resends a go-back-N from lone resend k's next PSN would have sent back to
    back before any response seen after that resend can have reached the sender (the first
    such response plus the path's shortest NAK answer, less twice the slack: what this
    capture point sees reaches the sender's answers no sooner), all unseen, where the
    conversation shows no request until then (`nxt`: its next request, or the end of its
    events) and the capture goes on past then: one per PSN the capture saw requested from
    the PSN after the resend (and past what was acknowledged before it) up to the newest
    sent, at most as many as the wire carries in that time at the conversation's shortest
    request. 0 without a link speed or a measured answer."""
    c = x.conv
    floor = int(cn.path_floor(c, e["conv"][k : k + 1])[0])
    if x.tol.link_bps is None or floor < 0:
        return 0
    first, conv = int(e["first_ev"][k]), int(e["conv"][k])
    later = np.arange(first + 1, nxt)
    later = later[np.isin(c.kind[later], (ACK, ATOMIC_ACK, READ_RESPONSE, NAK, RNR_NAK))]
    if not len(later):
        return 0
    horizon = c.ts[later[0]] + floor - 2 * x.tol.slack_ns
    if nxt < len(c.ts) and c.conv[nxt] == conv and c.ts[nxt] < horizon:
        return 0
    if x.pp.ts.max() < horizon:
        return 0  # the capture ended first: the run may have gone on after it
    shortest = int(requests.shortest[np.searchsorted(requests.convs, conv)])
    room = int((horizon - c.ts[first]) // max(float(x.tol.frame_ns(shortest)), 1.0))
    lo = max(int(e["cursor"][k]), int(e["acked"][k]) + 1)
    return min(room, requests.psns_between(conv, lo, int(e["last_sent_first"][k]) + 1))


def _message_starts_at_nak(x: Context, e: np.ndarray) -> np.ndarray:
    """Per episode: did the PSN before its NAKed one end a message (its first copy a LAST or
    ONLY), or the NAKed PSN begin one (its first copy a FIRST or ONLY: the PSN before it may
    be unseen, before the capture began)? Then a go-back-0 of that NAK begins where a
    go-back-N does."""
    out = np.zeros(len(e), bool)
    above = np.flatnonzero(_above_nak(e))
    if not len(above):
        return out
    requests = _requests_by_psn(x)
    for k in above.tolist():  # such runs are few
        ev = requests.first_copy(int(e["conv"][k]), int(e["nak_ext"][k]) - 1)
        out[k] = ev >= 0 and x.pp.position[x.conv.row[ev]] in (POS_LAST, POS_ONLY)
        ev = requests.first_copy(int(e["conv"][k]), int(e["nak_ext"][k]))
        out[k] |= ev >= 0 and x.pp.position[x.conv.row[ev]] in (POS_FIRST, POS_ONLY)
    return out


def _whole_selective_repeat(
    x: Context, e: np.ndarray, mode: np.ndarray, certainty: np.ndarray
) -> np.ndarray:
    """Splits in doubt whose two resends, back to back in the conversation, are their first
    PSN and a skip to the newest PSN sent (selective repeat, certain) where the capture
    point loses no requests on the way, and neither a NAK of a PSN the skip passes over
    nor an acknowledgement of anything new came between the split's NAK and its second
    resend. The newest PSN is then a selective repeat's second resend (no go-back-N skips
    there), sent right after that repeat's first (only an acknowledgement removes it, and
    a repeat of a later NAK shows that NAK), so the first resend is the repeat's own and no
    more of the run it may continue: the split's mode is its own, and that run's is not
    changed by it."""
    c = x.conv
    out = (x.alt >= 0) & (mode == "selective-repeat") & (certainty != UNCERTAIN)
    out &= (e["n_resent"] == 2) & (e["skips"] == 1) & (e["tail_skips"] == 1)
    out &= (e["ack_skips"] == 0) & (e["resumed"] == 0) & (e["nak_ev"] >= 0)
    upstream = x.losses_upstream[e["conv"]]
    # where requests are lost before the capture point: the two came back to back, with no
    # room for the PSNs a go-back-N would have sent between, nor for a lost copy of the
    # first PSN (the repeat's own, were the first seen more of the run), likely
    tight = _back_to_back(x, e, out & upstream) & _no_room_for_copy(x, e, out & upstream)
    out &= ((certainty == CERTAIN) & ~upstream) | tight
    for k in np.flatnonzero(out):  # such splits are few
        ev = np.arange(e["nak_ev"][k] + 1, e["last_ev"][k])
        ev = ev[c.conv[ev] == e["conv"][k]]
        nak = np.isin(c.kind[ev], (NAK, RNR_NAK))
        passed = nak & (c.ext[ev] > e["start_ext"][k]) & (c.ext[ev] <= e["end_ext"][k])
        out[k] = not (passed | ((c.flags[ev] & cn.ADVANCE) > 0)).any()
    return out


def _cannot_go_on(e: np.ndarray, cutter: np.ndarray) -> np.ndarray:
    """Per episode of `cutter`: were its resends more of no NIC run whose resends the run it
    cut shows? A NIC's run goes forward from where it stopped, and new data ends every run:
    nothing follows a run that resent up to the newest PSN sent before it, and a run from
    at or below the cut run's first PSN goes on from none of its resends (the cut run may be
    two episodes' resends interleaved: one may go on from its first resend). A run resumed
    later is not weighed so: its resends past the cut may be that episode's."""
    run = e["cut_of"][cutter]
    full = (e["end_ext"][run] >= e["sent_hi"][run]) & (e["resumed"][run] == 0)
    return full & (e["start_ext"][cutter] <= e["start_ext"][run])


def _chain_misses(alt: np.ndarray, oldest: np.ndarray) -> np.ndarray:
    """Restarts that may continue several runs (the state machine found them on one chain,
    down to `oldest`) whose chain of runs in doubt stops before the oldest: a run they may
    continue is then weighed by no reading."""
    out = np.zeros(len(alt), bool)
    for k in np.flatnonzero((alt >= 0) & (oldest >= 0)):  # such restarts are few
        at = alt[k]
        while at > oldest[k]:
            at = alt[at]
        out[k] = at != oldest[k]
    return out


def _same_mode_either_run(
    alt: np.ndarray,
    mode: np.ndarray,
    certainty: np.ndarray,
    send: np.ndarray,
    keep: np.ndarray,
    twin: np.ndarray,
) -> None:
    """A split the capture cannot tell from more of the run it cut (_either_run) keeps its
    mode only when the run's mode is the same and neither is open: then both readings
    resend by one policy. Else both are open (as a run cut by an episode of open cause),
    except a SEND run's go-back-N: selective repeat covers RDMA READ and WRITE only, so a
    SEND's run goes back N whether or not the split's resends are more of it; and a run
    whose split is of `twin` (_newest_twice: the run resends the same PSNs either way).
    A split of `keep` keeps its own mode (it is no more of the run); the run's is weighed
    alike.
    """
    has = alt >= 0
    if not has.any():
        return
    other = np.maximum(alt, 0)
    open_ = certainty == UNCERTAIN
    differs = has & ((mode != mode[other]) | open_ | open_[other])
    certainty[differs & ~keep] = UNCERTAIN
    runs = alt[differs]
    keeps = send[runs] & (mode[runs] == "go-back-n") & ~open_[runs]
    keeps |= twin[differs] & ~open_[runs]
    certainty[runs[~keeps]] = UNCERTAIN


def _repeat_completed(x: Context, e: np.ndarray, alt: np.ndarray, single: np.ndarray) -> np.ndarray:
    """Splits in doubt whose one resend is the newest PSN sent, right after (no request
    between) the one resend of a run they may continue (`alt`) that reads as a selective
    repeat (`single`: a lone resend of a READ's or WRITE's NAKed PSN, by the NIC's policy
    or a go-back-N's losses). More of that run, the split makes it its NAKed PSN and then
    a skip to the newest, a selective repeat's shape where the capture point loses no
    requests on the way, or where a go-back-N would have lost the PSNs the skip passes over,
    two or more in a row, more than the path loses anywhere else; its NAK's answer apart,
    the run is the lone resend. Either way the run shows one mode (the split's lone resend
    of the newest is what both policies send)."""
    run = np.maximum(alt, 0)
    out = (alt >= 0) & (e["n_resent"] == 1) & (e["start_ext"] >= e["last_sent_first"])
    out &= single[run] & (e["n_resent"][run] == 1) & (e["first_ev"] == e["last_ev"][run] + 1)
    passed = e["start_ext"] - e["end_ext"][run] - 1
    burst = (passed >= 2) & (passed > _longest_loss(x.conv)[e["conv"]])
    return out & (passed >= 1) & (~x.losses_upstream[e["conv"]] | burst)


def _newest_twice(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
    """Splits in doubt whose one resend is the newest PSN sent, after which the run they
    may continue resumed at that same PSN as its last resend: one copy is more of the run
    and the other the split's NAK's answer, in either order, so the run resends the same
    PSNs in both readings and its shape shows one mode (the split's lone resend of the
    newest is what both policies send)."""
    out = _resumed_at_split_psn(c, e) & (e["n_resent"] == 1)
    out &= e["start_ext"] >= e["last_sent_first"]
    run = np.maximum(e["alt_of"], 0)
    return out & (c.ext[e["last_ev"][run]] == e["start_ext"])


def _longest_loss(c: cn.Conversations) -> np.ndarray:
    """Per conversation, the most PSNs lost in a row before the capture point that its new
    data shows (its longest PSN gap)."""
    out = np.zeros(int(c.conv.max(initial=-1)) + 1, np.int64)
    np.maximum.at(out, c.conv, c.gap)
    return out


def _go_back_0(e: np.ndarray) -> np.ndarray:
    """Restarts at a message's first PSN below the NAKed PSN: go-back-N never resends what
    the NAK it answers acknowledged."""
    return (e["nak_ev"] >= 0) & (e["start_ext"] < e["nak_ext"])


def _below_ack(x: Context, e: np.ndarray, trigger: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Timer restarts at a message's first PSN below an ACK or response the capture saw: a
    go-back-0, or a go-back-N whose sender never got that ACK (lost after the capture
    point): the capture cannot tell which. A NAK's implied acknowledgement does not count:
    a go-back-N that had the NAK restarts at or above it, and a go-back-0's NAK acknowledges
    only what precedes its message, so a restart below only NAKs is at the sender's first
    unacknowledged PSN whatever its policy. A READ response the requester cannot have
    kept does not count either (_acked_in_sequence). So too a restart inside a message
    below such an ACK whose first resends may have been lost before the capture point
    (`hidden`, _hidden_first): a go-back-0 from the message's first PSN, or a go-back-N
    whose sender never got the ACK (a sender that had it restarts above it)."""
    c = x.conv
    msg_start = np.isin(e["start_pos"], (POS_FIRST, POS_ONLY)) | (hidden > 0)
    below = (trigger == "timeout") & (e["start_ext"] <= _acked_by_responses(c, e)) & msg_start
    for k in np.flatnonzero(below).tolist():  # timer restarts below a response are few
        below[k] = _acked_in_sequence(x, e, k)
    return below


def _acked_in_sequence(x: Context, e: np.ndarray, k: int) -> bool:
    """Did an ACK or response the capture saw before episode `k`'s first resend acknowledge
    its first PSN or beyond, other than a READ response the requester cannot have kept? A
    requester takes READ responses in PSN order only (one beyond the next it expects is
    dropped) and re-issues a READ from the next response it expects: a READ request asked
    again below a response's PSN after that response shows the requester did not keep it
    (had it kept it, it would expect beyond it; had it not yet had it, it came while the
    requester expected the re-issued PSN, below it, on the same path). Only a READ asked
    again inside a READ's span (at a PSN no original request took) shows that: one at a
    READ's own first PSN may be a go-back-0's restart of the whole READ, whatever it kept."""
    c = x.conv
    first, start = int(e["first_ev"][k]), int(e["start_ext"][k])
    lo = int(np.searchsorted(c.conv, e["conv"][k]))  # events are grouped by conversation
    ev = np.arange(lo, first)
    sent = (c.flags[ev] & cn.UNSENT) == 0
    beyond = ev[sent & np.isin(c.kind[ev], (ACK, ATOMIC_ACK, READ_RESPONSE)) & (c.ext[ev] >= start)]
    if (c.kind[beyond] != READ_RESPONSE).any():
        return True
    asked = ev[(c.kind[ev] == REQUEST) & ((c.flags[ev] & cn.RESENT) > 0)]
    asked = asked[(x.pp.opcodes_at(c.row[asked]).astype(np.int64) & 0x1F) == READ_REQUEST_OP]
    late = ((c.flags[ev] & cn.LATE) > 0) & ((c.flags[ev] & cn.RESENT) == 0)  # late originals
    originals = ev[(c.kind[ev] == REQUEST) & (((c.flags[ev] & cn.NEW) > 0) | late)]
    asked = asked[~np.isin(c.ext[asked], c.ext[originals])]  # inside a READ's span
    # per response: the lowest PSN a READ was asked again at after it (none: beyond all)
    after = np.searchsorted(asked, beyond, side="right")
    lowest = np.minimum.accumulate(c.ext[asked][::-1])[::-1] if len(asked) else asked
    kept = after >= len(asked)
    kept[~kept] = lowest[after[~kept]] >= c.ext[beyond][~kept]
    return bool(kept.any())


def _acked_by_responses(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
    """Per episode, the highest PSN an ACK, atomic ACK or READ response of its conversation
    acknowledged before its first resend (the int64 minimum's neighbourhood: none)."""
    none = np.iinfo(np.int64).min // 4
    ev = np.flatnonzero(
        np.isin(c.kind, (ACK, ATOMIC_ACK, READ_RESPONSE)) & ((c.flags & cn.UNSENT) == 0)
    )
    if len(ev) == 0:
        return np.full(len(e), none, np.int64)
    hi = pd.Series(c.ext[ev]).groupby(c.conv[ev]).cummax().to_numpy(np.int64)
    k = np.searchsorted(ev, e["first_ev"]) - 1  # events are grouped by conversation
    found = (k >= 0) & (c.conv[ev[np.maximum(k, 0)]] == e["conv"])
    return np.where(found, hi[np.maximum(k, 0)], none)


def _hidden_first(x: Context, e: np.ndarray, trigger: np.ndarray, gb0: np.ndarray) -> np.ndarray:
    """Restarts inside a message (at the NAKed PSN, or after a timer), captured where the
    path loses requests before the capture point: a go-back-0 whose resends from the
    message's first PSN up to there were all lost on the way would look the same. Per
    episode, how many such resends it would have lost (0: not possible; -1: unknown, the
    capture missed the message's start)."""
    msg_start = np.isin(e["start_pos"], (POS_FIRST, POS_ONLY))
    possible = (trigger != "read_reissue") & ~msg_start & ~gb0 & x.losses_upstream[e["conv"]]
    known = e["msg_first"] > np.iinfo(np.int64).min // 4
    lost = np.where(known, e["start_ext"] - e["msg_first"], -1)
    return np.where(possible, lost, 0)


def _more_lost_than_go_back_n(e: np.ndarray, trigger: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Per restart inside a message (`hidden`, _hidden_first): how many resends more in a
    row a go-back-0 would have lost on the way than a go-back-N. A NAK's go-back-N begins
    at the NAKed PSN, the restart's own; a timer's at the sender's first unacknowledged
    PSN, no later than the one after what the capture saw acknowledged (the sender may have
    missed an ACK, never had one this capture point did not see pass or leave), so a timer
    restart above that PSN lost the resends up to it under either policy."""
    timer_lost = np.maximum(e["start_ext"] - (e["acked"] + 1), 0)
    known = (trigger == "timeout") & (hidden > 0) & (e["acked"] > np.iinfo(np.int64).min // 4)
    return np.where(known, hidden - timer_lost, hidden)


def _resolve_hidden_first(
    host: np.ndarray,
    hidden: np.ndarray,
    more: np.ndarray,
    mode: np.ndarray,
    certainty: np.ndarray,
    nic: NicContext,
    nak_answer: np.ndarray,
) -> None:
    """A NIC that restarts at a message's first PSN elsewhere goes back to 0 here too, when
    this restart answers a NAK as well (a go-back-0 is only ever seen certain answering a
    NAK, and a NIC's timer may go back otherwise: recovery is set per cause). Else a
    go-back-N is likely when a go-back-0 would have lost two resends or more in a row on
    the way than a go-back-N (`more`), or when the NIC restarts inside messages twice or
    more; with one lost resend and one such answer, the capture cannot tell."""
    inside = dict(nic.hidden)
    for k in np.flatnonzero(hidden != 0):
        if host[k] in nic.gb0_hosts and nak_answer[k]:
            mode[k], certainty[k] = "go-back-0", LIKELY
        elif more[k] >= 2 or inside.get(host[k], 0) >= 2:
            certainty[k] = LIKELY


def _go_back_0_may_hide(
    e: np.ndarray, trigger: np.ndarray, hidden: np.ndarray, host: np.ndarray, nic: NicContext
) -> np.ndarray:
    """Restarts inside a message (`hidden`, _hidden_first, whatever PSNs they resent) that a
    go-back-0 whose resends from the message's first PSN were lost on the way would make as
    well, where nothing tells the two apart: such a go-back-0 would have lost no more than
    one resend in a row more than a go-back-N, and the NIC restarts inside messages once
    only (_resolve_hidden_first). A SEND's run there shows no go-back-N."""
    more = _more_lost_than_go_back_n(e, trigger, hidden)
    inside = dict(nic.hidden)
    twice = np.array([inside.get(h, 0) >= 2 for h in host.tolist()], bool)
    return (hidden != 0) & (more < 2) & ~twice


def _back_to_back(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Of the episodes in `which`: were the first and second resends sent back to back,
    leaving no room on the wire for the PSNs between them (which a go-back-N would have
    sent, and the capture point might have missed)? Under a go-back-N the two timestamps lie
    at least the wire time of the PSNs between apart, plus that of the first resend
    (timestamps taken as a frame starts) or of the second (as it ends): the shorter of the
    two is the bound. Needs the link speed and a clock finer than a frame."""
    out = np.zeros(len(e), bool)
    candidates = np.flatnonzero(which & (e["n_resent"] >= 2))
    if x.tol.link_bps is None or not len(candidates):
        return out
    c, pp = x.conv, x.pp
    requests = _requests_by_psn(x)
    for k in candidates.tolist():  # skips where the capture point loses requests: few
        rows = np.flatnonzero(c.episode[e["first_ev"][k] : e["last_ev"][k] + 1] == k)
        if len(rows) < 2:
            continue
        a, b = e["first_ev"][k] + rows[0], e["first_ev"][k] + rows[1]
        room = c.ts[b] - c.ts[a] + x.tol.slack_ns
        ends = min(int(pp.wire_len[c.row[a]]), int(pp.wire_len[c.row[b]]))
        between = requests.wire_between(int(e["conv"][k]), int(c.ext[a]), int(c.ext[b]))
        out[k] = room < x.tol.frame_ns(ends + between)
    return out


def _no_room_for_copy(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Of the episodes in `which`: did the first two resends come too close for another
    copy of the first between them (its wire time, plus the shorter of the two: a
    timestamp may be taken as a frame starts or as it ends)? Needs the link speed."""
    out = np.zeros(len(e), bool)
    if x.tol.link_bps is None:
        return out
    c, pp = x.conv, x.pp
    for k in np.flatnonzero(which & (e["n_resent"] >= 2)).tolist():  # few
        rows = np.flatnonzero(c.episode[e["first_ev"][k] : e["last_ev"][k] + 1] == k)
        a, b = e["first_ev"][k] + rows[0], e["first_ev"][k] + rows[1]
        wire_a, wire_b = int(pp.wire_len[c.row[a]]), int(pp.wire_len[c.row[b]])
        out[k] = c.ts[b] - c.ts[a] + x.tol.slack_ns < x.tol.frame_ns(wire_a + min(wire_a, wire_b))
    return out


def _requests_by_psn(x: Context) -> _RequestsByPsn:
    """The table's requests sorted by conversation and PSN, built once (two rules look PSNs
    up in them)."""
    if x.requests is None:
        x.requests = _RequestsByPsn.of(x)
    return x.requests


@dataclass(frozen=True)
class _RequestsByPsn:
    """A capture's requests sorted by conversation and PSN, with their wire lengths, so the
    PSNs between two resends are found by binary search, not a pass per episode."""

    ev: np.ndarray  # the request events, in capture order within one conversation and PSN
    conv: np.ndarray
    ext: np.ndarray
    wire: np.ndarray
    convs: np.ndarray  # each conversation with a request, once
    shortest: np.ndarray  # per conversation of `convs`: its shortest request

    @classmethod
    def of(cls, x: Context) -> _RequestsByPsn:
        c = x.conv
        req = np.flatnonzero(c.kind == REQUEST)
        req = req[np.lexsort((c.ext[req], c.conv[req]))]  # stable: copies stay in order
        conv, wire = c.conv[req], x.pp.wire_len[c.row[req]].astype(np.int64)
        starts = np.flatnonzero(np.r_[True, conv[1:] != conv[:-1]]) if len(req) else req
        shortest = np.minimum.reduceat(wire, starts) if len(req) else wire
        return cls(req, conv, c.ext[req], wire, conv[starts], shortest)

    def first_copy(self, conv: int, ext: int) -> int:
        """The event of the first request of PSN `ext` in conversation `conv`, -1 none."""
        lo, hi = np.searchsorted(self.conv, [conv, conv + 1])
        at = lo + int(np.searchsorted(self.ext[lo:hi], ext))
        return int(self.ev[at]) if at < hi and self.ext[at] == ext else -1

    def psns_between(self, conv: int, lo_ext: int, hi_ext: int) -> int:
        """How many PSNs from `lo_ext` up to, not including, `hi_ext` the conversation's
        requests took (each once)."""
        lo, hi = np.searchsorted(self.conv, [conv, conv + 1])
        ext = self.ext[lo:hi]
        i0, i1 = np.searchsorted(ext, [lo_ext, hi_ext])
        return len(np.unique(ext[i0:i1]))

    def wire_between(self, conv: int, lo_ext: int, hi_ext: int) -> int:
        """The wire bytes, at least, of the PSNs strictly between two of a conversation's:
        a resend is as long as its original, and a PSN the capture never showed is at least
        as long as the conversation's shortest request."""
        lo, hi = np.searchsorted(self.conv, [conv, conv + 1])
        if lo == hi:
            return 0
        ext, wire = self.ext[lo:hi], self.wire[lo:hi]
        i0, i1 = np.searchsorted(ext, [lo_ext + 1, hi_ext])
        seen = 0
        if i1 > i0:
            first = np.flatnonzero(np.r_[True, ext[i0 + 1 : i1] != ext[i0 : i1 - 1]])
            per_psn = np.minimum.reduceat(wire[i0:i1], first)
            seen, bytes_seen = len(per_psn), int(per_psn.sum())
        else:
            bytes_seen = 0
        shortest = int(self.shortest[np.searchsorted(self.convs, conv)])
        return bytes_seen + (hi_ext - lo_ext - 1 - seen) * shortest


def _host_policy(
    x: Context, e: np.ndarray, trigger: np.ndarray, mode: np.ndarray, certainty: np.ndarray
) -> np.ndarray:
    """Per episode, the one mode its sending NIC shows in its certain episodes of the same
    operation class and the same kind of cause ("" when none or several): the recovery
    policy is a NIC setting, and it answers a NAK (selective repeat, say) otherwise than
    its timer (which goes back N on the same NIC)."""
    cause = np.where(trigger == "nak", "nak", "timer").astype(object)
    key = _hosts(x, e).astype(object) + "/" + _op_class(e["start_opcode"]) + "/" + cause
    shows = (certainty == CERTAIN) & ~_go_back_n_or_0(e, mode)
    sure = pd.DataFrame({"key": key, "mode": mode})[shows]
    seen = sure.groupby("key")["mode"].agg(lambda m: frozenset(m.astype(str)))
    x.seen["modes"] = tuple(sorted((str(k), v) for k, v in seen.items()))
    nic = x.nic or NicContext(modes=x.seen["modes"])  # type: ignore[arg-type]
    found = pd.Series(key).map(nic.policy()).to_numpy(object)
    return np.where(pd.isna(found), "", found).astype(object)


def _go_back_n_or_0(e: np.ndarray, mode: np.ndarray) -> np.ndarray:
    """A go-back-N from a message's first PSN: what a go-back-0 NIC sends too (its first
    unacknowledged PSN began a message, where a go-back-0 restarts as well), so it shows
    no policy between the two. Only a go-back-N from inside a message does."""
    return (mode == "go-back-n") & np.isin(e["start_pos"], (POS_FIRST, POS_ONLY))


def seen_context(x: Context) -> NicContext:
    """The NIC context the episodes of `x` showed as they were weighed (episode_table)."""
    return NicContext(**x.seen)  # type: ignore[arg-type]


def _hosts(x: Context, e: np.ndarray) -> np.ndarray:
    """Per episode, its sending host's address: the key of a NIC's settings in every
    partition of the capture (the host codes are one table's own)."""
    return np.asarray(x.pp.ips[x.model.src[e["conv"]]], dtype=object).astype(str)


def _evidence(x: Context, e: np.ndarray, trigger: np.ndarray) -> list[list[int]]:
    """Per episode, the frames a person opens to check it: the NAK, the first resend, the
    original of its first PSN, the last request before a timeout's silence, the last
    resend."""
    c, pp = x.conv, x.pp
    cols = [e["nak_ev"], e["first_ev"], e["orig_ev"], e["prev_req_ev"], e["last_ev"]]
    frames = np.column_stack([c.frames_of(col, pp) for col in cols])
    frames[trigger != "timeout", 3] = -1
    return [[int(f) for f in dict.fromkeys(row) if f >= 0] for row in frames.tolist()]


def _nak_frames(x: Context, e: np.ndarray, by_nak: np.ndarray) -> list[list[int]]:
    """Per episode answering a NAK, every NAK frame it may answer: its own, those a resend
    of its run may answer instead (`x.near`), then those of the runs its first resend may
    continue instead (_either_run), nearest first."""
    own = x.conv.frames_of(np.where(by_nak, e["nak_ev"], -1), x.pp).tolist()
    out = [[f] if f >= 0 else [] for f in own]
    alt = x.alt if len(x.alt) == len(e) else np.full(len(e), -1)
    near = dict(x.near)
    for run, naks in _overtaken_naks(x.conv, e, by_nak).items():
        near[run] = sorted({*near.get(run, []), *naks})
    for run, naks in near.items():  # the NAKs a resend of the run may answer instead
        frames = x.conv.frames_of(np.asarray(naks, np.int64), x.pp).tolist()
        out[run] += [f for f in frames if f not in out[run]] if by_nak[run] else []
    alt2 = x.alt2 if len(x.alt2) == len(e) else np.full(len(e), -1)
    for k in np.flatnonzero((alt >= 0) & by_nak):  # splits in doubt: few; runs come first
        out[k] = out[k] + [f for f in out[alt[k]] if f not in out[k]]
        if alt2[k] >= 0:  # the second run it may continue (_second_run)
            out[k] = out[k] + [f for f in out[alt2[k]] if f not in out[k]]
    return out


def _overtaken_naks(c: cn.Conversations, e: np.ndarray, by_nak: np.ndarray) -> dict[int, list[int]]:
    """Per NAK's run that skipped forward over PSNs an ACK had covered (`ack_skips`), the
    NAK events (not RNR NAKs) of PSNs the skip passed over, seen before the skip's resend
    and each followed, ahead of that resend, by an ACK or response up to the PSN before the
    skip's (or a NAK of the skip's PSN or beyond): a NIC answers such a NAK by going back
    from its PSN, and the ACK overtaking that answer moves it on to the first PSN not
    acknowledged, the skip's. The resend from the skip on may be that NAK's answer, another
    episode: which NAK is open."""
    out: dict[int, list[int]] = {}
    ks = np.flatnonzero(by_nak & (e["ack_skips"] > 0))
    if not len(ks):
        return out
    for k, a, b in _forward_skips(c, ks):  # skips of runs over acknowledged PSNs: few
        lo, hi = c.ext[a], c.ext[b]
        first = int(np.searchsorted(c.conv, c.conv[b]))  # events are grouped by conversation
        before = np.arange(first, b)  # the conversation's events before the skip's resend
        kind, ext = c.kind[before], c.ext[before]
        naks = before[(kind == NAK) & (ext > lo) & (ext < hi)]
        acks = before[np.isin(kind, (ACK, ATOMIC_ACK, READ_RESPONSE)) & (ext >= hi - 1)]
        beyond = before[(kind == NAK) & (ext >= hi)]
        moved_on = np.minimum(_first_after(acks, naks), _first_after(beyond, naks)) < b
        if moved_on.any():
            out[k] = sorted({*out.get(k, []), *naks[moved_on].tolist()})
    return out


def _forward_skips(c: cn.Conversations, ks: np.ndarray) -> list[tuple[int, int, int]]:
    """(run, request event, next request event of that run) where the run skipped
    forward over one or more PSNs, for the runs `ks`."""
    req = np.flatnonzero(np.isin(c.episode, ks) & (c.kind == REQUEST))
    req = req[np.argsort(c.episode[req], kind="stable")]  # each run's, in capture order
    a, b = req[:-1], req[1:]
    skip = (c.episode[a] == c.episode[b]) & (c.conv[a] == c.conv[b]) & (c.ext[b] > c.ext[a] + 1)
    return list(zip(c.episode[a[skip]].tolist(), a[skip].tolist(), b[skip].tolist(), strict=True))


def _first_after(events: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Per event of `after`, the first of the sorted `events` later than it (a sentinel
    past every event where none is)."""
    at = np.searchsorted(events, after, side="right")
    padded = np.append(events, np.iinfo(np.int64).max)
    return padded[at]


def _late_or_resent(x: Context, e: np.ndarray, cause_open: np.ndarray) -> list[list[int]]:
    """Per episode, the copies of which the capture cannot tell the original: on a
    conversation that showed a late original (_after_reordering), every copy of a PSN whose
    first copy the capture saw came after a later PSN and was read as a resend (its
    original unseen before it). That first copy may be the original, late, and a later
    copy the resend; or the original came later still, read as a resend or as a late
    original (its frame then listed with the episode of the first copy). A PSN whose first
    copy was read as a late original by its timing (sooner than any resend could come)
    is not listed: that reading does not rest on which copy came first."""
    out: list[list[int]] = [[] for _ in range(len(e))]
    c = x.conv
    _open_first_copies(x, out)
    _open_uncaused_copies(x, e, cause_open, out)
    if len(x.reorders) == 0 or not x.reorders.any() or len(e) == 0:
        return out
    copies = (c.flags & (cn.NEW | cn.RESENT | cn.REORDER)) > 0
    ev = np.flatnonzero(copies & (c.kind == REQUEST) & x.reorders[np.maximum(c.conv, 0)])
    ev = ev[c.conv[ev] >= 0]
    if len(ev) == 0:
        return out
    ev = ev[np.lexsort((ev, c.ext[ev], c.conv[ev]))]
    key = np.stack([c.conv[ev], c.ext[ev]])
    new_psn = np.r_[True, (np.diff(key, axis=1) != 0).any(axis=0)]  # a (conversation, PSN)
    group, first = np.cumsum(new_psn) - 1, ev[new_psn]
    open_first = ((c.flags[first] & cn.RESENT) > 0) & ((c.flags[first] & cn.LATE) > 0)
    keep = open_first[group] & ((c.flags[ev] & (cn.RESENT | cn.REORDER)) > 0)
    ev, group = ev[keep], group[keep]
    if len(ev) == 0:
        return out
    # the group's episode: the first copy's; a copy in another episode lists it there too
    home = c.episode[first].astype(np.int64)[group]
    own = c.episode[ev].astype(np.int64)
    rows = pd.DataFrame(
        {"group": group, "frame": c.frames_of(ev, x.pp), "episode": np.where(own >= 0, own, home)}
    )
    where = rows.loc[rows["episode"] >= 0, ["episode", "group"]].drop_duplicates()
    pairs = where.merge(rows[["group", "frame"]], on="group")[["episode", "frame"]]
    pairs = pairs.drop_duplicates().sort_values(["episode", "frame"])
    ep_of, frame = pairs["episode"].to_numpy(np.int64), pairs["frame"].to_numpy(np.int64)
    cut = np.flatnonzero(np.r_[True, np.diff(ep_of) != 0])
    for k, listed in zip(ep_of[cut].tolist(), np.split(frame, cut[1:]), strict=True):
        out[k] = sorted(set(out[k]) | set(listed.tolist()))
    return out


def _open_uncaused_copies(
    x: Context, e: np.ndarray, cause_open: np.ndarray, out: list[list[int]]
) -> None:
    """Adds to `out` the frame of each lone resend whose cause is open (`cause_open`, per
    episode: no NAK, timer or run the capture shows surely caused it) of a PSN whose
    original the capture may not have seen: its first copy read as a resend (its original
    unseen), or as new data right after a resend of its conversation, above it (a
    go-back-N runs on through every PSN sent, so a run may go on into PSNs whose originals
    are still on the way). Why: a NIC resends only for a NAK, a timer or a run it resumes,
    so such a copy may be late from elsewhere: an earlier run's resend, or the original
    itself, held on a path that reorders (the first copy the capture saw the resend it
    drew); which one the capture cannot tell."""
    c = x.conv
    ks = np.flatnonzero((e["n_resent"] == 1) & cause_open)
    first = c.link[e["first_ev"][ks]]
    found = first >= 0
    ks, first = ks[found], first[found]
    unseen = (c.flags[first] & cn.RESENT) > 0
    after_run = ((c.flags[first] & cn.NEW) > 0) & _right_after_resend(c, first)
    ks = ks[unseen | after_run]
    frames = c.frames_of(e["first_ev"][ks], x.pp).tolist()
    for k, f in zip(ks.tolist(), frames, strict=True):  # such copies are few
        if f not in out[k]:
            out[k].append(int(f))


def _right_after_resend(c: cn.Conversations, ev: np.ndarray) -> np.ndarray:
    """Per request event of `ev`: was the request before it in its conversation a resend
    of a lower PSN (no request between)?"""
    out = np.zeros(len(ev), bool)
    for k, i in enumerate(ev.tolist()):  # lone copies: few
        j = i - 1  # events are grouped by conversation
        while j >= 0 and c.conv[j] == c.conv[i] and c.kind[j] != REQUEST:
            j -= 1
        resent = j >= 0 and c.conv[j] == c.conv[i] and (c.flags[j] & cn.RESENT) > 0
        out[k] = bool(resent and c.ext[j] < c.ext[i])
    return out


def _open_first_copies(x: Context, out: list[list[int]]) -> None:
    """Adds to `out` (per episode) each first copy flagged OPEN (_original_open) and each
    copy flagged OPEN of the same PSN (the restart beside it): either may be the original,
    late, or a resend."""
    c = x.conv
    flagged = np.flatnonzero(((c.flags & cn.OPEN) > 0) & (c.episode >= 0))
    if not len(flagged):
        return
    first = flagged[c.link[flagged] < 0]  # no earlier copy: the first the capture saw
    span = np.int64(1) << 40  # unwrapped PSNs of one conversation stay within it
    key = c.conv[flagged].astype(np.int64) * span + c.ext[flagged]
    ev = flagged[np.isin(key, c.conv[first].astype(np.int64) * span + c.ext[first])]
    for k, f in zip(c.episode[ev].tolist(), c.frames_of(ev, x.pp).tolist(), strict=True):
        out[k].append(int(f))  # such copies are few


def episode_table(x: Context) -> tuple[pd.DataFrame, np.ndarray]:
    """The retransmissions table (EPISODE_COLUMNS), by time, and per state-machine episode
    its row in that table."""
    e = x.conv.episodes
    if len(e) == 0:
        return empty_episodes(), np.zeros(0, np.int64)
    e = _claim_taken_naks(x, e)
    e = _own_nak_on_repeat_nic(x, e)
    c, pp, model = x.conv, x.pp, x.model
    trigger, trigger_certainty = _triggers(x, e)
    mode, mode_certainty = _settled_modes(x, e, trigger, trigger_certainty)
    _cap_reserved(x, e, trigger_certainty, mode_certainty)
    e = _with_held_naks(x, e)
    reissue = _read_reissue(e) & (e["n_resp"] >= 0)
    flow = np.where(reissue & (model.pair[e["conv"]] >= 0), model.pair[e["conv"]], e["conv"])
    t0 = c.ts[e["first_ev"]]
    t_nak = _ts(c, e["nak_ev"])
    by_nak = np.isin(trigger, ("nak", "rnr")) & (e["nak_ev"] >= 0)
    silence = t0 - _ts(c, e["prev_req_ev"])
    delay = np.where(by_nak, t0 - t_nak, np.where(e["prev_req_ev"] >= 0, silence, 0))
    nak_psn = np.where(trigger == "nak", e["nak_ext"] % PSN_MOD, -1)
    df = pd.DataFrame(
        {
            "flow_id": flow.astype(np.int64),
            "src_ip": pp.ips[model.src[flow]],
            "dst_ip": pp.ips[model.dst[flow]],
            "dest_qp": model.qp[flow],
            "ts": t0 / 1e9,
            "ts_ns": t0,
            "trigger": pd.Categorical(trigger, categories=TRIGGERS),
            "trigger_certainty": pd.Categorical(trigger_certainty, categories=CERTAINTIES),
            "nak_psn": pd.array(np.where(nak_psn >= 0, nak_psn, 0), "Int64"),
            "nak_frame": pd.array(c.frames_of(e["nak_ev"], pp), "Int64"),
            "nak_frames": _nak_frames(x, e, by_nak),
            "start_psn": e["start_ext"] % PSN_MOD,
            "last_psn": e["end_ext"] % PSN_MOD,
            "packets": np.where(reissue, e["n_resp"], e["n_resent"]),
            "mode": pd.Categorical(mode, categories=MODES),
            "mode_certainty": pd.Categorical(mode_certainty, categories=CERTAINTIES),
            "delay_s": np.round(delay / 1e9, 9),
            "first_frame": c.frames_of(e["first_ev"], pp),
            "evidence_frames": _evidence(x, e, trigger),
            "nak_latency_ns": pd.array(np.where(by_nak, t0 - t_nak, 0), "Int64"),
            "retransmission_latency_ns": pd.array(t0 - _ts(c, e["orig_ev"]), "Int64"),
            "silence_ns": pd.array(silence, "Int64"),
            "paused_ns": x.paused_ns,
            "resumed": e["resumed"] > 0,
            "late_frames": _late_or_resent(x, e, trigger_certainty == UNCERTAIN),
        }
    )
    df.loc[~by_nak, "nak_frame"] = pd.NA
    df.loc[(trigger != "nak") | (e["nak_ev"] < 0), "nak_psn"] = pd.NA
    df.loc[~by_nak, "nak_latency_ns"] = pd.NA
    df.loc[e["orig_ev"] < 0, "retransmission_latency_ns"] = pd.NA
    df.loc[e["prev_req_ev"] < 0, "silence_ns"] = pd.NA
    by_time = np.lexsort((df["first_frame"].to_numpy(), t0))
    row_of = np.empty(len(by_time), np.int64)
    row_of[by_time] = np.arange(len(by_time))
    return df.take(by_time).reset_index(drop=True), row_of


def _with_held_naks(x: Context, e: np.ndarray) -> np.ndarray:
    """The episodes as the table shows them: a run held by a pause (_held_runs) names the
    NAK of the run it went on from; in episode order, so a run held twice names its first
    part's (the part before it holds no NAK of its own)."""
    held = np.flatnonzero(x.held_of >= 0) if len(x.held_of) == len(e) else np.zeros(0, np.int64)
    if not len(held):
        return e
    e = e.copy()
    for k in held.tolist():  # such runs are few
        for col in ("nak_ev", "nak_ext", "nak_kind"):
            e[col][k] = e[col][x.held_of[k]]
    return e


def empty_episodes() -> pd.DataFrame:
    """The retransmissions table with no rows (same columns and dtypes)."""
    out = pd.DataFrame(
        {
            "flow_id": pd.Series(dtype=np.int64),
            "src_ip": pd.Series(dtype=object),
            "dst_ip": pd.Series(dtype=object),
            "dest_qp": pd.Series(dtype=np.int64),
            "ts": pd.Series(dtype=float),
            "ts_ns": pd.Series(dtype=np.int64),
            "trigger": pd.Categorical([], categories=TRIGGERS),
            "trigger_certainty": pd.Categorical([], categories=CERTAINTIES),
            "nak_psn": pd.array([], "Int64"),
            "nak_frame": pd.array([], "Int64"),
            "nak_frames": pd.Series(dtype=object),
            "start_psn": pd.Series(dtype=np.int64),
            "last_psn": pd.Series(dtype=np.int64),
            "packets": pd.Series(dtype=np.int64),
            "mode": pd.Categorical([], categories=MODES),
            "mode_certainty": pd.Categorical([], categories=CERTAINTIES),
            "delay_s": pd.Series(dtype=float),
            "first_frame": pd.Series(dtype=np.int64),
            "evidence_frames": pd.Series(dtype=object),
            "nak_latency_ns": pd.array([], "Int64"),
            "retransmission_latency_ns": pd.array([], "Int64"),
            "silence_ns": pd.array([], "Int64"),
            "paused_ns": pd.Series(dtype=np.int64),
            "resumed": pd.Series(dtype=bool),
            "late_frames": pd.Series(dtype=object),
        }
    )
    return out


def ack_timeout_estimate(delay_s: float) -> tuple[int, float]:
    """Nearest IBTA ACK timeout 4.096 us * 2^k to an observed silence: (k, seconds)."""
    k = int(np.clip(np.round(np.log2(max(delay_s, 1e-12) / ACK_TIMEOUT_UNIT_S)), 0, 31))
    return k, ACK_TIMEOUT_UNIT_S * 2**k
