"""Retransmission episodes: runs of resent PSNs, what triggered them and how the NIC resent.

An episode starts at a resent packet that follows new data, restarts from a PSN at or before
the previous resend, or follows a new NAK. Its trigger is the new NAK / RNR NAK of its start
PSN, else the latest unused NAK about the flow; otherwise a timeout, a READ re-issue when a
re-sent READ REQUEST re-asks for responses already partly seen, or unknown for the rest of
a go-back-N resumed after a selective repeat (docs/analysis-tables.md). A NAK or ACK counts
from when it reached the sender: the capture saw it the path's reaction time before (the
shortest NAK -> resend seen, _reaction_ns).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.frames import empty_frame
from rocetrace.analysis.gaps import BIG, Stream
from rocetrace.analysis.naks import ack_progress
from rocetrace.analysis.order import stable_order
from rocetrace.analysis.pairing import dense_ids
from rocetrace.analysis.prepared import (
    POS_FIRST,
    POS_LAST,
    POS_ONLY,
    PSN_MOD,
    Prepared,
    isin_small,
    psn_delta,
)
from rocetrace.link import wire_ns

EPISODE_COLUMNS = [
    "flow_id", "src_ip", "dst_ip", "dest_qp", "ts", "ts_ns", "trigger", "nak_psn", "start_psn",
    "packets", "mode", "mode_certain", "mode_basis", "delay_s", "first_frame", "last_psn",
    "nak_frame",
]  # fmt: skip
ACK_TIMEOUT_UNIT_S = 4.096e-6
SR_COVERAGE = 0.5
SMALL_FRAME = 256  # wire bytes: below this a resend is small (READ request, atomic, no payload)
NONE_SEEN = np.iinfo(np.int64).max  # no answer seen (per path, in _reaction_ns)
WIRE_LOOKBACK = 16  # frames searched back for a host's previous frames (_host_frames_before)
NO_BOUND = 1 << 40  # ns: a wait with no known start (_wire_wait)
TIMER_SILENCE_NS = 65_536  # a resend this long after the previous one: the ACK timer fired
# The shortest ACK timeout is 8.192 us (4.096 us * 2^1); half of it leaves room for the NAK's
# resends: a resend this soon after them was no timer restart.
NO_TIMER_YET_NS = 4_096
ALTERNATIVES = ("selective-repeat", "go-back-0")  # what an uncertain episode may also be
NAK_COLUMNS = ["nak_ts", "nak_frame", "nak_raw", "kind", "nak_ts_exact"]  # a trigger's NAK


def episode_rows(
    s: Stream, pp: Prepared, naks: pd.DataFrame, link_bps: float
) -> tuple[np.ndarray, Reaction]:
    """Episode number per stream row (-1 for rows that are not resends). A new NAK shows
    as a restart (the PSN goes back), not where the NAK is seen: the sender reacts later;
    or as the resend of exactly the PSN a NAK asked for (_answers_new_nak); or after a
    silence only the ACK timer explains. Only resent rows are looked at (they are few).
    Also returns the sender's reaction times (_reaction_ns)."""
    ep = np.full(len(s), -1, np.int64)
    rows = np.flatnonzero(s.retransmitted)
    if not len(rows):
        none = np.zeros((0, 2), np.int64)
        return ep, Reaction(none, none, pp.wire_len)
    prev = rows - 1  # a flow's first row is never a resend: prev is in the same flow
    prev_resent = s.retransmitted[prev] & ~s.first[rows]
    restart = s.ext[rows] <= s.ext[prev]
    stalled = (pp.ts[s.idx[rows]] - pp.ts[s.idx[prev]]) > TIMER_SILENCE_NS  # the timer fired
    start = np.zeros(len(s), bool)
    start[rows] = ~prev_resent | restart | stalled
    answered, reaction = _answers(s, pp, naks, np.flatnonzero(start), link_bps)
    start[np.flatnonzero(s.retransmitted & ~start)] = _answers_new_nak(
        s, pp, naks, start, answered, reaction
    )
    ep[rows] = np.cumsum(start[rows]) - 1
    return ep, reaction


def _answers(
    s: Stream, pp: Prepared, naks: pd.DataFrame, starts: np.ndarray, link_bps: float
) -> tuple[np.ndarray, Reaction]:
    """Per stream row, the NAK its episode start (`starts`, in stream order) answers
    (_answered_nak; -1 for other rows), and the reaction times those answers show. A start
    that may resume a go-back-N cut by the episode before it (_resumes_cut_run) answers a
    NAK only when it came no sooner after it than the reaction's lower bound that the
    other answers show: a second pass."""
    resumes = _resumes_cut_run(s, pp, starts, link_bps)
    answered = np.full(len(s), -1, np.int64)
    before = np.where(resumes, 0, s.idx[starts])  # first pass: resumes answer nothing
    answered[starts] = _answered_nak(s, pp, naks, starts, before)
    hop_paths = _paths_leaving_hop(pp, link_bps)  # a capture-wide scan: once
    reaction = _reaction_ns(s, pp, answered, link_bps, hop_paths)
    if not resumes.any():
        return answered, reaction
    at = s.idx[starts[resumes]]
    then = pp.ts[at] - reaction.at(s.flow[starts[resumes]], at, least=True)
    before[resumes] = np.searchsorted(pp.ts, then, "right") if pp.in_time_order else at
    answered[starts] = _answered_nak(s, pp, naks, starts, before)
    return answered, _reaction_ns(s, pp, answered, link_bps, hop_paths)


def _resumes_cut_run(s: Stream, pp: Prepared, starts: np.ndarray, link_bps: float) -> np.ndarray:
    """Per episode start (stream rows, in stream order), whether it may be the rest of a
    go-back-N that the flow's previous episode cut: that episode came right after a resend
    and this start, right after that episode, resends the PSN after that resend's, or as
    many PSNs further as the hole before it on the sender's wire holds frames (resends
    lost before the capture point, _unseen_frames)."""
    prev, same_flow = _previous_in_flow(s.flow[starts])
    cut = starts[prev] - 1  # the row before the previous episode (a resend is never first)
    out = same_flow & s.retransmitted[cut] & s.retransmitted[starts - 1]
    unseen = _unseen_frames(pp, s.idx[starts - 1], s.idx[starts], link_bps)
    return out & (s.ext[starts] == s.end[cut] + 1 + np.maximum(unseen, 0))


def _previous_in_flow(flow: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per item of a list in stream order (`flow`: its flow ids), the index of the item
    before it (0 for the first) and whether that one is of the same flow."""
    prev = np.maximum(np.arange(len(flow)) - 1, 0)
    return prev, (np.arange(len(flow)) > 0) & (flow[prev] == flow)


def _answered_nak(
    s: Stream, pp: Prepared, naks: pd.DataFrame, rows: np.ndarray, before: np.ndarray
) -> np.ndarray:
    """Per episode start (stream row, in stream order), the frame index of the NAK it
    answers (-1: none) among those captured before frame index `before` (per row): the
    latest NAK of its own PSN (go-back-N, selective repeat) unless there is none or the
    flow's previous start answered it; then the flow's latest NAK when the start lies in
    the NAKed PSN's message before that PSN (go-back-0 redoes the message; the redone FIRST
    may not have reached the capture point). Two passes: the second knows what the
    previous start answered."""
    own = _latest_nak(s, pp, naks, rows, before=before)
    latest = _latest_nak(s, pp, naks, rows, any_psn=True, before=before)
    ahead = psn_delta(pp.psn[latest], pp.psn[s.idx[rows]])
    redo = (latest > own) & (ahead > 0)
    at = rows[redo]
    redo[redo] = _message_starts(pp, s, s.flow[at], s.ext[at] + ahead[redo]) <= s.ext[at]
    prior, same_flow = _previous_in_flow(s.flow[rows])
    answered = np.where(redo & (own < 0), latest, own)
    spent = same_flow & (answered[prior] == own)
    return np.where(redo & ((own < 0) | spent), latest, own)


@dataclass(frozen=True)
class Reaction:
    """How long a NAK or ACK takes, from the capture point, to show in what the sender sends
    there: per flow id and resend size (small frames, e.g. READ requests, pass a store-and-
    forward hop sooner than full-size ones), from _reaction_ns. `by_flow` is the shortest
    answer seen, an upper bound; `least` a lower bound (_least): the shortest answer where
    one shows the reaction itself, else what each answer's wait for the wire and its NAK's
    hold at a hop leave."""

    by_flow: np.ndarray  # (flows, 2): ns for a small and a full-size resend
    least: np.ndarray  # (flows, 2): as by_flow, the shortest the reaction may be
    wire_len: np.ndarray  # per frame index

    def at(self, flow: np.ndarray, idx: np.ndarray, *, least: bool = False) -> np.ndarray:
        """The reaction time for frames `idx` of flows `flow` (its lower bound: `least`)."""
        size = (self.wire_len[idx] >= SMALL_FRAME).astype(np.int64)
        return (self.least if least else self.by_flow)[flow, size]


def _reaction_ns(
    s: Stream, pp: Prepared, answered: np.ndarray, link_bps: float, hop_paths: np.ndarray
) -> Reaction:
    """Per flow id and resend size, the shortest time seen from a NAK to the episode start
    that answers it (`answered`: per stream row, the NAK's frame index), over all flows
    between the same two hosts: how long a NAK takes, from the capture point, to turn into
    a resend there (0 at the sender; a round trip at the receiver). An answer that took
    longer waited for the wire (the sender was busy), so the shortest is the path's own.
    Small resends take the shortest of any size (they are never slower), full-size ones
    that of any size when no full-size one answered; 0 where no answer was seen (within
    TIMER_SILENCE_NS of its NAK: later is the ACK timer's). The lower bound (`least`,
    _least) comes from an answer that shows the reaction itself (an idle sender, a NAK no
    hop held), else from each answer less its NAK's hold at a store-and-forward hop
    (_held_behind) and its wait for the wire (_wire_wait; `hop_paths`: _paths_leaving_hop)."""
    firsts = np.flatnonzero(s.first)
    path = np.full(int(s.flow.max(initial=-1)) + 1, -1, np.int64)
    at = s.idx[firsts]
    path[s.flow[firsts]] = dense_ids(pp.src[at], pp.dst[at])
    rows = np.flatnonzero(answered >= 0)
    delay = pp.ts[s.idx[rows]] - pp.ts[answered[rows]]
    rows, delay = rows[delay <= TIMER_SILENCE_NS], delay[delay <= TIMER_SILENCE_NS]
    full = pp.wire_len[s.idx[rows]] >= SMALL_FRAME
    n_paths = int(path.max(initial=-1)) + 1
    shortest = _shortest(path[s.flow[rows]], delay, full, n_paths)
    wait = _wire_wait(pp, s.idx[rows], link_bps, hop_paths)
    held = _held_behind(pp, answered[rows], link_bps)
    least = _least(path[s.flow[rows]], delay, full, wait, held, n_paths)
    return Reaction(_per_flow(path, shortest), _per_flow(path, least), pp.wire_len)


def _shortest(path: np.ndarray, delay: np.ndarray, full: np.ndarray, n_paths: int) -> np.ndarray:
    """Per path (n_paths, 2): the shortest delay of any size and of full-size frames (that
    of any size when no full-size one was seen); NONE_SEEN where none was seen."""
    any_size = _min_per_path(path, delay, n_paths)  # small never slower
    full_size = _min_per_path(path[full], delay[full], n_paths)
    return np.stack([any_size, np.where(full_size == NONE_SEEN, any_size, full_size)], axis=1)


def _least(
    path: np.ndarray,
    delay: np.ndarray,
    full: np.ndarray,
    wait: np.ndarray,
    held: np.ndarray,
    n_paths: int,
) -> np.ndarray:
    """Per path (n_paths, 2): the reaction's lower bound for small and full-size resends.
    An answer of an idle sender (no `wait` for the wire) to a NAK no hop `held` shows the
    reaction itself: where a size has one, its shortest answer is the bound. Else each
    answer bounds it by its delay less its NAK's hold and its wait (_wire_wait: since the
    sender may have chosen it). A size with no answer takes the other's bound."""
    clean = (wait == 0) & (held == 0)
    bound = np.where(clean, delay, np.maximum(delay - held - wait + (wait > 0), 0))
    out = np.full((n_paths, 2), NONE_SEEN)
    for size, of_size in enumerate((~full, full)):
        shown = np.bincount(path[of_size & clean], minlength=n_paths) > 0
        exact = _min_per_path(path[of_size], delay[of_size], n_paths)
        loose = _min_per_path(path[of_size], bound[of_size], n_paths)
        out[:, size] = np.where(shown, exact, loose)
    for size in (0, 1):
        out[:, size] = np.where(out[:, size] == NONE_SEEN, out[:, 1 - size], out[:, size])
    return out


def _min_per_path(path: np.ndarray, values: np.ndarray, n_paths: int) -> np.ndarray:
    """Per path id (n_paths), the smallest of its `values`; NONE_SEEN where it has none."""
    out = np.full(n_paths, NONE_SEEN)
    np.minimum.at(out, path, values)
    return out


def _per_flow(path: np.ndarray, per_path: np.ndarray) -> np.ndarray:
    """Per flow id (its path: -1 none), the path's values; 0 where none was seen."""
    values = per_path[np.maximum(path, 0)]
    return np.where((path >= 0)[:, None] & (values != NONE_SEEN), values, 0)


def _host_frames_before(
    pp: Prepared, idx: np.ndarray, first: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Per frame index, the frame indices `first` to WIRE_LOOKBACK back (0: the frame
    itself), one column each, and which of those its own host sent."""
    back = idx[:, None] - np.arange(first, WIRE_LOOKBACK + 1)
    valid = (back >= 0) & (pp.src[idx] >= 0)[:, None]
    back = np.maximum(back, 0)
    return back, valid & (pp.src[back] == pp.src[idx][:, None])


def _wire_wait(pp: Prepared, idx: np.ndarray, link_bps: float, hop_paths: np.ndarray) -> np.ndarray:
    """Per frame index, how long (ns) it may have waited for the wire: it went out at the
    end of a train of its host's frames sent back to back (within WIRE_LOOKBACK frames of
    the capture; a hole of whole frame times, frames lost before the capture point, does
    not end it), so it started when the wire came free, not when its sender chose it. The
    sender chose it after the latest frame of its own QP in the train began (choosing it
    sooner, the QP would have sent it first); with none, after the train began (the wire
    was free before; another QP may have held it since); NO_BOUND when the train reaches
    past the lookback. Where the capture sees the path's frames leave a store-and-forward
    hop (`hop_paths`, _paths_leaving_hop), the hop's wait counts too (_began_at_host). 0 when
    it was alone."""
    back, ours = _host_frames_before(pp, idx)
    at_hop = np.isin(_path_codes(pp, idx), hop_paths)
    same_dst = pp.dst[back] == pp.dst[idx][:, None]
    ours &= ~at_hop[:, None] | same_dst
    order = np.argsort(~ours, axis=1, kind="stable")  # the host's frames first, nearest first
    back, ours = np.take_along_axis(back, order, 1), np.take_along_axis(ours, order, 1)
    same_dst = np.take_along_axis(same_dst, order, 1)
    ts = pp.ts[back] - pp.ts[idx][:, None]  # ns before the frame (exact in int64)
    wire = np.asarray(wire_ns(pp.wire_len[back], link_bps), float)
    own = np.asarray(wire_ns(pp.wire_len[idx], link_bps), float)
    gap = np.column_stack([np.zeros(len(idx), np.int64), ts[:, :-1]]) - ts  # to the next
    took = np.where(at_hop[:, None], np.column_stack([own, wire[:, :-1]]), wire)
    unseen = _whole_frames(gap - took, took)  # frames lost before the capture point
    back_to_back = (gap >= 0) & ((gap <= took + 1) | (unseen > 0))
    train = np.logical_and.accumulate(ours & back_to_back, axis=1)
    mine = train & (pp.qp[back] == pp.qp[idx][:, None]) & same_dst
    last = train.sum(axis=1) - 1  # the train's first frame (its column; -1: no train)
    anchor = np.where(mine.any(axis=1), np.argmax(mine, axis=1), np.maximum(last, 0))
    rows = np.arange(len(idx))
    sent = wire + np.where(gap > took + 1, np.maximum(unseen, 0) * took, 0.0)  # and unseen
    began = np.where(at_hop, _began_at_host(ts, wire, sent, train, anchor), ts[rows, anchor])
    wait = np.ceil(-(began + np.where(at_hop, 2 * own, 0.0)))
    wait = np.where(train[:, 0], np.maximum(wait, 1), 0).astype(np.int64)
    unbounded = train[:, 0] & ~mine.any(axis=1) & train[rows, -1]
    return np.where(unbounded, NO_BOUND, wait)


def _whole_frames(free: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """How many frames of `frame` ns fill a hole of `free` ns back to back (wire times
    rounded down: up to 1 ns less each, 1 ns either way); -1 when not a whole number."""
    count = np.maximum(np.round(free / frame), 0)
    whole = (free >= count * (frame - 1) - 1) & (free <= count * frame + 1)
    return np.where(whole, count, -1).astype(np.int64)


def _began_at_host(
    ts: np.ndarray, wire: np.ndarray, sent: np.ndarray, train: np.ndarray, anchor: np.ndarray
) -> np.ndarray:
    """Per row of a train of frames seen leaving a store-and-forward hop (`ts`: ns before
    the frame after them, nearest first; `wire`: their wire times; `sent`: those plus the
    unseen frames' after each), how soon the frame in column `anchor` may have begun at
    its host, shifted by the links: a train frame j began no sooner than its hop exit less
    two wire times (in, out), and the frames after it began one wire time after another."""
    sent = np.cumsum(np.where(train, sent, 0.0), axis=1)
    after = sent - sent[np.arange(len(ts)), anchor][:, None]  # wire times from j to anchor
    beyond = train & (np.arange(ts.shape[1]) >= anchor[:, None])
    return np.where(beyond, ts - 2 * wire + after, np.inf).min(axis=1)


def _paths_leaving_hop(pp: Prepared, link_bps: float) -> np.ndarray:
    """The paths (source and destination, _path_codes) whose frames the capture marks as
    they finish leaving a store-and-forward hop (at the receiver): some frame of the path
    came less than the previous one's wire time after it, with nothing between them in
    the capture. Where frames are seen as they start at their host or at a hop's egress
    port, each waits for the one before it to finish."""
    i = np.flatnonzero(pp.src[1:] >= 0) + 1
    i = i[(pp.src[i] == pp.src[i - 1]) & (pp.dst[i] == pp.dst[i - 1])]
    gap = pp.ts[i] - pp.ts[i - 1]
    sooner = (gap >= 0) & (gap < wire_ns(pp.wire_len[i - 1], link_bps) - 1)
    return np.unique(_path_codes(pp, i[sooner]))


def _path_codes(pp: Prepared, idx: np.ndarray) -> np.ndarray:
    """Per frame index, one code for its (source, destination) pair (negative: not RoCE)."""
    return pp.src[idx] * len(pp.ips) + pp.dst[idx]


def _held_behind(pp: Prepared, idx: np.ndarray, link_bps: float) -> np.ndarray:
    """Per frame index, the ns a store-and-forward hop may have held it behind the frames
    its host sent just before (WIRE_LOOKBACK frames back at most): the hop sends a frame
    once it has all of it and has sent those before it, so a small frame right behind a
    full-size one leaves that hop later than it would alone. A frame k back leaves the hop
    ts + wire after it started at the earliest, and the frames after it then take their
    wire times in turn. Capture times there are taken as frame starts at the host (at the
    receiver; elsewhere the hold may be overstated, which only lowers a lower bound)."""
    back, ours = _host_frames_before(pp, idx, first=0)  # column 0: the frame itself
    wire = np.where(ours, wire_ns(pp.wire_len[back], link_bps), 0.0)
    since = np.cumsum(wire, axis=1) - wire[:, :1]  # our frames' wire times from k on, to it
    start = pp.ts[back] - pp.ts[idx][:, None]  # ns before the frame (exact in int64)
    leaves = np.where(ours, start + wire + since, -np.inf)  # the frame's earliest exit
    held = leaves.max(axis=1) - wire[:, 0]
    return np.floor(np.maximum(held, 0.0)).astype(np.int64)


def _answers_new_nak(
    s: Stream,
    pp: Prepared,
    naks: pd.DataFrame,
    start: np.ndarray,
    answered: np.ndarray,
    reaction: Reaction,
) -> np.ndarray:
    """Per resend row not yet starting an episode, whether the sender took in a NAK of its
    PSN between choosing the flow's previous row and choosing this one: it went back to
    that PSN, which starts an episode although the PSNs run on (back-to-back one-packet
    selective repeats; several NAKs seen before the first resend). The NAK reached the
    sender `reaction` after the capture saw it, and it must be newer than the NAK its run's
    start answered (`answered`, per stream row)."""
    rows = np.flatnonzero(s.retransmitted & ~start)
    if not len(rows):
        return np.zeros(0, bool)
    run = np.maximum.accumulate(np.where(start, np.arange(len(s)), -1))[rows]
    hit = _latest_nak(s, pp, naks, rows)
    # When the sender had the NAK, in the capture times of this row and the previous one.
    flow, idx, before = s.flow[rows], s.idx[rows], s.idx[rows - 1]
    taken_in = pp.ts[hit] + reaction.at(flow, before) > pp.ts[before]
    taken_in &= pp.ts[hit] + reaction.at(flow, idx, least=True) <= pp.ts[idx]
    return (hit > answered[run]) & taken_in & ~_tail_resent(s, rows, hit, start, answered)


def _tail_resent(
    s: Stream, rows: np.ndarray, hit: np.ndarray, start: np.ndarray, answered: np.ndarray
) -> np.ndarray:
    """Per resend row (not starting an episode), whether it is a selective repeat's tail
    (the newest PSN, sent again) that the next row, an episode start, resends once more
    for the same NAK (`hit`, per row): the NAK came after the tail was chosen, so the next
    row answers it. Unless the next row may be the rest of a go-back-N that this row, as an
    episode, would have cut (_resumes_cut_run): then this row answered the NAK."""
    following = np.minimum(rows + 1, len(s) - 1)
    again = (following > rows) & start[following] & (s.flow[following] == s.flow[rows])
    again &= (answered[following] == hit) & (s.ext[following] == s.ext[rows])
    tail = s.end[rows] >= s.high_before[rows]
    resumes = s.ext[following] == s.end[rows - 1] + 1
    return again & tail & ~resumes


def _latest_nak(
    s: Stream,
    pp: Prepared,
    naks: pd.DataFrame,
    rows: np.ndarray,
    any_psn: bool = False,
    before: np.ndarray | None = None,
) -> np.ndarray:
    """Per stream row, the frame index of the latest NAK about its flow with its PSN (with
    any PSN: `any_psn`) captured before it, and before frame index `before` (per row) when
    given (-1 when none)."""
    known = naks[naks["flow_id"].notna()] if len(rows) else naks.iloc[:0]
    if known.empty:
        return np.full(len(rows), -1, np.int64)
    nak_idx = np.searchsorted(pp.frame, known["frame"].to_numpy(np.int64))
    nak_flow = known["flow_id"].to_numpy(np.int64)
    psn = np.zeros(len(known), np.int64) if any_psn else known["psn"].to_numpy(np.int64)
    row_psn = np.zeros(len(rows), np.int64) if any_psn else pp.psn[s.idx[rows]]
    code = dense_ids(np.concatenate([nak_flow, s.flow[rows]]), np.concatenate([psn, row_psn]))
    width = len(pp) + 1
    packed = np.sort(code[: len(known)] * width + nak_idx)
    row_code = code[len(known) :]
    limit = s.idx[rows] if before is None else np.minimum(before, s.idx[rows])
    at = np.searchsorted(packed, row_code * width + limit) - 1
    hit = packed[np.maximum(at, 0)]
    return np.where((at >= 0) & (hit // width == row_code), hit % width, -1)


def _resumes_at_ack(
    s: Stream,
    pp: Prepared,
    rows: np.ndarray,
    progress: pd.DataFrame,
    reaction: Reaction,
    unseen: np.ndarray,
) -> np.ndarray:
    """Per stream row, whether it resends the first PSN not yet acknowledged: a go-back-N
    that an ACK overtook skips to it (not a selective-repeat skip), or the PSN `unseen`
    (per row, _unseen_frames) after it when the hole before the row holds that many frames
    (resends lost before the capture point). The sender knew the ACKs the capture saw up to
    its reaction time before the row; later ones count as well (the reaction time is the
    shortest seen, the sender may have known more)."""
    if progress.empty or not len(rows):
        return np.zeros(len(rows), bool)
    flow, idx = s.flow[rows], s.idx[rows]
    if pp.in_time_order:
        acked = _acked_before(flow, idx, progress, len(pp))
    else:
        acked = _last_acked_asof(pd.DataFrame({"flow_id": flow, "ts_ns": pp.ts[idx]}), progress)
    known = _last_acked(pp, flow, idx, progress, reaction)
    psn = pp.psn[idx]
    return _first_unacked(psn, acked, unseen) | _first_unacked(psn, known, unseen)


def _first_unacked(psn: np.ndarray, acked: np.ndarray, unseen: np.ndarray | int = 0) -> np.ndarray:
    """Per PSN, whether it is the one after `acked` (raw 24-bit, -1: nothing acknowledged),
    or exactly `unseen` PSNs beyond it."""
    ahead = psn_delta(psn, (acked + 1) % PSN_MOD)
    return (acked >= 0) & ((ahead == 0) | (ahead == unseen))


def _unseen_frames(
    pp: Prepared, before: np.ndarray, idx: np.ndarray, link_bps: float
) -> np.ndarray:
    """Per pair of a flow's consecutive frames (`before`, `idx`: frame indices), how many
    frames of their size went out unseen between them: the hole on their host's wire beside
    the frames the capture shows there, when it holds a whole number of such frames back
    to back (resends lost before the capture point); -1 when it does not (a sender that
    idled leaves a hole of any size; a selective repeat sends its few PSNs back to back).
    A capture time marks a frame's start at its sender and its end further on, so the two
    frames' own wire time counts as the shorter one and a missing frame as the longer, less
    up to 1 ns each (wire times rounded down). Looks WIRE_LOOKBACK frames back at most."""
    back, ours = _host_frames_before(pp, idx)
    other = np.where(ours & (back > before[:, None]), wire_ns(pp.wire_len[back], link_bps), 0.0)
    own = wire_ns(pp.wire_len[before], link_bps), wire_ns(pp.wire_len[idx], link_bps)
    free = pp.ts[idx] - pp.ts[before] - np.minimum(*own) - other.sum(axis=1)
    count = _whole_frames(free, np.maximum(*own))
    return np.where(idx - before <= WIRE_LOOKBACK, count, -1)


def _episodes(
    s: Stream,
    pp: Prepared,
    ep: np.ndarray,
    progress: pd.DataFrame,
    reaction: Reaction,
    link_bps: float,
) -> pd.DataFrame:
    """One row per episode: where it starts, how many packets, and whether it skips PSNs
    (`jumps`: not onto the first unacknowledged PSN, or as far past it as the hole in the
    sender's frames before the row holds resends lost before the capture point,
    _unseen_frames). An episode's rows are consecutive in the stream, so reduceat over its
    first rows works."""
    rows = np.flatnonzero(ep >= 0)
    if len(rows) == 0:
        return pd.DataFrame()
    cut = np.flatnonzero(np.diff(ep[rows], prepend=-1) != 0)
    ends = np.append(cut[1:], len(rows))
    first, last = rows[cut], rows[ends - 1]
    prev = rows - 1  # a flow's first row is never a resend
    jump = (s.ext[rows] != s.end[prev] + 1) & (ep[rows] == ep[prev])  # skips inside the episode
    unseen = _unseen_frames(pp, s.idx[prev[jump]], s.idx[rows[jump]], link_bps)
    jump[jump] = ~_resumes_at_ack(s, pp, rows[jump], progress, reaction, unseen)
    idx = s.idx[first]
    out = pd.DataFrame(
        {
            "ep": ep[first],
            "flow_id": s.flow[first],
            "ts_ns": pp.ts[idx],
            "first_frame": pp.frames_at(idx),
            "idx": idx,
            "first_row": first,
            "last_row": last,
            "start_ext": s.ext[first],
            "last_ext": np.maximum.reduceat(s.end[rows], cut),
            "high": s.high_before[first],
            "packets": ends - cut,
            "units": np.add.reduceat((s.end - s.ext + 1)[rows], cut),
            "jumps": np.add.reduceat(jump.astype(np.int64), cut),
            "start_psn": pp.psn[idx],
        }
    )
    return out


def _assign_triggers(eps: pd.DataFrame, naks: pd.DataFrame, reaction: Reaction) -> pd.DataFrame:
    """The NAK / RNR NAK of the episode's start PSN when it is new (_start_naks), else the
    latest NAK about the flow that its sender may have had by then (seen at least the
    reaction's lower bound before) and got after the flow's previous episode began, and no
    earlier episode took: a NAK triggers one episode (a selective repeat's tail may answer
    the later of two NAKs, the go-back-N after it the earlier one)."""
    eps = eps.sort_values("ts_ns", kind="stable").reset_index(drop=True)
    flow, idx = eps["flow_id"].to_numpy(np.int64), eps["idx"].to_numpy(np.int64)
    lag = reaction.at(flow, idx)
    known = naks[naks["flow_id"].notna()].copy()
    known["flow_id"] = known["flow_id"].astype(np.int64)
    known = known.rename(columns={"ts_ns": "nak_ts", "frame": "nak_frame", "psn": "nak_raw"})
    known = known.sort_values("nak_ts")[["flow_id", "nak_ts", "nak_frame", "nak_raw", "kind"]]
    known["nak_raw"] = known["nak_raw"].astype(np.int64)
    known["nak_ts_exact"] = known["nak_ts"].astype("Int64")  # float64 ns would lose 256 ns
    least = reaction.at(flow, idx, least=True)
    own, own_new = _start_naks(eps, known, lag, least)
    known_ts = eps["ts_ns"].to_numpy(np.int64) - least
    eps = eps.join(_latest_naks(eps["flow_id"], known_ts, known))
    for col in NAK_COLUMNS:
        eps[col] = eps[col].mask(own_new, own[col])
    fresh = _fresh(eps, lag) | own_new
    taken = _taken_before(eps, fresh)
    if taken.any():  # the latest unused NAK instead
        spare = known[~known["nak_frame"].isin(eps.loc[fresh & ~taken, "nak_frame"])]
        again = _latest_naks(eps["flow_id"][taken], known_ts[taken], spare).reindex(eps.index)
        for col in NAK_COLUMNS:
            eps[col] = eps[col].mask(taken, again[col])
        fresh[taken] = _fresh(eps, lag)[taken]
        fresh &= ~_taken_before(eps, fresh)
    eps["trigger"] = np.where(
        fresh, np.where(eps["kind"].astype(object) == "rnr", "rnr", "nak"), "timeout"
    )
    for col in ("nak_ts", "nak_frame", "nak_raw", "nak_ts_exact"):
        eps[col] = eps[col].where(fresh)
    return eps.drop(columns=["kind"])


def _latest_naks(flow: pd.Series, known_ts: np.ndarray, known: pd.DataFrame) -> pd.DataFrame:
    """Per episode (its `flow` id, index kept), the latest of the `known` NAKs of its flow
    seen at or before `known_ts` (NAK_COLUMNS; null where none)."""
    by_known = np.argsort(known_ts, kind="stable")
    latest = pd.merge_asof(
        pd.DataFrame({"flow_id": flow.to_numpy(), "known_ts": known_ts}).take(by_known),
        known,
        left_on="known_ts",
        right_on="nak_ts",
        by="flow_id",
        direction="backward",
    )
    latest.index = flow.index[by_known]
    return latest.sort_index()[NAK_COLUMNS]


def _fresh(eps: pd.DataFrame, lag: np.ndarray) -> np.ndarray:
    """Per episode (in time order), whether its NAK may have reached the sender (`lag`
    after the capture saw it) after the flow's previous episode began (True for the first)."""
    # Exact ns: as float64 two events 88 ns apart can compare equal.
    prev_start = eps["ts_ns"].astype("Int64").groupby(eps["flow_id"]).shift(1)
    after_prev = ~(eps["nak_ts_exact"] + lag <= prev_start)  # the sender had it since
    return (eps["nak_ts_exact"].notna() & after_prev).fillna(True).to_numpy(bool)


def _taken_before(eps: pd.DataFrame, fresh: np.ndarray) -> np.ndarray:
    """Per episode (in time order), whether its NAK is `fresh` but an earlier one took it."""
    used = eps.loc[fresh & eps["nak_frame"].notna().to_numpy(), ["flow_id", "nak_frame"]]
    taken = np.zeros(len(eps), bool)
    taken[used.index[used.duplicated()]] = True
    return taken


def _start_naks(
    eps: pd.DataFrame, known: pd.DataFrame, lag: np.ndarray, least: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray]:
    """Per episode (`eps` in time order), the latest NAK with its start PSN that may have
    reached the sender (seen `least` before: the reaction's lower bound), and whether that
    NAK is new: it reached the sender (`lag`, per episode: the reaction time) after the
    flow's previous episode began, or it came after that episode's own NAK (two NAKs seen
    before the first resend: each answers its own)."""
    then = eps["ts_ns"].to_numpy(np.int64) - least
    by_then = np.argsort(then, kind="stable")
    left = eps[["flow_id"]].assign(then=then, nak_raw=eps["start_psn"].to_numpy(np.int64))
    own = pd.merge_asof(
        left.take(by_then), known, left_on="then", right_on="nak_ts", by=["flow_id", "nak_raw"]
    )
    own.index = by_then
    own = own.sort_index().drop(columns="then").assign(ts_ns=eps["ts_ns"])
    prev_start = own["ts_ns"].astype("Int64").groupby(own["flow_id"]).shift(1)  # exact ns
    prev_own = own.groupby("flow_id")["nak_ts_exact"].shift(1)
    ts = own["nak_ts_exact"]
    new = ts.notna() & ((ts + lag > prev_start) | (ts > prev_own) | prev_start.isna())
    return own.reset_index(drop=True), new.fillna(False).to_numpy(bool)


def _last_acked(
    pp: Prepared, flow: np.ndarray, idx: np.ndarray, progress: pd.DataFrame, reaction: Reaction
) -> np.ndarray:
    """Per frame index `idx` of flow `flow`, the highest PSN acknowledged about that flow as
    its sender knew it when it sent the frame: seen at the capture point at least the
    reaction time before (-1 when none). An ACK seen later had not reached the sender yet."""
    if progress.empty:
        return np.full(len(idx), -1, np.int64)
    then = pp.ts[idx] - reaction.at(flow, idx) + 1  # ns: ACKs seen before this were known
    if not pp.in_time_order:
        return _last_acked_asof(pd.DataFrame({"flow_id": flow, "ts_ns": then}), progress)
    return _acked_before(flow, np.searchsorted(pp.ts, then, "left"), progress, len(pp))


def _acked_before(
    flow: np.ndarray, before: np.ndarray, progress: pd.DataFrame, n: int
) -> np.ndarray:
    """Per (flow, frame index), the highest PSN acknowledged about the flow in an earlier
    frame (-1 when none). In time order a frame index is a time rank: one packed search."""
    pflow = progress["flow_id"].to_numpy(np.int64)
    bits = max(n.bit_length(), 1)
    by = stable_order(pflow, int(pflow.max(initial=0)) + 1)
    key = ((pflow << bits) | progress["idx"].to_numpy(np.int64))[by]
    j = np.searchsorted(key, (flow << bits) | before, "left") - 1
    found = (j >= 0) & ((key[np.maximum(j, 0)] >> bits) == flow)
    acked = progress["acked"].to_numpy(np.int64)[by]
    return np.where(found, acked[np.maximum(j, 0)], -1)


def _last_acked_asof(eps: pd.DataFrame, progress: pd.DataFrame) -> np.ndarray:
    """_last_acked by a pandas as-of merge on timestamps (captures out of time order)."""
    table = progress.rename(columns={"ts_ns": "ack_ts"})[["flow_id", "ack_ts", "acked"]]
    merged = pd.merge_asof(
        eps[["flow_id", "ts_ns"]].reset_index().sort_values("ts_ns", kind="stable"),
        table,
        left_on="ts_ns",
        right_on="ack_ts",
        by="flow_id",
        direction="backward",
        allow_exact_matches=False,
    ).set_index("index")
    return merged["acked"].reindex(eps.index).fillna(-1).to_numpy(np.int64)


def _requester_view(
    pp: Prepared, model: FlowModel, s: Stream, eps: pd.DataFrame, progress: pd.DataFrame
) -> pd.DataFrame:
    """ACK progress as the requester saw it: after a NAK it answered with go-back-0, the
    whole message counts as not acknowledged (it is redone)."""
    g0 = eps[(eps["mode"] == "go-back-0") & eps["nak_frame"].notna()]
    if g0.empty:
        return progress
    index = np.searchsorted(pp.frame, g0["nak_frame"].to_numpy(np.int64))
    first = _message_starts(pp, s, g0["flow_id"].to_numpy(np.int64), g0["start_ext"].to_numpy())
    return ack_progress(
        pp, model, dict(zip(index.tolist(), (first % PSN_MOD).tolist(), strict=True))
    )


def _message_starts(pp: Prepared, s: Stream, flow: np.ndarray, ext: np.ndarray) -> np.ndarray:
    """Per (flow, unwrapped PSN), the first PSN of the message holding it: the flow's latest
    FIRST / ONLY packet at or before it, or one past its latest LAST before it when that
    comes later (the message's FIRST never reached the capture point; its first resend may
    not have either). The PSN itself when the capture shows neither."""
    position = pp.position[s.idx]
    first = ext.copy()
    found_any = np.zeros(len(ext), bool)
    for codes, past_end in (((POS_FIRST, POS_ONLY), 0), ((POS_LAST, POS_ONLY), 1)):
        rows = np.flatnonzero(isin_small(position, codes))
        key = np.sort(s.flow[rows] * BIG + s.ext[rows] + past_end)  # a LAST: the PSN after it
        at = np.maximum(np.searchsorted(key, flow * BIG + ext, "right") - 1, 0)
        psn = key[at] - flow * BIG if len(key) else np.zeros(len(ext), np.int64)
        found = (psn <= ext) & (psn > ext - BIG // 2)  # at or before it, in this flow
        first = np.where(found & found_any, np.maximum(first, psn), np.where(found, psn, first))
        found_any |= found
    return first


def _redone_unseen(pp: Prepared, s: Stream, eps: pd.DataFrame) -> np.ndarray:
    """Per episode, whether it is a NAK's resend from the NAKed PSN after which the flow's
    next episode restarts at the first PSN of that PSN's message: a go-back-N requester
    takes the NAK as an ACK of everything before its PSN and never resends that again, so
    the requester redid the message (go-back-0) and its redone FIRST was lost before the
    capture point (the responder, back at the FIRST, then waits for the ACK timer)."""
    order = np.argsort(eps["first_row"].to_numpy(), kind="stable")  # flows in stream order
    flow = eps["flow_id"].to_numpy(np.int64)[order]
    ext = eps["start_ext"].to_numpy(np.int64)[order]
    from_nak = (eps["trigger"] == "nak").to_numpy() & (eps["mode"] == "go-back-n").to_numpy()
    from_nak &= (eps["start_psn"] == eps["nak_raw"]).fillna(False).to_numpy(bool)
    nxt = np.minimum(np.arange(len(eps)) + 1, len(eps) - 1)
    first = _message_starts(pp, s, flow, ext)
    redone = from_nak[order] & (flow[nxt] == flow) & (nxt > np.arange(len(eps)))
    redone &= (first < ext) & (ext[nxt] == first)
    out = np.zeros(len(eps), bool)
    out[order] = redone
    return out


def _modes(
    eps: pd.DataFrame,
    s: Stream,
    ep: np.ndarray,
    acked: np.ndarray,
    redone: np.ndarray | None = None,
    acked_then: np.ndarray | None = None,
) -> pd.DataFrame:
    """go-back-0: resent PSNs below the expected restart point (NAK PSN or first unacked),
    or a message redone whose FIRST the capture missed (`redone`, _redone_unseen);
    selective-repeat: at least half the PSNs of its range skipped, or one or two resends
    that stopped short of what was sent before new data, unless the sender knew all that
    acknowledged by then (`acked_then`, per episode: raw PSN, -1 none; a go-back-N an ACK
    overtook stops too); go-back-n otherwise. Not certain when the resends (one or two
    packets reaching the last PSN sent) are what either policy would send."""
    expected = np.where(eps["nak_raw"].notna(), eps["nak_raw"].fillna(0), acked + 1)
    known = eps["nak_raw"].notna().to_numpy() | (acked >= 0)
    below = known & (psn_delta(eps["start_psn"].to_numpy(), expected.astype(np.int64)) < 0)
    if redone is not None:
        below |= redone
    nxt = _rows_after(eps, s)
    next_is_new = (nxt > eps["last_row"].to_numpy()) & (s.flow[nxt] == eps["flow_id"].to_numpy())
    next_is_new &= ep[nxt] < 0
    # Stopping short then sending new data shows selective repeat only for one or two
    # resends: a go-back-N shows itself by three or more in a row (its last resends may be
    # lost before the capture point).
    short = (eps["last_ext"] < eps["high"]).to_numpy() & next_is_new
    short &= (eps["packets"] <= 2).to_numpy()
    if acked_then is not None:
        high = eps["high"].to_numpy(np.int64) % PSN_MOD
        short &= ~((acked_then >= 0) & (psn_delta(acked_then, high) >= 0))
    # Resent PSNs skipped inside the episode: selective repeat resends a few PSNs and the
    # window's last one; a go-back-N whose resends were lost again covers most of its range.
    coverage = eps["units"] / (eps["last_ext"] - eps["start_ext"] + 1)
    selective = ((eps["jumps"] > 0) & (coverage <= SR_COVERAGE)).to_numpy() | short
    mode = np.where(below, "go-back-0", np.where(selective, "selective-repeat", "go-back-n"))
    # Either policy's resends; or a timeout restart below what the capture saw acknowledged:
    # go-back-0, or go-back-N after an ACK lost beyond the capture point.
    either_sr = ~below & ~selective & (eps["packets"] <= 2).to_numpy()
    either_g0 = below & eps["nak_raw"].isna().to_numpy()
    alternative = np.where(either_sr, "selective-repeat", np.where(either_g0, "go-back-0", ""))
    return pd.DataFrame(
        {"mode": mode, "mode_certain": alternative == "", "alternative": alternative},
        index=eps.index,
    )


def _rows_after(eps: pd.DataFrame, s: Stream) -> np.ndarray:
    """Per episode, the stream row after its last one (the last row itself at the end)."""
    return np.minimum(eps["last_row"].to_numpy() + 1, max(len(s) - 1, 0))


def resolve_by_host(eps: pd.DataFrame, host: np.ndarray) -> pd.DataFrame:
    """An episode whose capture fits go-back-N and another policy (`alternative`) takes that
    policy when its sending host (`host`, per episode) shows it in a certain episode (the
    recovery policy is a NIC setting), else the IBTA default go-back-N."""
    certain = eps["mode_certain"].to_numpy(bool)
    mode = eps["mode"].to_numpy(object)
    given = eps["alternative"] if "alternative" in eps else pd.Series("", index=eps.index)
    alternative = given.fillna("").to_numpy(object)
    n = int(host.max(initial=-1)) + 1
    shows = {m: np.bincount(host[certain & (mode == m)], minlength=n) > 0 for m in ALTERNATIVES}
    chosen = np.full(len(eps), "go-back-n", dtype=object)
    for m, hosts in shows.items():
        chosen[(alternative == m) & hosts[host]] = m
    host_known = np.bincount(host[certain], minlength=n) > 0
    basis = np.where(certain, "resent_psns", np.where(host_known[host], "sending_host", "default"))
    return eps.assign(mode=np.where(certain, mode, chosen), mode_basis=basis)


def _prev_ts_in_flow(model: FlowModel, pp: Prepared, idx: np.ndarray) -> np.ndarray:
    """Per frame index, the timestamp of the previous frame of its flow (-1 for the first)."""
    prev = model.order.last_before(model.flow_id[idx], idx)
    return np.where(prev >= 0, pp.ts[prev], -1)


def request_episodes(
    pp: Prepared,
    model: FlowModel,
    s: Stream,
    naks: pd.DataFrame,
    progress: pd.DataFrame,
    link_bps: float,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Episodes of resent requests with trigger, mode and delay, and the frames of READ
    re-issues: episodes that open with a re-sent READ REQUEST and no NAK are not resends of
    this flow but requests to resend READ responses (reads.py)."""
    ep, reaction = episode_rows(s, pp, naks, link_bps)
    eps = _episodes(s, pp, ep, progress, reaction, link_bps)
    if eps.empty:
        return _empty(), np.zeros(0, np.int64)
    eps = _assign_triggers(eps, naks, reaction)
    # A READ request resent right after a NAK's resends is a go-back-N's rest, no re-issue.
    rest = _resumed(eps, pp.ts[s.idx[eps["last_row"].to_numpy()]], np.ones(len(eps), bool))
    reissue = pp.read_request[eps["idx"].to_numpy()] & (eps["trigger"] == "timeout").to_numpy()
    reissue &= ~rest
    rows = np.flatnonzero(np.isin(ep, eps["ep"].to_numpy()[reissue]))
    reissues = s.idx[rows][pp.read_request[s.idx[rows]]]
    eps = eps[~reissue].reset_index(drop=True)
    if eps.empty:
        return _empty(), reissues
    unknown = np.full(len(eps), -1, np.int64)
    eps["mode"] = _modes(eps, s, ep, unknown)["mode"]
    redone = _redone_unseen(pp, s, eps)
    eps.loc[redone, "mode"] = "go-back-0"
    view = _requester_view(pp, model, s, eps, progress)
    flow, idx = eps["flow_id"].to_numpy(np.int64), eps["idx"].to_numpy(np.int64)
    acked = _last_acked(pp, flow, idx, view, reaction)
    acked_then = _last_acked(pp, flow, s.idx[_rows_after(eps, s)], view, reaction)  # sent on
    eps[["mode", "mode_certain", "alternative"]] = _modes(eps, s, ep, acked, redone, acked_then)
    last_ts = pp.ts[s.idx[eps["last_row"].to_numpy()]]
    una = _first_unacked(eps["start_psn"].to_numpy(), acked)
    eps.loc[_resumed(eps, last_ts, una), "trigger"] = "unknown"
    prev_ts = _prev_ts_in_flow(model, pp, eps["idx"].to_numpy())
    silence = eps["ts_ns"] - prev_ts
    after_nak = (eps["ts_ns"] - eps["nak_ts_exact"]).fillna(0).to_numpy(np.int64)
    untriggered = eps["trigger"].isin(("timeout", "unknown")).to_numpy()
    delay_ns = np.where(untriggered, silence, after_nak)
    eps["delay_s"] = delay_ns / 1e9
    eps["nak_psn"] = eps["nak_raw"].where(eps["trigger"] == "nak")
    return eps, reissues


def _resumed(eps: pd.DataFrame, last_ts: np.ndarray, una: np.ndarray) -> np.ndarray:
    """Runs with no NAK of their own that pick up, right after a NAK's resends, at or above
    where those began (the NAK acknowledged what precedes its PSN): the rest of a go-back-N
    the NAK interrupted. The capture shows no trigger (unknown). A timer restart would come
    after a silence and resend from the first unacknowledged PSN; a run there counts as
    resumed only when it comes sooner than any ACK timer can fire after the NAK that
    re-armed it. `last_ts`: per episode, when its last resend was seen; `una`: whether it
    starts at the first PSN not acknowledged (all True: only runs that soon count)."""
    order = np.argsort(eps["first_row"].to_numpy(), kind="stable")  # stream order
    flow = eps["flow_id"].to_numpy()[order]
    trigger = eps["trigger"].to_numpy(object)[order]
    first, last = eps["first_row"].to_numpy()[order], eps["last_row"].to_numpy()[order]
    ext = eps["start_ext"].to_numpy()[order]
    prev, same_flow = _previous_in_flow(flow)
    after_nak = same_flow & (first == last[prev] + 1)
    after_nak &= np.isin(trigger[prev], ("nak", "rnr"))
    silence = eps["ts_ns"].to_numpy()[order] - last_ts[order][prev]
    no_timer = (silence <= TIMER_SILENCE_NS) & (~una[order] | (silence < NO_TIMER_YET_NS))
    out = np.zeros(len(eps), bool)
    out[order] = (trigger == "timeout") & after_nak & (ext >= ext[prev]) & no_timer
    return out


def _empty() -> pd.DataFrame:
    return empty_frame(dict.fromkeys(EPISODE_COLUMNS, object))


def ack_timeout_estimate(delay_s: float) -> tuple[int, float]:
    """Nearest IBTA ACK timeout 4.096 us * 2^k to an observed silence: (k, seconds)."""
    k = int(np.clip(np.round(np.log2(max(delay_s, 1e-12) / ACK_TIMEOUT_UNIT_S)), 0, 31))
    return k, ACK_TIMEOUT_UNIT_S * 2**k
