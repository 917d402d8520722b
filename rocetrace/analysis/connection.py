"""Each connection's events in capture order, through the IBTA state machine (C).

A *conversation* is one requester direction of a connection: the request flow and the
responses that answer it (ACK, NAK, RNR NAK, READ responses, atomic ACKs), which travel on
the paired flow. Its id is the request flow's id. When both ends of a QP pair post
requests, each end's requests and the other end's responses to them form their own
conversation, so two PSN spaces never mix.

Events keep capture order (the order the capture point recorded them in); the C pass
(`_connection.c`) keeps the requester's and responder's state and writes what each event
was and, per retransmission episode, the evidence it rests on. Nothing here weighs timing:
episodes/ does, with the capture's tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rocetrace._source_hash import check_build_is_current
from rocetrace.analysis.flows import FlowModel, ReadSpans
from rocetrace.analysis.order import stable_order
from rocetrace.analysis.pfc import PauseWindows
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    UD,
    Prepared,
    isin_small,
)
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS
from rocetrace.capture.zeroed import zeroed
from rocetrace.heap import give_back

try:
    import rocetrace.analysis._connection as _connection
except ImportError as exc:
    raise ImportError(
        f"rocetrace's C module rocetrace.analysis._connection does not load ({exc}); it is "
        "compiled when rocetrace is installed: rebuild it with `python3 -m pip install -e .` "
        "in the rocetrace checkout (needs gcc and the Python headers)"
    ) from exc

check_build_is_current("rocetrace.analysis._connection", _connection.SOURCE_HASH)

RESPONSE_KINDS = (READ_RESPONSE, ACK, NAK, RNR_NAK, ATOMIC_ACK)

# Per-event flags (the F_* of _connection.c).
NEW, RESENT, GAP, REUSE, STALE, UNSENT, OOS, LATE, ADVANCE, REORDER, OPEN = (
    1 << k for k in range(11)
)
# Anomaly kinds (A_* of _connection.c).
ANOMALY_REUSE, ANOMALY_UNSENT, ANOMALY_REORDER = 1, 2, 3
HISTORY_LEN = 48

# The episode record of _connection.c, field by field (all int64).
EPISODE_FIELDS = (
    "conv", "first_ev", "last_ev", "n_resent", "start_ext", "end_ext", "sent_hi",
    "last_sent_first", "acked", "acked_ev", "nak_ev", "nak_ext", "nak_kind",
    "prev_ev", "prev_req_ev", "progress_ev", "contiguous", "skips", "skipped", "ack_skips",
    "tail_skips", "start_pos", "start_opcode", "read_ev", "resp_hi", "resp_hi_ev", "orig_ev",
    "n_resp", "resumed", "cursor", "cut_of", "new_naks", "start_kind", "msg_first",
    "nak_early", "cut_by_split", "own_nak_seen", "read_resp_hi", "unasked", "near_split",
    "alt_of", "read_naked", "alt_lo", "taken_split", "near_taken",
    "split_by", "alt_two", "swapped",
)  # fmt: skip
# How an episode began (start_kind): the first resend after new data or of the capture,
# a restart (the PSN went back), a resend of exactly a PSN a newer NAK asked for, the next
# READ of a run of READ re-issues, a run resumed after a silence only a timer explains.
START_FIRST, START_RESTART, START_ASKED, START_REISSUE, START_TIMER = range(5)
EPISODE_DTYPE = np.dtype([(name, np.int64) for name in EPISODE_FIELDS])
ANOMALY_DTYPE = np.dtype([(name, np.int64) for name in ("kind", "ev", "other_ev", "conv")])
CONV_FIELDS = ("sent_hi", "acked", "progress_ev", "last_ev", "outstanding", "first_ext")
if len(EPISODE_FIELDS) != _connection.EPISODE_FIELDS or (
    len(CONV_FIELDS) != _connection.CONV_FIELDS
):
    raise ImportError("rocetrace.analysis._connection: record layouts differ from the C module")


@dataclass
class Conversations:
    """The state machine's output. Event arrays are in event order (by conversation, then
    capture order); `row` maps an event to its frame index in Prepared."""

    row: np.ndarray  # int32, as conv: the state machine's pass is the analysis' peak
    conv: np.ndarray
    ts: np.ndarray
    kind: np.ndarray
    ext: np.ndarray  # unwrapped PSN
    gap: np.ndarray  # PSNs skipped just before the event
    episode: np.ndarray  # retransmission episode of a resent request, -1 otherwise (int32)
    link: np.ndarray  # resend -> original; ACK -> request it times (Karn); NAK -> first OOS
    # (int32: the state machine's pass is the analysis' peak, its outputs are kept narrow)
    flags: np.ndarray
    episodes: np.ndarray  # EPISODE_DTYPE records
    anomalies: np.ndarray  # ANOMALY_DTYPE records
    history: list[str]  # per flow id: the Zeek-style history of its conversation
    state: np.ndarray  # per flow id: CONV_FIELDS at the capture's end
    floor: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # per flow id: shortest NAK -> answer its path shows at this capture point, -1 none
    reserved: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per event: a NAK no split took, kept for the later restart that answers it (rerun)
    inputs: tuple[_Events, np.ndarray, int] | None = None
    # the second pass's events, gate and slack, for rerun(); dropped once the stage is done

    def __len__(self) -> int:
        return len(self.row)

    def frames_of(self, events: np.ndarray, pp: Prepared) -> np.ndarray:
        """Frame numbers of events (-1 stays -1)."""
        events = np.asarray(events, np.int64)
        out = np.full(len(events), -1, np.int64)
        valid = events >= 0
        out[valid] = pp.frames_at(self.row[events[valid]])
        return out


def conversation_of(pp: Prepared, model: FlowModel) -> np.ndarray:
    """Per frame: the conversation (request flow id) it belongs to, -1 for none. Requests
    belong to their own flow; responses to the flow whose requests they answer (the pair).
    Chosen per frame by np.where (a frame of no flow has flow id -1, and the pair lookup
    has -1 in front for it): boolean-mask scatters cost twice as much."""
    flow = model.flow_id
    request = (pp.kind == REQUEST) & (pp.transport != UD)
    conv = np.where(request, flow, -1).astype(np.int64, copy=False)
    if len(model):
        pair = np.concatenate((np.full(1, -1, np.int64), model.pair.astype(np.int64)))
        np.copyto(conv, pair[flow + 1], where=isin_small(pp.kind, RESPONSE_KINDS))
    return conv


def _event_order(conv: np.ndarray, n_conv: int) -> np.ndarray:
    """Frame indices of the conversations' events (int32), by conversation, each in capture
    order.

    Capture order is the packet table's row order: the order the capture point recorded
    the frames in, which is (timestamp, frame) while timestamps never go back. A jittery
    clock makes them go back now and then while the records stay in arrival order, so
    sorting by timestamp would swap back-to-back frames; several files are merged by time
    into one table before they get here."""
    rows = np.flatnonzero(conv >= 0)  # fewer than 2^31 frames (the C pass): int32 indices
    if len(rows) == len(conv):  # every frame is an event: no subset to gather
        return stable_order(conv, n_conv).astype(np.int32)  # a writable copy, as the gather gave
    return rows.astype(np.int32)[stable_order(conv[rows], n_conv)]


def run_conversations(
    pp: Prepared,
    model: FlowModel,
    span: ReadSpans,
    hosts_of: np.ndarray,
    tol_ns: int,
    frame_ns: int,
    pauses: PauseWindows | None = None,
) -> Conversations:
    """Every conversation's events through the state machine; `span`: PSNs each frame
    occupies (flows.read_spans); `hosts_of`: per flow, a code of its host pair (a path's
    NAKs are answered alike); `tol_ns`: the clock slack and `frame_ns` the longest frame
    time (tolerances.py); `pauses`: the capture's PFC pauses (pfc.py), which are no
    silence.

    Two passes: the first, in capture order alone, shows how soon after a NAK this capture
    point sees its answer on each path (the shortest clean answer, which may have waited
    for a frame on the wire); the second splits a run at its next PSN for a NAK of that PSN
    only if the NAK was seen at least that long before, less twice the slack and a frame
    time (episodes/ calls a split that close uncertain):
    at a receiver a NAK is answered a round trip later, and a resend 50 ns after a NAK of
    its PSN there is the go-back-N that was already on its way."""
    n_conv = len(model)
    conv = conversation_of(pp, model).astype(np.int32)  # ids < frames < 2^31: half the memory
    row = _event_order(conv, n_conv)
    ev_conv = conv[row]
    del conv  # per frame: not needed past here, and the state machine's run is the peak
    events = _Events.gather(pp, row, ev_conv, span, _paused_so_far(pp, model, row, ev_conv, pauses))
    del ev_conv
    give_back()  # the frames' conversations and the gathers' indices: ~20 MB of holes at 1M
    floor = np.full(n_conv, -1, np.int64)
    if bool(isin_small(events.kind, (NAK, RNR_NAK)).any()):  # no NAK: nothing to gate
        floor = answer_floor(_run(events, tol_ns, floor), hosts_of, tol_ns)
    gate = np.where(floor >= 0, np.maximum(floor - 2 * (tol_ns + frame_ns), 0), -1)
    out = _run(events, tol_ns, gate)
    out.floor = floor
    out.inputs = (events, gate, tol_ns)
    return out


def rerun(c: Conversations, reserved: np.ndarray) -> Conversations:
    """The second pass again, with the NAK events `reserved` (1 per such event) left to the
    restarts that answer them: no split at a run's next PSN takes one (each such split was
    more of its run; episodes.reserved_naks), but at a resend marked 2 (the one resend of
    its PSN from the restart on, episodes.nak_claims._naks_in_order). Returns the new output,
    `reserved` kept."""
    if c.inputs is None:
        return c
    events, gate, tol_ns = c.inputs
    out = _run(events, tol_ns, gate, reserved)
    out.floor, out.reserved, out.inputs = c.floor, reserved, None
    return out


@dataclass
class _Events:
    """The state machine's inputs, gathered once for both passes (event order)."""

    row: np.ndarray
    conv: np.ndarray
    ts: np.ndarray
    kind: np.ndarray
    psn: np.ndarray
    span: np.ndarray
    opcode: np.ndarray
    pos: np.ndarray
    paused: np.ndarray

    @classmethod
    def gather(
        cls, pp: Prepared, row: np.ndarray, conv: np.ndarray, span: ReadSpans, paused: np.ndarray
    ) -> _Events:
        at = row.astype(np.intp)  # numpy converts other indices to intp at every gather
        return cls(
            row=row,
            conv=np.ascontiguousarray(conv, np.int32),
            ts=np.ascontiguousarray(pp.ts[at], np.int64),
            kind=pp.kind[at].astype(np.int8, copy=False),  # int8, int32 already: no copies
            psn=pp.psn[at].astype(np.int32, copy=False),  # 24-bit PSNs, -1 none: half the memory
            span=np.ascontiguousarray(span[at]),  # int32 (int64 if a span passes it)
            opcode=np.ascontiguousarray(pp.opcodes_at(at), np.int16),
            pos=pp.position[at].astype(np.int8, copy=False),
            paused=np.ascontiguousarray(paused, np.int64),
        )


def _paused_so_far(
    pp: Prepared,
    model: FlowModel,
    row: np.ndarray,
    ev_conv: np.ndarray,
    pauses: PauseWindows | None,
) -> np.ndarray:
    """Per event: how long its conversation's priority was paused since the conversation's
    first event (cumulative ns; zeros without PFC pauses, in pages never written: the state
    machine only reads them, so they take no memory)."""
    if not pauses or len(row) == 0:
        return zeroed((len(row),), np.int64)
    ts = pp.ts[row]
    new = np.ones(len(row), bool)
    new[1:] = ev_conv[1:] != ev_conv[:-1]
    prev = np.where(new, ts, np.roll(ts, 1))
    step = pauses.overlap(model.priority[ev_conv], prev, ts)
    cum = np.cumsum(step)
    base = np.repeat(cum[new] - step[new], np.diff(np.append(np.flatnonzero(new), len(row))))
    return cum - base


def passed_over(c: Conversations, ks: np.ndarray) -> np.ndarray:
    """Per episode in `ks`: does it begin at a PSN the conversation's episode before it
    passed over (resent PSNs below and above it, not it)? On a path that reorders, such a
    first resend may be that run's own copy, late, not a new episode's."""
    e, span = c.episodes, 1 << 24  # a run covers less than the PSN space
    ev = np.flatnonzero(c.episode >= 0)
    out = np.zeros(len(ks), bool)
    if len(ev) == 0 or len(ks) == 0:
        return out
    ep, ext = c.episode[ev].astype(np.int64), c.ext[ev]
    n = len(e)
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, np.iinfo(np.int64).min, np.int64)
    np.minimum.at(lo, ep, ext)
    np.maximum.at(hi, ep, ext)
    key = np.sort(ep * span + (ext - lo[ep]))
    prev = ks - 1
    ok = (prev >= 0) & (e["conv"][ks] == e["conv"][np.maximum(prev, 0)])
    p = e["start_ext"][ks]
    j = np.maximum(prev, 0)
    ok &= (lo[j] < p) & (p < hi[j]) & (p - lo[j] < span)
    want = j * span + (p - lo[j])
    at = np.minimum(np.searchsorted(key, want), max(len(key) - 1, 0))
    out[ok] = key[at[ok]] != want[ok]
    return out


def lone_passed_over(c: Conversations) -> np.ndarray:
    """Per episode: is it one resend alone, taking a NAK, of a PSN the run right before it
    passed over (passed_over)? That run's copy of the PSN went missing on a stretch of path
    before the capture point: lost there, and this resend the NAK's answer, or held there
    (a path that reorders, even where the capture showed no other sign of it), and this
    resend that run's own copy, late. Only the time from the NAK can tell: an answer comes
    no sooner than the path's shortest answer, so such a resend cannot measure it."""
    e = c.episodes
    ks = np.flatnonzero((e["n_resent"] == 1) & (e["nak_ev"] >= 0))
    out = np.zeros(len(e), bool)
    out[ks] = passed_over(c, ks)
    return out


def late_copy(c: Conversations) -> np.ndarray:
    """Per episode: does it begin by going back to a PSN the run before it passed over, and
    go on past where that run stopped, short of the newest PSN sent? On a path that
    reorders, that first resend may be the run's own copy, late (the responder NAKed the
    hole meanwhile), and what follows more of that run: a NAK's answer would go on from
    its PSN (go-back-N, go-back-0) or skip to the newest PSN (selective repeat)."""
    e = c.episodes
    out = np.zeros(len(e), bool)
    ks = np.flatnonzero(np.isin(e["start_kind"], (START_RESTART, START_ASKED)))
    ev = np.flatnonzero(c.episode >= 0)
    if not len(ks) or not len(ev):
        return out
    ep = c.episode[ev].astype(np.int64)
    order = np.lexsort((ev, ep))
    ev, ep = ev[order], ep[order]
    second = np.minimum(np.searchsorted(ep, ks) + 1, len(ep) - 1)
    nxt, prev = c.ext[ev[second]], np.maximum(ks - 1, 0)
    run_on = (ep[second] == ks) & (nxt > e["end_ext"][prev]) & (nxt < e["last_sent_first"][ks])
    out[ks] = passed_over(c, ks) & run_on
    return out


def lone_late_copy(c: Conversations, trigger: np.ndarray, upstream: np.ndarray) -> np.ndarray:
    """Per episode: is it one resend alone, of a PSN the run before it passed over, that
    took a NAK, right before a restart of no cause (`trigger` unknown) that could answer
    that NAK (at its PSN, or at the first PSN of its message: a go-back-0; where its
    conversation loses requests before the capture point, `upstream` per episode, anywhere
    between the two: a go-back-0 whose first resends were lost on the way)? On a path that
    reorders, the lone resend may be the run's own copy, late (the responder NAKed the
    hole meanwhile), and the restart the NAK's answer; the other reading leaves the restart
    no cause, which needs a NAK the capture did not show."""
    out = np.zeros(len(c.episodes), bool)
    ks = _lone_copies_before_restarts(c, upstream)
    out[ks] = trigger[ks + 1] == "unknown"
    return out


def lone_late_copy_before_timer(
    c: Conversations, trigger: np.ndarray, upstream: np.ndarray
) -> np.ndarray:
    """Per episode: such a lone resend (lone_late_copy) right before a timer's restart that
    could answer its NAK, and that restart. Two readings stand: the lone resend the NAK's
    answer (the rest of its run lost on the way) and the restart the timer's, or the lone
    resend the run's own copy, late (the first the capture shows of a path that reorders),
    and the restart the NAK's answer, slow (held by a PFC pause the capture point does not
    see, say): both triggers are open."""
    out = np.zeros(len(c.episodes), bool)
    ks = _lone_copies_before_restarts(c, upstream)
    ks = ks[trigger[ks + 1] == "timeout"]
    out[ks] = out[ks + 1] = True
    return out


def _lone_copies_before_restarts(c: Conversations, upstream: np.ndarray) -> np.ndarray:
    """Episodes of one resend, of a PSN the run before it passed over, that took a NAK,
    right before a restart in their conversation that could answer that NAK (lone_late_copy)."""
    e = c.episodes
    ks = np.flatnonzero(
        np.isin(e["start_kind"][:-1], (START_FIRST, START_RESTART)) & (e["n_resent"][:-1] == 1)
        & (e["nak_ev"][:-1] >= 0) & (e["conv"][:-1] == e["conv"][1:])
    )  # fmt: skip
    nxt = ks + 1
    back = e["start_kind"][nxt] == START_RESTART
    at = e["start_ext"][nxt]
    first, nak = e["msg_first"][ks], e["nak_ext"][ks]
    back &= (at == nak) | (((at == first) | (upstream[ks] & (at > first))) & (at <= nak))
    ks = ks[back]
    return ks[passed_over(c, ks)]


def copy_of_earlier_run(c: Conversations) -> np.ndarray:
    """Per episode: is it one resend alone, going back (or at a PSN a NAK asked for), of a
    PSN an earlier run of its conversation passed over (resent PSNs below and above it,
    not it) since the last new data, where the capture already showed the path reordering
    that conversation's requests (_reorder_seen)? That resend may be the earlier run's own
    copy, late, rather than an answer of its own: the NAK it takes may be another's. So
    too several resends that skip forward, each of a PSN an earlier run passed over: a
    NIC's run goes on PSN by PSN, and these are what that run's late copies look like; for
    those, a capture point that saw its conversation's requests lost before it will do (it
    is behind a stretch of path, which may reorder; at the sender copies come in order)."""
    e = c.episodes
    out = np.zeros(len(e), bool)
    going_back = np.isin(e["start_kind"], (START_RESTART, START_ASKED))
    behind = np.zeros(int(max(e["conv"].max(initial=-1), c.conv.max(initial=-1))) + 1, bool)
    behind[c.conv[(c.flags & (GAP | LATE)) != 0]] = True
    skipping = (e["skips"] > 0) & (_reorder_seen(c, e) | behind[e["conv"]])
    lone = (e["n_resent"] == 1) & _reorder_seen(c, e)
    ks = np.flatnonzero((lone | skipping) & going_back)
    if not len(ks):
        return out
    new = np.flatnonzero((c.flags & NEW) != 0)
    ev = np.flatnonzero(c.episode >= 0)
    ep, ext = c.episode[ev].astype(np.int64), c.ext[ev]
    lo = np.full(len(e), np.iinfo(np.int64).max, np.int64)
    hi = np.full(len(e), np.iinfo(np.int64).min, np.int64)
    np.minimum.at(lo, ep, ext)
    np.maximum.at(hi, ep, ext)
    of_episode = pd.Series(ext).groupby(ep).indices
    for k in ks.tolist():  # lone resends going back on a reordering path: few
        at = int(np.searchsorted(new, e["first_ev"][k])) - 1
        since = new[at] if at >= 0 and c.conv[new[at]] == e["conv"][k] else -1
        earlier = (e["conv"][:k] == e["conv"][k]) & (e["first_ev"][:k] >= since)
        passed = []
        for p in ext[of_episode[k]].tolist():
            runs = np.flatnonzero(earlier & (lo[:k] < p) & (p < hi[:k]))
            passed.append(any(not (ext[of_episode[j]] == p).any() for j in runs.tolist()))
        out[k] = all(passed)
    return out


def _reorder_seen(c: Conversations, e: np.ndarray) -> np.ndarray:
    """Per episode: did the capture show its conversation's path reordering requests
    before it: a late original (a `reordering` anomaly), or a copy out of place (an
    earlier lone resend going back with no NAK, of its own PSN or any, sooner than any
    timer after the request before it: a NIC goes back only for a NAK, a timer or a run it
    resumes, and a resumed run's resend is no lone episode)?"""
    late = np.flatnonzero((c.flags & REORDER) != 0)
    silence = c.ts[e["first_ev"]] - c.ts[np.maximum(e["prev_req_ev"], 0)]
    stray = (e["n_resent"] == 1) & (e["start_kind"] == START_RESTART) & (e["nak_ev"] < 0)
    stray &= (e["own_nak_seen"] == 0) & (e["prev_req_ev"] >= 0)
    stray &= silence < MIN_ACK_TIMEOUT_NS
    signs = np.concatenate([late, e["first_ev"][stray]])
    conv = c.conv[signs].astype(np.int64) if len(signs) else np.zeros(0, np.int64)
    signs, conv = signs[conv >= 0], conv[conv >= 0]
    first = pd.Series(signs).groupby(conv).min()
    # sized for every conversation a sign or an episode names (a late original may be in a
    # conversation with no episode of its own)
    size = int(max(e["conv"].max(initial=-1), conv.max(initial=-1))) + 1
    earliest = np.full(size, np.iinfo(np.int64).max, np.int64)
    earliest[first.index.to_numpy(np.int64)] = first.to_numpy(np.int64)
    return earliest[e["conv"]] < e["first_ev"]


def answer_floor(c: Conversations, hosts_of: np.ndarray, tol_ns: int) -> np.ndarray:
    """Per conversation: the shortest time from a NAK to a resend of its PSN that starts an
    episode on its own (after new data or by going back), over the conversation's host
    pair; -1 where the path shows none. An RNR NAK's retry is no such answer: it waits for
    the timer the RNR NAK names. Nor is a lone resend of a PSN the run before it passed
    over (lone_passed_over) on a path that shows no other answer: it may be that run's
    copy, late, and time nothing; beside other answers it stands among them. So too a
    resend after a silence of the shortest ACK timer (_after_timer_silence)."""
    e = c.episodes
    floor = np.full(len(hosts_of), -1, np.int64)
    clean = (e["nak_ev"] >= 0) & (e["nak_kind"] == NAK) & (e["start_ext"] == e["nak_ext"])
    clean &= np.isin(e["start_kind"], (START_FIRST, START_RESTART))
    clean &= (e["orig_ev"] >= 0) | (e["n_resent"] >= 2) | _continued(e)  # no late original
    clean &= ~late_copy(c)  # nor a run's own copy, late
    clean &= ~_maybe_copies_alone(e, lone_passed_over(c) & clean, clean, hosts_of)
    clean &= ~_maybe_copies_alone(e, _after_timer_silence(c, e, tol_ns) & clean, clean, hosts_of)
    if not clean.any():
        return floor
    wait = c.ts[e["first_ev"][clean]] - c.ts[e["nak_ev"][clean]]
    path = hosts_of[e["conv"][clean]]
    shortest = pd.Series(wait).groupby(path).min()
    per_path = np.full(int(hosts_of.max(initial=0)) + 1, -1, np.int64)
    per_path[shortest.index.to_numpy(np.int64)] = np.maximum(shortest.to_numpy(np.int64), 0)
    return np.where(hosts_of >= 0, per_path[np.maximum(hosts_of, 0)], -1)


def _after_timer_silence(c: Conversations, e: np.ndarray, tol_ns: int) -> np.ndarray:
    """Per episode: did it begin after a silence of its conversation (since the request
    before it) as long as the shortest ACK timer? Such a resend may be the timer's restart,
    its NAK's answer lost before the capture point, or that answer held as long by a PFC
    pause the capture point does not see (the silence its new data kept too): it bounds
    the path's answer from above only, and a shortest answer taken from it alone would read
    a real answer that came sooner as a late original. Beside other answers it stands among
    them: it can only lower their shortest, which puts no resend in doubt that they did
    not."""
    prev = e["prev_req_ev"]
    silence = c.ts[e["first_ev"]] - c.ts[np.maximum(prev, 0)]
    return (prev < 0) | (silence >= MIN_ACK_TIMEOUT_NS - tol_ns)


def _maybe_copies_alone(
    e: np.ndarray, maybe: np.ndarray, clean: np.ndarray, hosts_of: np.ndarray
) -> np.ndarray:
    """Per episode: of `maybe` (answers that may be a run's late copy), on a host pair
    whose `clean` answers are all such."""
    path = hosts_of[e["conv"]]
    trusted = np.zeros(int(hosts_of.max(initial=0)) + 2, bool)
    trusted[path[clean & ~maybe]] = True
    return maybe & ~trusted[path]


def back_into_skip(c: Conversations) -> np.ndarray:
    """Per episode: does it go back, right after the run before it (no request between),
    into the PSNs that run skipped forward over, its last resend above them, where the
    capture already showed the path reordering the conversation (_reorder_seen)? A NIC's
    run goes only forward: that skip may be a copy from elsewhere, late, and this resend
    more of the run."""
    e = c.episodes
    ks = np.flatnonzero(e["start_kind"] == START_RESTART)
    ks = ks[(ks > 0) & (e["conv"][ks] == e["conv"][np.maximum(ks - 1, 0)])]
    out = np.zeros(len(e), bool)
    if not len(ks):
        return out
    prev = ks - 1
    last = e["last_ev"][prev]
    right_after = (e["prev_req_ev"][ks] == last) & (e["n_resent"][prev] >= 2)
    out[ks] = right_after & passed_over(c, ks) & (e["start_ext"][ks] < c.ext[last])
    out &= _reorder_seen(c, e)
    return out


def _continued(e: np.ndarray) -> np.ndarray:
    """Lone resends whose run the next episode continues: it starts at the next PSN with no
    request in between and no NAK of its own (a silence alone split the run: the sender
    was held, by a PFC pause the capture point may not see). Such a resend began a run,
    which no late original does."""
    lone = np.flatnonzero(e["n_resent"] == 1)
    order = np.argsort(e["prev_req_ev"], kind="stable")
    after = e["prev_req_ev"][order]
    at = np.minimum(np.searchsorted(after, e["first_ev"][lone]), max(len(e) - 1, 0))
    nxt = order[at]
    out = np.zeros(len(e), bool)
    nxt_psn = e["start_ext"][nxt] == e["end_ext"][lone] + 1
    out[lone] = (after[at] == e["first_ev"][lone]) & nxt_psn & (e["nak_ev"][nxt] < 0)
    return out


def _run(
    ev: _Events, tol_ns: int, gate: np.ndarray, reserved: np.ndarray | None = None
) -> Conversations:
    """One pass of the state machine over the events; `reserved`: NAK events no split
    takes (rerun)."""
    n, n_conv = len(ev.row), len(gate)
    held = np.zeros(n, np.int8) if reserved is None else reserved.astype(np.int8)
    ext, gap = np.empty(n, np.int64), zeroed((n,), np.int64)  # gap: written where PSNs were
    # skipped only, its other pages never backed by memory
    episode, link = np.empty(n, np.int32), np.empty(n, np.int32)
    flags = np.empty(n, np.int32)
    history = np.zeros((n_conv, HISTORY_LEN), np.uint8)
    state = np.zeros((n_conv, len(CONV_FIELDS)), np.int64)
    eps, anomalies = _connection.run(
        ev.conv, ev.ts, ev.kind, ev.psn, ev.span, ev.opcode, ev.pos,
        ext, gap, episode, link, flags, history, state,
        np.ascontiguousarray(gate, np.int64), ev.paused, held, int(tol_ns),
    )  # fmt: skip
    return Conversations(
        row=ev.row,
        conv=ev.conv,
        ts=ev.ts,
        kind=ev.kind,
        ext=ext,
        gap=gap,
        episode=episode,
        link=link,
        flags=flags,
        episodes=np.frombuffer(eps, EPISODE_DTYPE),
        anomalies=np.frombuffer(anomalies, ANOMALY_DTYPE),
        history=[bytes(h).rstrip(b"\0").decode("ascii") for h in history],
        state=state,
    )


def path_floor(c: Conversations, conv: np.ndarray) -> np.ndarray:
    """Per conversation of `conv`: its path's shortest NAK answer (answer_floor), -1 where
    the path shows none."""
    return c.floor[conv] if len(c.floor) else np.full(len(conv), -1, np.int64)


def slowest_answers(c: Conversations) -> np.ndarray:
    """Per conversation, its slowest request -> ACK time among packets sent once (Karn;
    0 where none), READ requests -> their responses alike: how far this capture point's
    view of the sender's clock can lag on that path."""
    out = np.zeros(len(c.state), np.int64)
    np.maximum.at(out, *_timed_acks(c))
    reads = _read_answers(c)
    np.maximum.at(out, c.conv[reads], c.ts[reads] - c.ts[c.link[reads]])
    return out


def shortest_acks(c: Conversations) -> np.ndarray:
    """Per conversation, its shortest request -> ACK time among packets sent once (Karn;
    -1 where none): the quickest round trip from this capture point to the responder and
    back. A response seen sooner after a request than that was sent before the request
    reached the responder."""
    out = np.full(len(c.state), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(out, *_timed_acks(c))
    return np.where(out == np.iinfo(np.int64).max, -1, out)


def _timed_acks(c: Conversations) -> tuple[np.ndarray, np.ndarray]:
    """The ACKs and atomic ACKs the state machine linked to the request whose round trip
    they time (Karn): each one's conversation and its request -> ACK time."""
    acks = np.flatnonzero(isin_small(c.kind, (ACK, ATOMIC_ACK)) & (c.link >= 0))
    return c.conv[acks], c.ts[acks] - c.ts[c.link[acks]]


def _read_answers(c: Conversations) -> np.ndarray:
    """READ responses that time their READ's round trip (Karn): linked to a READ request
    that was new data, and seen before any copy of that request was sent again (else the
    response may answer the re-issue). READ-only connections show no ACK to time."""
    resp = np.flatnonzero((c.kind == READ_RESPONSE) & (c.link >= 0))
    new = (c.flags[c.link[resp]] & NEW) > 0
    resp = resp[new]
    asked = c.link[resp]
    again = np.flatnonzero((c.kind == REQUEST) & ((c.flags & RESENT) > 0))
    if not len(again):  # no request sent again: every such response times its READ
        return resp
    first_again = pd.Series(c.ts[again]).groupby([c.conv[again], c.ext[again]]).min()
    key = pd.MultiIndex.from_arrays([c.conv[asked], c.ext[asked]])
    again_at = first_again.reindex(key).to_numpy(dtype=float, na_value=np.inf)
    return resp[c.ts[resp] < again_at]
