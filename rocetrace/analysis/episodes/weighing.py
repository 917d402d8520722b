"""The episode table: every rule weighed, in order, into one row per episode with its
evidence frames, NAK frames and late first copies.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    ACK_TIMEOUT_UNIT_S,
    CERTAINTIES,
    MODES,
    TRIGGERS,
    UNCERTAIN,
    Context,
    above_nak,
    event_ts,
    read_reissue,
)
from rocetrace.analysis.episodes.modes import settled_modes
from rocetrace.analysis.episodes.nak_claims import (
    cap_reserved,
    claim_taken_naks,
    own_nak_on_repeat_nic,
)
from rocetrace.analysis.episodes.triggers import weigh_triggers
from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, READ_RESPONSE, REQUEST
from rocetrace.psn import PSN_MOD


def seen_context(x: Context) -> NicContext:
    """The NIC context the episodes of `x` showed as they were weighed (episode_table)."""
    return NicContext(**x.seen)  # type: ignore[arg-type]


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
    kind, ext, p = c.kind[window], c.ext[window], c.ext[f]
    stale = (c.flags[window] & cn.STALE) > 0
    naks = window[(kind == NAK) & (ext < p) & ~stale]
    acks = window[
        (np.isin(kind, (ACK, ATOMIC_ACK, READ_RESPONSE)) & (ext >= p - 1))
        | ((kind == NAK) & (ext >= p))
    ]
    return naks[_first_after(acks, naks) < f].tolist()


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
    acks = before[np.isin(kind, (ACK, ATOMIC_ACK, READ_RESPONSE)) & (ext >= hi - 1)]
    beyond = before[(kind == NAK) & (ext >= hi)]
    moved_on = np.minimum(_first_after(acks, naks), _first_after(beyond, naks)) < b
    return naks[moved_on]


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
    _open_answer_heads(x, out)
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


def _open_answer_heads(x: Context, out: list[list[int]]) -> None:
    """Adds to `out` (per episode) the frame of each late first copy (read as a late
    original, in no episode) of a PSN above that of the conversation's latest NAK before
    it, followed by its conversation's next request, a resend of a higher PSN that begins
    an episode, where the capture point saw its conversation's requests lost before it.
    Why: a go-back-N answering that NAK resends from the NAKed PSN on, in order; when the
    path lost its first resends before the capture point, the first copy the capture sees
    of the run is one above the NAKed PSN, with the run going on after it. That copy looks
    like the original, late, and is one only on a path that reorders; which it was the
    capture cannot tell, so it is listed with the episode that follows it."""
    c = x.conv
    late = ((c.flags & cn.LATE) > 0) & ((c.flags & (cn.RESENT | cn.NEW)) == 0)
    ev = np.flatnonzero(late & (c.kind == REQUEST) & (c.episode < 0) & (c.conv >= 0))
    ev = ev[x.losses_upstream[c.conv[ev]]] if len(ev) else ev
    for i in ev.tolist():  # late first copies: few
        nxt = _next_request(c, i)
        if nxt < 0 or (c.flags[nxt] & cn.RESENT) == 0 or c.episode[nxt] < 0:
            continue
        if c.ext[nxt] <= c.ext[i] or not _below_latest_nak(c, i):
            continue
        k = int(c.episode[nxt])
        frame = int(c.frames_of(np.array([i], np.int64), x.pp)[0])
        if frame not in out[k]:
            out[k].append(frame)


def _next_request(c: cn.Conversations, i: int) -> int:
    """The conversation's next request event after event `i` (-1: none)."""
    j = i + 1  # events are grouped by conversation
    while j < len(c.kind) and c.conv[j] == c.conv[i]:
        if c.kind[j] == REQUEST:
            return j
        j += 1
    return -1


def _below_latest_nak(c: cn.Conversations, i: int) -> bool:
    """Was the conversation's latest NAK (not RNR NAK) before event `i` of a PSN below
    request `i`'s, with no ACK or response between them reaching `i`'s PSN?"""
    j = i - 1  # events are grouped by conversation
    while j >= 0 and c.conv[j] == c.conv[i]:
        if c.kind[j] in (ACK, ATOMIC_ACK, READ_RESPONSE) and c.ext[j] >= c.ext[i]:
            return False
        if c.kind[j] == NAK:
            return bool(c.ext[j] < c.ext[i])
        j -= 1
    return False


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
    """Adds to `out` (per episode) each first copy flagged OPEN (original_open) and each
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
    e = claim_taken_naks(x, e)
    e = own_nak_on_repeat_nic(x, e)
    c, pp, model = x.conv, x.pp, x.model
    trigger, trigger_certainty = weigh_triggers(x, e)
    mode, mode_certainty = settled_modes(x, e, trigger, trigger_certainty)
    cap_reserved(x, e, trigger_certainty, mode_certainty)
    e = _with_held_naks(x, e)
    reissue = read_reissue(e) & (e["n_resp"] >= 0)
    flow = np.where(reissue & (model.pair[e["conv"]] >= 0), model.pair[e["conv"]], e["conv"])
    t0 = c.ts[e["first_ev"]]
    t_nak = event_ts(c, e["nak_ev"])
    by_nak = np.isin(trigger, ("nak", "rnr")) & (e["nak_ev"] >= 0)
    silence = t0 - event_ts(c, e["prev_req_ev"])
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
            "retransmission_latency_ns": pd.array(t0 - event_ts(c, e["orig_ev"]), "Int64"),
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
