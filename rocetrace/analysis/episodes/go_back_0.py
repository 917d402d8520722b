"""Go-back-0 against go-back-N: a restart below the NAK's PSN, whose first resends may
be hidden (lost before the capture point) or below an ACK the sender had not received.
"""

from __future__ import annotations

import numpy as np

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    LIKELY,
    READ_REQUEST_OP,
    UNCERTAIN,
    Context,
    above_nak,
    acked_by_responses,
    among,
    requests_by_psn,
)
from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    POS_FIRST,
    POS_LAST,
    POS_ONLY,
    READ_RESPONSE,
    REQUEST,
)


def timer_below_answered_nak(
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
    answered &= ~among(len(e), x.near) & ~among(len(e), x.claimed)
    naks = np.flatnonzero(answered & (e["nak_ev"] >= 0))
    for k in timers.tolist():  # timer restarts are few
        j = naks[(e["conv"][naks] == e["conv"][k]) & (e["first_ev"][naks] < e["first_ev"][k])]
        below = (e["start_ext"][k] < e["nak_ext"][j]) & (e["start_ext"][k] >= e["msg_first"][j])
        out[k] = bool(below.any())
    return out


def go_back_0_lost_more_above(
    x: Context, e: np.ndarray, above: np.ndarray, host: np.ndarray, nic: NicContext
) -> np.ndarray:
    """Runs above their NAKed PSN (`above`, their first resends lost before the capture
    point) inside the message of that PSN, on a NIC that shows no go-back-0: a go-back-0 of
    the NAK would have lost, besides the go-back-N's lost resends (from the NAKed PSN up to
    the run's first), the message's first PSNs up to the NAKed one. Its go-back-N is as
    likely as a restart inside a message (resolve_hidden_first) when that is two resends
    or more in a row, or when the NIC restarts inside messages twice or more (a go-back-0
    NIC would have lost its message's first resends on each). The message's first PSN
    counts only where the capture saw its first copy begin the message (a message whose
    first packet the capture never saw would read as part of the one before it)."""
    known = e["msg_first"] > np.iinfo(np.int64).min // 4
    inside = above & known & (e["msg_first"] <= e["nak_ext"])  # the NAKed PSN's message
    inside &= ~np.isin(host, list(nic.gb0_hosts))
    ks = np.flatnonzero(inside)
    if len(ks):
        requests = requests_by_psn(x)
        for k in ks.tolist():  # such runs are few
            ev = requests.first_copy(int(e["conv"][k]), int(e["msg_first"][k]))
            inside[k] = ev >= 0 and x.pp.position[x.conv.row[ev]] in (POS_FIRST, POS_ONLY)
    more = e["nak_ext"] - e["msg_first"]
    counts = dict(nic.hidden)
    twice = np.array([counts.get(h, 0) >= 2 for h in host.tolist()], bool)
    return inside & ((more >= 2) | twice)


def message_starts_at_nak(x: Context, e: np.ndarray) -> np.ndarray:
    """Per episode: did the PSN before its NAKed one end a message (its first copy a LAST or
    ONLY), or the NAKed PSN begin one (its first copy a FIRST or ONLY: the PSN before it may
    be unseen, before the capture began)? Then a go-back-0 of that NAK begins where a
    go-back-N does."""
    out = np.zeros(len(e), bool)
    above = np.flatnonzero(above_nak(e))
    if not len(above):
        return out
    requests = requests_by_psn(x)
    for k in above.tolist():  # such runs are few
        ev = requests.first_copy(int(e["conv"][k]), int(e["nak_ext"][k]) - 1)
        out[k] = ev >= 0 and x.pp.position[x.conv.row[ev]] in (POS_LAST, POS_ONLY)
        ev = requests.first_copy(int(e["conv"][k]), int(e["nak_ext"][k]))
        out[k] |= ev >= 0 and x.pp.position[x.conv.row[ev]] in (POS_FIRST, POS_ONLY)
    return out


def restart_below_ack(
    x: Context, e: np.ndarray, trigger: np.ndarray, hidden: np.ndarray
) -> np.ndarray:
    """Timer restarts at a message's first PSN below an ACK or response the capture saw: a
    go-back-0, or a go-back-N whose sender never got that ACK (lost after the capture
    point): the capture cannot tell which. A NAK's implied acknowledgement does not count:
    a go-back-N that had the NAK restarts at or above it, and a go-back-0's NAK acknowledges
    only what precedes its message, so a restart below only NAKs is at the sender's first
    unacknowledged PSN whatever its policy. A READ response the requester cannot have
    kept does not count either (_acked_in_sequence). So too a restart inside a message
    below such an ACK whose first resends may have been lost before the capture point
    (`hidden`, hidden_first): a go-back-0 from the message's first PSN, or a go-back-N
    whose sender never got the ACK (a sender that had it restarts above it)."""
    c = x.conv
    msg_start = np.isin(e["start_pos"], (POS_FIRST, POS_ONLY)) | (hidden > 0)
    below = (trigger == "timeout") & (e["start_ext"] <= acked_by_responses(c, e)) & msg_start
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


def hidden_first(x: Context, e: np.ndarray, trigger: np.ndarray, gb0: np.ndarray) -> np.ndarray:
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


def more_lost_than_go_back_n(e: np.ndarray, trigger: np.ndarray, hidden: np.ndarray) -> np.ndarray:
    """Per restart inside a message (`hidden`, hidden_first): how many resends more in a
    row a go-back-0 would have lost on the way than a go-back-N. A NAK's go-back-N begins
    at the NAKed PSN, the restart's own; a timer's at the sender's first unacknowledged
    PSN, no later than the one after what the capture saw acknowledged (the sender may have
    missed an ACK, never had one this capture point did not see pass or leave), so a timer
    restart above that PSN lost the resends up to it under either policy."""
    timer_lost = np.maximum(e["start_ext"] - (e["acked"] + 1), 0)
    known = (trigger == "timeout") & (hidden > 0) & (e["acked"] > np.iinfo(np.int64).min // 4)
    return np.where(known, hidden - timer_lost, hidden)


def resolve_hidden_first(
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


def go_back_0_may_hide(
    e: np.ndarray, trigger: np.ndarray, hidden: np.ndarray, host: np.ndarray, nic: NicContext
) -> np.ndarray:
    """Restarts inside a message (`hidden`, hidden_first, whatever PSNs they resent) that a
    go-back-0 whose resends from the message's first PSN were lost on the way would make as
    well, where nothing tells the two apart: such a go-back-0 would have lost no more than
    one resend in a row more than a go-back-N, and the NIC restarts inside messages once
    only (resolve_hidden_first). A SEND's run there shows no go-back-N."""
    more = more_lost_than_go_back_n(e, trigger, hidden)
    inside = dict(nic.hidden)
    twice = np.array([inside.get(h, 0) >= 2 for h in host.tolist()], bool)
    return (hidden != 0) & (more < 2) & ~twice
