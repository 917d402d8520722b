"""Which NAKs an episode may answer (its `nak_frames`): its own, then every NAK another
reading of its resends leaves open (an answer an acknowledgement overtook, a restart at a
PSN two NAKs' answers share, a run held by a pause)."""

from __future__ import annotations

import numpy as np

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import Context, above_nak
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, READ_RESPONSE, REQUEST


def nak_frames(x: Context, e: np.ndarray, by_nak: np.ndarray) -> list[list[int]]:
    """Per episode answering a NAK, every NAK frame it may answer: its own, those a resend
    of its run may answer instead (`x.near`), then those of the runs its first resend may
    continue instead (either_run), nearest first. A run held by a pause (_held_runs) is
    the run it went on from: every NAK that run may answer, it may answer too."""
    own = x.conv.frames_of(np.where(by_nak, e["nak_ev"], -1), x.pp).tolist()
    out = [[f] if f >= 0 else [] for f in own]
    alt = x.alt if len(x.alt) == len(e) else np.full(len(e), -1)
    near = dict(x.near)
    for run, naks in [
        *_overtaken_naks(x.conv, e, by_nak).items(),
        *_restart_naks(x.conv, e, by_nak),
    ]:
        near[run] = sorted({*near.get(run, []), *naks})
    for run, naks in _naks_of_first_psn(x.conv, e, by_nak).items():
        near[run] = sorted({*near.get(run, []), *naks})
    for run, naks in near.items():  # the NAKs a resend of the run may answer instead
        frames = x.conv.frames_of(np.asarray(naks, np.int64), x.pp).tolist()
        out[run] += [f for f in frames if f not in out[run]] if by_nak[run] else []
    alt2 = x.alt2 if len(x.alt2) == len(e) else np.full(len(e), -1)
    for k in np.flatnonzero((alt >= 0) & by_nak):  # splits in doubt: few; runs come first
        out[k] = out[k] + [f for f in out[alt[k]] if f not in out[k]]
        if alt2[k] >= 0:  # the second run it may continue (second_run)
            out[k] = out[k] + [f for f in out[alt2[k]] if f not in out[k]]
    held = x.held_of if len(x.held_of) == len(e) else np.full(len(e), -1)
    for k in np.flatnonzero((held >= 0) & by_nak):  # held runs: few; in episode order
        out[k] = out[k] + [f for f in out[held[k]] if f not in out[k]]
    return out


def _naks_of_first_psn(
    c: cn.Conversations, e: np.ndarray, by_nak: np.ndarray
) -> dict[int, list[int]]:
    """Per NAK's run that begins above the PSN its NAK asked for (above_nak), the NAK
    events (not RNR NAKs) of exactly the run's first PSN seen after that NAK and before the
    run: a NIC restarts at a NAK's PSN, so the run may answer such a NAK. The state machine
    gave it to another copy of that PSN (a run going on through it, sooner than the NAK
    could be answered, say, on a clock too coarse to tell); that copy may be its run's own
    and the restart the NAK's answer. Which NAK is open."""
    out: dict[int, list[int]] = {}
    for k in np.flatnonzero(by_nak & above_nak(e)).tolist():  # runs above their NAK: few
        between = np.arange(e["nak_ev"][k] + 1, e["first_ev"][k])  # grouped by conversation
        own = between[(c.kind[between] == NAK) & (c.ext[between] == e["start_ext"][k])]
        if len(own):
            out[k] = own.tolist()
    return out


def _overtaken_naks(c: cn.Conversations, e: np.ndarray, by_nak: np.ndarray) -> dict[int, list[int]]:
    """Per NAK's run that skipped forward over PSNs an ACK had covered (`ack_skips`, or
    resumed past where it stopped, at the first PSN not acknowledged: resumes_cut) or to
    the newest PSN sent (`tail_skips`), the NAKs (not RNR NAKs) whose answer, overtaken by
    an acknowledgement, may begin at the skip's resend (_skip_answers; for a skip to the
    newest, _repeats_acknowledged): which NAK the resends from the skip on answer is
    open."""
    out: dict[int, list[int]] = {}
    skipped = (e["ack_skips"] > 0) | (e["resumed"] > 0) | (e["tail_skips"] > 0)
    ks = np.flatnonzero(by_nak & skipped)
    if not len(ks):
        return out
    taken = e["nak_ev"][e["nak_ev"] >= 0]
    overtaken = (e["ack_skips"] > 0) | (e["resumed"] > 0)
    none = np.zeros(0, np.int64)
    for k, a, b in _forward_skips(c, ks):  # skips of runs over acknowledged PSNs: few
        naks = _skip_answers(c, a, b, int(e["first_ev"][k]), taken) if overtaken[k] else none
        if c.ext[b] == e["last_sent_first"][k]:
            naks = np.union1d(naks, _repeats_acknowledged(c, b, int(e["first_ev"][k]), taken))
        if len(naks):
            out[k] = sorted({*out.get(k, []), *naks.tolist()})
    return out


def _restart_naks(
    c: cn.Conversations, e: np.ndarray, by_nak: np.ndarray
) -> list[tuple[int, list[int]]]:
    """Per episode answering a NAK, the NAKs of a PSN below its first that no episode
    before it took, seen since the last new data and each followed, ahead of its first
    resend, by an ACK or response up to the PSN before it (or a NAK of it or beyond): that
    NAK's go-back-N, overtaken by the acknowledgement, begins at this restart's PSN as its
    own NAK's answer does, so which one it answers is open. Where such a NAK is a later
    episode's that begins at the PSN this one's NAK asked for, that episode may answer
    this one's NAK in turn (the two answers swapped: both begin there)."""
    out: list[tuple[int, list[int]]] = []
    ks = np.flatnonzero(by_nak & (e["first_ev"] >= 0))
    if not len(ks):
        return out
    new = np.where((c.kind == REQUEST) & ((c.flags & cn.NEW) > 0), np.arange(len(c)), -1)
    last_new = np.maximum.accumulate(new) if len(new) else new
    taker = {int(n): int(k) for k, n in enumerate(e["nak_ev"].tolist()) if n >= 0}
    for k in ks.tolist():
        f = int(e["first_ev"][k])
        naks = _overtaken_before(c, max(int(last_new[f]), 0), f)
        # open, or taken by a later episode (no NIC answers a NAK twice)
        naks = [n for n in naks if taker.get(n, -1) < 0 or e["first_ev"][taker[n]] > f]
        if not naks:
            continue
        out.append((k, naks))
        for n in naks:  # a later restart at this one's NAKed PSN may answer its NAK
            j = taker.get(n, -1)
            if j >= 0 and e["start_ext"][j] == e["nak_ext"][k] and e["nak_ev"][k] >= 0:
                out.append((j, [int(e["nak_ev"][k])]))
    return out


def _overtaken_before(c: cn.Conversations, lo: int, f: int) -> list[int]:
    """The NAK events (not stale) of the conversation between events `lo` and `f` of a
    PSN below request f's, each followed before f by an ACK or response up to the PSN
    before f's, or by a NAK of f's PSN or beyond."""
    window = np.arange(lo + 1, f)
    window = window[c.conv[window] == c.conv[f]]
    stale = (c.flags[window] & cn.STALE) > 0
    naks = window[(c.kind[window] == NAK) & (c.ext[window] < c.ext[f]) & ~stale]
    return naks[_moved_on(c, window, naks, f)].tolist()


def _skip_answers(
    c: cn.Conversations, a: int, b: int, run_first: int, taken: np.ndarray
) -> np.ndarray:
    """The NAKs of PSNs the skip from request `a` to `b` passed over, or of PSNs below it
    that no episode took, seen since the run began (_open_naks_below), before the skip's
    resend and each followed, ahead of it, by an ACK or response up to the PSN before the
    skip's (or a NAK of the skip's PSN or beyond): a NIC answers such a NAK by going back
    from its PSN, and the ACK overtaking that answer moves it on to the first PSN not
    acknowledged, the skip's."""
    lo, hi = c.ext[a], c.ext[b]
    before = _conversation_before(c, b)
    kind, ext = c.kind[before], c.ext[before]
    below = _open_naks_below(c, before, lo, run_first, taken)
    naks = before[((kind == NAK) & (ext > lo) & (ext < hi)) | below]
    return naks[_moved_on(c, before, naks, b)]


def _moved_on(c: cn.Conversations, events: np.ndarray, naks: np.ndarray, f: int) -> np.ndarray:
    """Per NAK event of `naks`: followed, among the sorted `events` and before request f,
    by an ACK or response up to the PSN before f's, or by a NAK of f's PSN or beyond. A NIC
    answers a NAK by going back from its PSN; an acknowledgement overtaking that answer
    moves it on to the first PSN not acknowledged, f's."""
    kind, ext, p = c.kind[events], c.ext[events], c.ext[f]
    movers = events[
        (np.isin(kind, (ACK, ATOMIC_ACK, READ_RESPONSE)) & (ext >= p - 1))
        | ((kind == NAK) & (ext >= p))
    ]
    return _first_after(movers, naks) < f


def _repeats_acknowledged(
    c: cn.Conversations, b: int, run_first: int, taken: np.ndarray
) -> np.ndarray:
    """For a skip to the newest PSN sent (request `b`): the NAKs of a PSN below it that no
    episode took, seen since the run began, each followed ahead of the skip by an ACK or
    response of its PSN or beyond (or a NAK beyond it): a selective repeat resends its
    NAKed PSN and then the newest, and drops the first once it is acknowledged, so its
    answer may be the skip's resend alone."""
    before = _conversation_before(c, b)
    naks = before[_open_naks_below(c, before, c.ext[b] - 1, run_first, taken)]
    kind, ext = c.kind[before], c.ext[before]
    acks = np.isin(kind, (ACK, ATOMIC_ACK, READ_RESPONSE))
    keep = [
        bool(
            ((before > n) & ((acks & (ext >= c.ext[n])) | ((kind == NAK) & (ext > c.ext[n])))).any()
        )
        for n in naks
    ]
    return naks[np.asarray(keep, bool)] if len(naks) else naks


def _conversation_before(c: cn.Conversations, b: int) -> np.ndarray:
    """The events of event b's conversation before it (events are grouped by
    conversation)."""
    return np.arange(int(np.searchsorted(c.conv, c.conv[b])), b)


def _open_naks_below(
    c: cn.Conversations, before: np.ndarray, lo: int, run_first: int, taken: np.ndarray
) -> np.ndarray:
    """Of the events `before`, the NAKs (not stale) of a PSN up to `lo`, recorded after the
    run's first resend and taken by no episode: the run had passed their PSN before the
    NIC had them (a NAK of a PSN the run resends later splits it), so the NIC, answering
    one, goes back to it (or repeats it), and an acknowledgement overtaking that answer
    moves it on to where the run would go on too."""
    stale = (c.flags[before] & cn.STALE) > 0
    return (
        (c.kind[before] == NAK)
        & (c.ext[before] <= lo)
        & (before > run_first)
        & ~stale
        & ~np.isin(before, taken)
    )


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
