"""Which NAK each episode answers: NAKs are answered in arrival order, a clean answer
takes its NAK, and a NAK a split in doubt may have taken is claimed by the restart that
surely needs it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    LIKELY,
    Context,
    event_ts,
    message_first,
    op_class,
    sending_hosts,
)
from rocetrace.analysis.episodes.runs import resent_sends_only, split_at_the_floor
from rocetrace.analysis.episodes.shapes import repeat_of_own_psn
from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.prepared import NAK, REQUEST, RNR_NAK
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS


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


def own_nak_answered(
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


def claim_taken_naks(x: Context, e: np.ndarray) -> np.ndarray:
    """Restarts (the PSN went back) with no NAK of their own PSN left, because splits in
    doubt (either_run) took every one: were each such split its NAK's answer, the restart
    would have no cause, and a NIC goes back only for a NAK, a timer or a run it resumes.
    With no silence a timer needs, and no run it may resume (one cut since the last new
    data that stopped at or below its PSN, with no SEND resend since: a SEND's run goes
    back, which ends every run before it) or a selective repeat's shape no run resumed
    makes (repeat_of_own_psn), the restart answers those NAKs (each claimed by it alone)
    and the splits are more of their runs. Returns the episode records with
    such a restart's NAK filled in (a copy), `x.claimed` listing its NAK events."""
    x.claimed, x.claimed_repeat = {}, set()
    cand = (e["start_kind"] == cn.START_RESTART) & (e["nak_ev"] < 0) & (e["own_nak_seen"] == 1)
    if not cand.any():
        return e
    c = x.conv
    t0 = c.ts[e["first_ev"]]
    wait = t0 - event_ts(c, e["nak_ev"]) - x.paused_ns
    doubt = split_at_the_floor(x, e, wait) & (e["alt_of"] != -1) & (e["nak_ev"] >= 0)
    timer = t0 - event_ts(c, e["prev_req_ev"]) >= MIN_ACK_TIMEOUT_NS - x.tol.slack_ns
    sends = resent_sends_only(x, e)
    repeat = repeat_of_own_psn(x, e, cand & ~timer)
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
    later selective repeat of its PSN claims (claim_taken_naks, repeat_of_own_psn: a NIC
    sends one only for a NAK of its first PSN, and answers a NAK once), so the split was
    more of its run; and, for a restart that claims NAKs splits in doubt took, those NAKs
    and the later ones its run answers in order (_naks_in_order), each marked
    ANSWERS_RESERVED at the resend that takes it. The state machine runs again with these
    NAKs left to their answers (connection.rerun); those stay likely (cap_reserved)."""
    out = np.zeros(len(x.conv.kind), np.int8)
    e = x.conv.episodes
    if len(e):
        claim_taken_naks(x, e)
        for k, evs in x.claimed.items():
            out[evs] = k in x.claimed_repeat
        out[e["nak_ev"][(e["nak_ev"] >= 0) & ~_split_for_timing(x, e)]] = 0
        wait = x.conv.ts[e["first_ev"]] - event_ts(x.conv, e["nak_ev"]) - x.paused_ns
        doubt = split_at_the_floor(x, e, wait) & (e["alt_of"] != -1) & (e["nak_ev"] >= 0)
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
    """Splits in doubt (split_at_the_floor: the split may be more of the run it cut) made
    before the answer to an older NAK: a NIC answers NAKs in the order they reach it, the
    capture's order on one path, so a NAK seen after one answered only after the split is
    answered later still, and the split that took it was more of its run. That older
    answer is an episode of its own at exactly its NAK's PSN (_clean_answers), or a restart
    whose every cause is older (_restart_of_older_naks). The NAK is left to the first
    resend of its PSN from that answer on. Returns (NAK event, resend event) pairs."""
    c = x.conv
    wait = c.ts[e["first_ev"]] - event_ts(c, e["nak_ev"]) - x.paused_ns
    doubt = split_at_the_floor(x, e, wait) & (e["alt_of"] != -1)
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
    clean &= t0 - event_ts(c, e["prev_req_ev"]) < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns
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
    sends: np.ndarray  # per episode: SEND resends only (resent_sends_only)

    @classmethod
    def of(cls, x: Context, e: np.ndarray, splits: np.ndarray) -> _OlderRestarts:
        c = x.conv
        quiet = c.ts[e["first_ev"]] - event_ts(c, e["prev_req_ev"])
        cand = (quiet < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns) & (e["nak_ev"] >= 0)
        cand &= (e["start_kind"] == cn.START_RESTART) & (e["alt_of"] != -2) & (e["alt_lo"] < 0)
        cand_ev = np.flatnonzero(cand)
        cand_ev = cand_ev[np.argsort(e["first_ev"][cand_ev], kind="stable")]
        firsts = message_first(x, e["nak_ev"][splits])
        return cls(
            x, e, cand_ev, np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK))),
            dict(zip(splits.tolist(), firsts.tolist(), strict=True)), resent_sends_only(x, e),
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
    chain of readings then, either_run; and a restart's NAK stays its own)."""
    wait = x.conv.ts[e["first_ev"]] - event_ts(x.conv, e["nak_ev"]) - x.paused_ns
    close = wait - cn.path_floor(x.conv, e["conv"]) < x.tol.slack_ns
    return (e["start_kind"] == cn.START_ASKED) & close & (e["nak_early"] == 0)


def cap_reserved(
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


def own_nak_on_repeat_nic(x: Context, e: np.ndarray) -> np.ndarray:
    """Restarts below their NAKed PSN (a go-back-0 reading, at the NAKed PSN's message start
    or a run inside it) beside a NAK of their own first PSN, sent by a NIC that shows a
    selective repeat no go-back makes (repeat_of_own_psn): recovery is a NIC setting, and
    a NIC that repeats selectively goes back N (SENDs, timers), never to a message's start.
    A SEND's restart (a READ's or WRITE's NAK it would repeat, not go back for) answers its
    own PSN's NAK (the newest seen before it; no RNR NAK among them) when it needs it: no
    silence a timer needs, no run it may resume (_resumes_no_run), and not each such NAK
    gone to another episode's clean answer (own_nak_answered: open). Returns the episode
    records with that NAK filled in (a copy), `x.own_repeat` marking them."""
    x.own_repeat = np.zeros(len(e), bool)
    c = x.conv
    shape = repeat_of_own_psn(x, e, np.ones(len(e), bool))
    hosts = sending_hosts(x, e)
    x.seen["repeat_hosts"] = frozenset(np.unique(hosts[shape]).tolist())
    nic = x.nic or NicContext(repeat_hosts=x.seen["repeat_hosts"])  # type: ignore[arg-type]
    below_own = (e["nak_ev"] >= 0) & (e["start_ext"] < e["nak_ext"]) & (e["own_nak_seen"] == 1)
    cand = below_own & np.isin(hosts, list(nic.repeat_hosts)) & (e["nak_kind"] == NAK)
    cand &= op_class(e["start_opcode"]) == "send"  # a READ's or WRITE's NAK: repeated
    if not cand.any():
        return e
    t0 = c.ts[e["first_ev"]]
    wait = t0 - event_ts(c, e["nak_ev"]) - x.paused_ns
    answered = own_nak_answered(x, e, below_own, wait)
    cand &= t0 - event_ts(c, e["prev_req_ev"]) < MIN_ACK_TIMEOUT_NS - x.tol.slack_ns  # no timer
    sends = resent_sends_only(x, e)
    out = e.copy()
    for k, own in _own_naks(c, e, np.flatnonzero(cand & ~answered)).items():  # few
        if not len(own) or (c.kind[own] != NAK).any() or not _resumes_no_run(e, k, sends):
            continue
        out["nak_ev"][k], out["nak_ext"][k], out["nak_kind"][k] = own.max(), e["start_ext"][k], NAK
        x.own_repeat[k] = True
    return out
