"""The late first copies an episode leaves open (its `late_frames`): a copy the capture
saw first of a PSN, which may have been the original, late on a path that reorders, or a
resend whose original the capture never saw."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import Context
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, READ_RESPONSE, REQUEST


def late_frames(x: Context, e: np.ndarray, cause_open: np.ndarray) -> list[list[int]]:
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
