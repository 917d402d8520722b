"""The shapes of resent PSNs that tell a NIC's recovery apart: a selective repeat of the
sender's own PSN, the tail of a lost repeat, a lone resend whose run was lost before the
capture point, back-to-back copies, and the unseen trains between resends.
"""

from __future__ import annotations

import numpy as np

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    UNCERTAIN,
    Context,
    RequestsByPsn,
    longest_loss,
    op_class,
    requests_by_psn,
    responses_of,
    selective_repeat_hosts,
    sending_hosts,
)
from rocetrace.analysis.episodes.runs import near_naks, resumed_at_split_psn
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, PFC, READ_RESPONSE, REQUEST, RNR_NAK
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS


def repeat_of_own_psn(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
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
    asked = near_naks(c, e, shape)
    upstream = x.losses_upstream[e["conv"]]
    longest = longest_loss(c)
    b2b = back_to_back(x, e, shape & upstream)
    naks, acks = responses_of(c)
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


def tail_of_lost_repeat(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Of the runs in `which` (above their NAKed PSN, at the newest PSN sent): one resend,
    the NAK of a READ's or WRITE's PSN, no NAK of another PSN up to the newest since that
    PSN was first sent, and a go-back-N that reached the newest would have lost more
    resends in a row than the path loses anywhere else, two or more (_go_back_lost; a
    selective repeat lost one, its first): the tail of the NAK's selective repeat."""
    out = which & (e["n_resent"] == 1)
    c = x.conv
    requests = requests_by_psn(x)
    longest = longest_loss(c)
    naks, acks = responses_of(c)
    for k in np.flatnonzero(out).tolist():  # such runs are few
        # the resend's own PSN: a READ request's span is no PSNs a go-back-N would resend
        conv, n, newest = int(e["conv"][k]), int(e["nak_ext"][k]), int(e["start_ext"][k])
        first, until = requests.first_copy(conv, n), int(e["first_ev"][k])
        naked = op_class(x.pp.opcodes_at(c.row[first : first + 1]))[0] if first >= 0 else ""
        asked, _ = _naks_above(x, naks, conv, n, newest, first, until)
        lost = _go_back_lost(c, acks, (conv, first, until), n, newest, asked)
        out[k] = naked == "rdma" and not len(asked) and lost >= 2 and lost > longest[conv]
    return out


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
    requests = requests_by_psn(x)
    firsts = [requests.first_copy(conv, int(q)) for q in psns]
    op = [op_class(x.pp.opcodes_at(c.row[f : f + 1]))[0] if f >= 0 else "" for f in firsts]
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


def repeat_goes_nowhere(x: Context, e: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Per episode, is run `runs[k]` (-1: none) a selective repeat that nothing can go on
    from: the answer to a NAK of a READ's or WRITE's PSN, its NAKed PSN and at most the
    newest PSN sent after it, sent by a NIC that shows a selective repeat no go-back makes
    (repeat_of_own_psn: recovery is a NIC setting, and such a NIC repeats a READ's or
    WRITE's NAKed PSN selectively), and so is every run it may continue (a split in doubt,
    `alt_of`)? Such a run ends with its newest resend: a later resend at its next PSN is no
    more of it, held by a pause or not."""
    repeat = np.isin(sending_hosts(x, e), list(selective_repeat_hosts(x))) & (e["nak_kind"] == NAK)
    repeat &= (e["start_ext"] == e["nak_ext"]) & (op_class(e["start_opcode"]) == "rdma")
    shape = (e["n_resent"] == 1) | ((e["n_resent"] == 2) & (e["tail_skips"] == 1))
    repeat &= shape & (e["unasked"] == 0) & (e["resumed"] == 0) & (e["alt_two"] < 0)
    out = np.zeros(len(runs), bool)
    for k in np.flatnonzero(runs >= 0).tolist():  # runs split off for a silence: few
        run = int(runs[k])
        while repeat[run] and e["alt_of"][run] >= 0:
            run = int(e["alt_of"][run])
        out[k] = bool(repeat[run]) and e["alt_of"][run] != -2
    return out


def lone_resend_run_lost(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
    """Per episode of `which` (one resend, of its NAKed PSN, not the newest PSN sent): how
    many resends a go-back-N would have lost in a row after it, at least, when the
    conversation's next request is new data (a go-back-N sends it only after its run) or
    comes the shortest ACK timer after it (a run goes back to back; not where the capture
    shows PFC pauses, which hold a run back): one per PSN the capture saw requested from
    where the run would have gone on (past the resend, past what was acknowledged in time
    to stop it, or at a PSN a NAK since the episode's asked for, whichever is highest) up
    to the newest PSN sent. A selective repeat resends the NAKed PSN and then the newest:
    one lost resend. 0 where the next request may be more of such a run. A response seen
    sooner before that next request than it can reach the sender (_reach) stopped none of
    the run: away from the sender, an ACK the resend itself drew is seen before the
    go-back-N's next resends, which left the sender before that ACK reached it."""
    out = np.zeros(len(e), np.int64)
    c = x.conv
    quiet_ok = not (x.pp.kind == PFC).any()
    requests = requests_by_psn(x)
    acks = (ACK, ATOMIC_ACK, READ_RESPONSE)
    reach = _reach(x, e)
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
        acked = ev[np.isin(c.kind[ev], acks) & (c.ts[ev] + reach[k] <= c.ts[nxt])]
        naked = ev[np.isin(c.kind[ev], (NAK, RNR_NAK))]
        floor = max(
            int(e["cursor"][k]),
            int(e["acked"][k]) + 1,
            int(c.ext[acked].max(initial=-(1 << 62))) + 1,
            int(c.ext[naked].max(initial=-(1 << 62))),
        )
        out[k] = requests.psns_between(conv, floor, int(e["last_sent_first"][k]) + 1)
    return out


def _reach(x: Context, e: np.ndarray) -> np.ndarray:
    """Per episode: how long after this capture point sees a response the sender's requests
    can show it, at least: the path's shortest NAK answer less twice the slack (what this
    capture point sees reaches the sender's answers no sooner, _unseen_train), 0 where
    unmeasured."""
    floor = cn.path_floor(x.conv, e["conv"])
    return np.where(floor >= 0, np.maximum(floor - 2 * x.tol.slack_ns, 0), 0)


def _unseen_train(x: Context, e: np.ndarray, k: int, nxt: int, requests: RequestsByPsn) -> int:
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


def whole_selective_repeat(
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
    tight = back_to_back(x, e, out & upstream) & _no_room_for_copy(x, e, out & upstream)
    out &= ((certainty == CERTAIN) & ~upstream) | tight
    for k in np.flatnonzero(out):  # such splits are few
        ev = np.arange(e["nak_ev"][k] + 1, e["last_ev"][k])
        ev = ev[c.conv[ev] == e["conv"][k]]
        nak = np.isin(c.kind[ev], (NAK, RNR_NAK))
        passed = nak & (c.ext[ev] > e["start_ext"][k]) & (c.ext[ev] <= e["end_ext"][k])
        out[k] = not (passed | ((c.flags[ev] & cn.ADVANCE) > 0)).any()
    return out


def repeat_completed(x: Context, e: np.ndarray, alt: np.ndarray, single: np.ndarray) -> np.ndarray:
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
    burst = (passed >= 2) & (passed > longest_loss(x.conv)[e["conv"]])
    return out & (passed >= 1) & (~x.losses_upstream[e["conv"]] | burst)


def newest_twice(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
    """Splits in doubt whose one resend is the newest PSN sent, after which the run they
    may continue resumed at that same PSN as its last resend: one copy is more of the run
    and the other the split's NAK's answer, in either order, so the run resends the same
    PSNs in both readings and its shape shows one mode (the split's lone resend of the
    newest is what both policies send)."""
    out = resumed_at_split_psn(c, e) & (e["n_resent"] == 1)
    out &= e["start_ext"] >= e["last_sent_first"]
    run = np.maximum(e["alt_of"], 0)
    return out & (c.ext[e["last_ev"][run]] == e["start_ext"])


def back_to_back(x: Context, e: np.ndarray, which: np.ndarray) -> np.ndarray:
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
    requests = requests_by_psn(x)
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
