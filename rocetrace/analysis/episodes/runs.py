"""Runs and splits: where one run of resends was cut by a NAK of its first PSN, which run
a resend continues, and where a sender resumed after a split (docs/analysis.md, "Runs and
splits").
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.episodes.basics import (
    CERTAIN,
    CERTAINTIES,
    LIKELY,
    UNCERTAIN,
    Context,
    above_nak,
    op_class,
)
from rocetrace.analysis.prepared import NAK, REQUEST, RNR_NAK


def resumed_split(x: Context, e: np.ndarray) -> np.ndarray:
    """Runs resumed after a cut whose first resend is a split in doubt (it may be more of
    the run before it, `x.alt`): the resumption may then continue that run instead, and
    this one be its first resend alone, its NAK's answer. A SEND's goes back N either way
    (selective repeat covers RDMA READ and WRITE only); a WRITE's or READ's may be a
    selective repeat, so its mode is open."""
    if len(x.alt) != len(e):
        return np.zeros(len(e), bool)
    return (e["resumed"] > 0) & (x.alt >= 0)


def resumed_into_repeat(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
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


def near_naks(c: cn.Conversations, e: np.ndarray, which: np.ndarray) -> dict[int, list[int]]:
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


def repeat_tail_naks(
    c: cn.Conversations, e: np.ndarray, which: np.ndarray | None = None
) -> dict[int, list[int]]:
    """Per run of `which` (by default those above their NAKed PSN, above_nak) that begins
    at the newest PSN sent right after a resend of another PSN (no request between) that a
    NAK (not an RNR NAK) asked for before it: those NAK events. A selective repeat resends
    its NAKed PSN and then the newest, so the run may be that NAK's repeat going on, not its
    own NAK's go-back-N whose first resends were lost before the capture point (a READ
    asked again splits the two: each READ of a run of re-issues is an episode). A NAK's
    answer either way: only which NAK is open."""
    out: dict[int, list[int]] = {}
    prev = e["prev_req_ev"]
    p = np.maximum(prev, 0)
    ks = above_nak(e) if which is None else which
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


def resumed_after_split(x: Context, e: np.ndarray) -> np.ndarray:
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


def either_run(
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
    (`alt2`, second_run) is weighed by both. Returns per episode the run it may continue
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


def second_run(e: np.ndarray, doubt: np.ndarray) -> np.ndarray:
    """Per split in doubt of exactly the PSN where a cut run would resume, that may also
    continue the run it split (the state machine's alt_two): the cut run, its second
    reading's run (-1 none). Either reading answers that run's NAK, or the split answers
    its own: when all are NAKs the trigger stands (either_run)."""
    return np.where(doubt & (e["alt_of"] == -2) & (e["cut_of"] >= 0), e["alt_two"], -1)


def split_at_the_floor(x: Context, e: np.ndarray, wait: np.ndarray) -> np.ndarray:
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
    again = asked & resumed_at_split_psn(c, e)
    # a split whose PSN the run it cut had just resent (swapped): no more of that run
    return ((asked & ((floor < 0) | close | again)) | (e["nak_early"] == 1)) & (e["swapped"] == 0)


def resumed_at_split_psn(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
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


def resent_sends_only(x: Context, e: np.ndarray, reached: bool = False) -> np.ndarray:
    """Per episode: were all its resends SENDs (a WRITE's among them may answer a NAK of
    its own by selective repeat: another episode)? A resend where the run resumed after a
    selective repeat that had sent its newest PSN before it does not count: the two cannot
    have swapped (a selective repeat resends the NAKed PSN first), nor can that split be
    more of the run (a go-back-N does not skip to the newest), so it is the run's. With
    `reached` (the run's mode), nor do those where it resumed after a split that went one
    by one to the newest (_resumed_after_newest): they go back N in either reading."""
    c = x.conv
    ev = np.flatnonzero(c.episode >= 0)
    rdma = op_class(x.pp.opcodes_at(c.row[ev]).astype(np.int64)) == "rdma"
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
