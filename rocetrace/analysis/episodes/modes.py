"""Each episode's recovery mode (go-back-N, go-back-0, selective repeat) and its
certainty, from the resent PSNs' shape and, where that is open, the same NIC's certain
episodes (the recovery policy is a NIC setting).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    LIKELY,
    UNCERTAIN,
    Context,
    above_nak,
    among,
    below_nak_restarts,
    longest_loss,
    op_class,
    read_reissue,
    right_after_no_cause,
    selective_repeat_hosts,
    sending_hosts,
)
from rocetrace.analysis.episodes.go_back_0 import (
    go_back_0_lost_more_above,
    go_back_0_may_hide,
    hidden_first,
    message_starts_at_nak,
    more_lost_than_go_back_n,
    resolve_hidden_first,
    restart_below_ack,
    timer_below_answered_nak,
)
from rocetrace.analysis.episodes.runs import resent_sends_only, resumed_into_repeat, resumed_split
from rocetrace.analysis.episodes.shapes import (
    back_to_back,
    lone_resend_run_lost,
    newest_twice,
    repeat_completed,
    repeat_goes_nowhere,
    repeat_of_own_psn,
    tail_of_lost_repeat,
    whole_selective_repeat,
)
from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.prepared import NAK, POS_FIRST, POS_ONLY


def settled_modes(
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
    gb0 = below_nak_restarts(e)
    mode = np.select([gb0, tail_skip], ["go-back-0", "selective-repeat"], "go-back-n")
    mode = mode.astype(object)
    mode[read_reissue(e)] = "go-back-n"
    certainty = np.full(len(e), UNCERTAIN, dtype=object)
    reissue = read_reissue(e) & (trigger == "read_reissue") & (trigger_certainty != UNCERTAIN)
    certainty[reissue | gb0 | (middle > 0)] = CERTAIN
    # below a NAK of a later PSN while a NAK of its own first PSN was seen too: that NAK's
    # answer may be this restart, taken for another run (a NAK storm)
    certainty[gb0 & (e["own_nak_seen"] == 1) & ~x.own_answered] = UNCERTAIN
    certainty[gb0 & x.own_answered] = LIKELY  # as its trigger (own_nak_answered)
    upstream = x.losses_upstream[e["conv"]]
    # no NIC repeats a SEND selectively (selective repeat covers RDMA READ and WRITE only):
    # a SEND run's skip shows resends lost on the way or missed by the capture point
    repeat = tail_skip & ~overtaken & ~resent_sends_only(x, e)
    certainty[repeat & ~upstream] = CERTAIN
    # back to back where requests are lost upstream: a switch queue between the loss and
    # the capture point may have closed the gap a lost resend left, so only likely
    certainty[back_to_back(x, e, repeat & upstream)] = LIKELY
    # a go-back-N would have lost every resend the skip passes over, more in a row than the
    # path loses anywhere else in the capture
    burst = repeat & (certainty != CERTAIN) & (e["skipped"] >= 2)
    certainty[burst & (e["skipped"] > longest_loss(x.conv)[e["conv"]])] = LIKELY
    hidden_any = hidden_first(x, e, trigger, gb0)
    # a timer's restart whose message begins at or above the first PSN not acknowledged: a
    # go-back-0 would begin where its go-back-N does, so it is no restart inside a message
    same_start = (trigger == "timeout") & (hidden_any > 0)
    same_start &= more_lost_than_go_back_n(e, trigger, hidden_any) <= 0
    hidden_any = np.where(same_start, 0, hidden_any)
    hidden = np.where(middle > 0, hidden_any, 0)
    certainty[hidden != 0] = UNCERTAIN
    host = sending_hosts(x, e)
    gb0_shows = gb0 & (certainty == CERTAIN) & ~not_shown
    below_nak = timer_below_answered_nak(x, e, trigger, trigger_certainty) & ~not_shown
    x.seen["gb0_hosts"] = frozenset(np.unique(host[gb0_shows | below_nak]).tolist())
    # every restart inside a message counts, a single resend too: a go-back-0 NIC would
    # have lost its message's first resends on each
    inside = pd.Series(host[hidden_any != 0]).value_counts()
    x.seen["hidden"] = tuple(sorted((str(k), int(v)) for k, v in inside.items()))
    nic = x.nic or NicContext(gb0_hosts=x.seen["gb0_hosts"], hidden=x.seen["hidden"])  # type: ignore[arg-type]
    more = more_lost_than_go_back_n(e, trigger, hidden)
    resolve_hidden_first(host, hidden, more, mode, certainty, nic, trigger == "nak")
    cut_short = (e["n_resent"] == 1) & (e["end_ext"] < e["last_sent_first"])
    below_ack = restart_below_ack(x, e, trigger, hidden_first(x, e, trigger, gb0))
    certainty[below_ack] = UNCERTAIN
    certainty[x.split_open] = UNCERTAIN  # its runs may be two episodes' (above)
    certainty[resumed_into_repeat(x.conv, e)] = UNCERTAIN
    send_class = op_class(e["start_opcode"]) == "send"
    certainty[resumed_split(x, e) & ~send_class] = UNCERTAIN
    # a SEND run cut short after several resends, each of a PSN a NAK asked for: what both
    # policies resend (selective repeat each NAKed PSN, go-back-N the run), and a SEND's
    # policy is go-back-N (below)
    sends_only = resent_sends_only(x, e, reached=True)
    cut_run = sends_only & (middle == 0) & (e["skips"] == 0)
    cut_run &= e["end_ext"] < e["last_sent_first"]
    # a SEND's first resend, then a skip to the newest: no NIC repeats a SEND selectively,
    # and a go-back-N whose resends the skip passed over were lost on the way (or missed by
    # the capture point, which may drop frames) sends the same (the policy, as for what
    # both resend)
    send_skip = tail_skip & ~overtaken & resent_sends_only(x, e)
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
    send = send_class & (policy == "") & ~go_back_0_may_hide(e, trigger, hidden_any, host, nic)
    send &= ~below_ack & ~np.isin(host, list(nic.gb0_hosts))
    policy[send] = "go-back-n"
    # an ACK timer resends from the sender's first unacknowledged PSN and goes back N
    # (selective repeat answers NAKs): a restart at or above every ACK and response seen is
    # at that PSN whatever the NIC's policy (restart_below_ack), unless it is inside a message
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
    rdma_nak &= (e["start_ext"] == e["nak_ext"]) & (op_class(e["start_opcode"]) == "rdma")
    lone = cut_short & rdma_nak
    lost = lone_resend_run_lost(x, e, lone)
    # or, no split in doubt (more of the run before it, maybe), on a NIC that shows a
    # selective repeat no go-back makes: it repeats a READ's or WRITE's NAKed PSN
    # selectively (its resend of the newest lost on the way)
    repeat_nic = np.isin(host, list(selective_repeat_hosts(x)))
    alone = np.ones(len(e), bool)
    tail = np.zeros(len(e), bool)
    if len(x.alt) == len(e):
        alone = (x.alt < 0) & (x.alt2 < 0)
        # a split of the newest PSN that may be more of such a repeat, of one resend so
        # far: then it is that repeat's own resend of the newest
        tail = (x.alt >= 0) & (x.alt2 < 0) & repeat_goes_nowhere(x, e, x.alt)
        tail &= e["n_resent"][np.maximum(x.alt, 0)] == 1
    lone &= ((lost >= 2) & (lost > longest_loss(x.conv)[e["conv"]])) | (repeat_nic & alone)
    # and a lone resend of the newest PSN sent, what both policies resend alone
    newest = same_packets & (e["n_resent"] == 1) & rdma_nak & repeat_nic & (alone | tail)
    lone |= newest & (certainty != CERTAIN)
    mode[lone], certainty[lone] = "selective-repeat", LIKELY
    # a run that went on through a PSN soon after its NAK may be two episodes, the second
    # from that resend on: its shape shows one policy only as likely (the other reading
    # needs an answer sooner than any the path shows)
    near = among(len(e), x.near)
    certainty[(near | x.own_repeat) & (certainty == CERTAIN)] = LIKELY
    # such a run whose resends show both policies' marks (a PSN no NAK asked for, and a
    # skip to the newest PSN sent): read as two episodes, each may show its own policy
    certainty[near & (e["unasked"] > 0) & (e["tail_skips"] > 0)] = UNCERTAIN
    # a run above its NAKed PSN (its first resends lost, above_nak): a go-back-0 would have
    # begun at that PSN's message, which only a message begun at that PSN rules out
    above = above_nak(e)
    certainty[above & (certainty == CERTAIN)] = LIKELY
    certainty[above & right_after_no_cause(e, trigger)] = UNCERTAIN
    # unless the same NIC shows a certain go-back-N (from inside a message) for the same
    # operation class and cause: it is no go-back-0 NIC (recovery is a NIC setting)
    back_n = (mode == "go-back-n") & (shown_policy == "go-back-n")
    back_n &= trigger_certainty != UNCERTAIN
    # or a go-back-0 of that NAK would have lost more in a row on the way (as for a restart
    # inside a message, resolve_hidden_first)
    back_n |= go_back_0_lost_more_above(x, e, above, host, nic)
    certainty[above & ~message_starts_at_nak(x, e) & ~(back_n & (certainty != UNCERTAIN))] = (
        UNCERTAIN
    )
    # or a selective repeat's skip to the newest PSN sent after its lost resend
    newest = above & (e["start_ext"] >= e["last_sent_first"])
    certainty[newest] = UNCERTAIN
    # which it is, likely, when a go-back-N would have lost more resends in a row than the
    # path loses anywhere else (tail_of_lost_repeat), and the NIC shows no other policy
    # for READ and WRITE NAKs
    shown = (x.nic or NicContext(modes=x.seen["modes"])).policy()  # type: ignore[arg-type]
    rdma_policy = pd.Series(host + "/rdma/nak").map(shown).to_numpy(object)
    newest &= pd.isna(rdma_policy) | np.isin(rdma_policy, ("", "selective-repeat"))
    tail = tail_of_lost_repeat(x, e, newest)
    mode[tail], certainty[tail] = "selective-repeat", LIKELY
    # an episode whose cause is open may be two NICs' episodes run together: its PSNs then
    # show no one policy; and a run cut by such an episode may go on in it, unless none of
    # its resends can go on there
    certainty[trigger_certainty == UNCERTAIN] = UNCERTAIN
    # a restart that took a split's NAK (claim_taken_naks): each resend after its first
    # may answer a NAK of its own, a WRITE's by selective repeat; a SEND's goes back N; not
    # a selective repeat of its own PSN whose newest no NAK asked for
    claimed = among(len(e), x.claimed)
    repeat = repeat_of_own_psn(x, e, claimed & (mode == "selective-repeat"))
    certainty[claimed & ~repeat & ~sends_only] = UNCERTAIN
    cutter = np.flatnonzero((trigger_certainty == UNCERTAIN) & (e["cut_of"] >= 0))
    cutter = cutter[~repeat[e["cut_of"][cutter]]]  # a whole selective repeat: goes on nowhere
    certainty[e["cut_of"][cutter[~_cannot_go_on(e, cutter)]]] = UNCERTAIN
    if len(x.alt) == len(e):
        whole = whole_selective_repeat(x, e, mode, certainty)
        # where requests are lost upstream (the two back to back), and a lone resend's split
        # (above: more of the run it split, that run would be a go-back-N that lost as many
        # in a row, as no selective repeat resends a PSN but its NAKed one and the newest),
        # the split keeps its mode; the run's, which may hold two episodes' resends, is
        # weighed as before
        keep = (whole & x.losses_upstream[e["conv"]]) | (lone & (certainty != UNCERTAIN))
        whole &= ~x.losses_upstream[e["conv"]]
        twin = newest_twice(x.conv, e) & (x.alt == e["alt_of"])
        single = (lone | known) & (mode == "selective-repeat") & (certainty != UNCERTAIN)
        single &= cut_short
        twin |= repeat_completed(x, e, x.alt, single)
        alt = np.where(whole, -1, x.alt)
        _same_mode_either_run(alt, mode, certainty, sends_only, keep, twin)
        if len(x.alt2) == len(e):  # a split that may continue either of two runs: both
            alt2 = np.where(whole, -1, x.alt2)
            twin2 = repeat_completed(x, e, x.alt2, single)
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


def _same_mode_either_run(
    alt: np.ndarray,
    mode: np.ndarray,
    certainty: np.ndarray,
    send: np.ndarray,
    keep: np.ndarray,
    twin: np.ndarray,
) -> None:
    """A split the capture cannot tell from more of the run it cut (either_run) keeps its
    mode only when the run's mode is the same and neither is open: then both readings
    resend by one policy. Else both are open (as a run cut by an episode of open cause),
    except a SEND run's go-back-N: selective repeat covers RDMA READ and WRITE only, so a
    SEND's run goes back N whether or not the split's resends are more of it; and a run
    whose split is of `twin` (newest_twice: the run resends the same PSNs either way).
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


def _host_policy(
    x: Context, e: np.ndarray, trigger: np.ndarray, mode: np.ndarray, certainty: np.ndarray
) -> np.ndarray:
    """Per episode, the one mode its sending NIC shows in its certain episodes of the same
    operation class and the same kind of cause ("" when none or several): the recovery
    policy is a NIC setting, and it answers a NAK (selective repeat, say) otherwise than
    its timer (which goes back N on the same NIC)."""
    cause = np.where(trigger == "nak", "nak", "timer").astype(object)
    key = sending_hosts(x, e).astype(object) + "/" + op_class(e["start_opcode"]) + "/" + cause
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
