"""Episodes' shared ground: the context every rule reads (Context), the answers' names,
and the small facts several rules look up (timestamps, hosts, operation classes, the
requests by PSN). Nothing here weighs an episode; the modules beside it do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.prepared import (
    ACK,
    ATOMIC_ACK,
    NAK,
    POS_LAST,
    POS_MIDDLE,
    READ_RESPONSE,
    REQUEST,
    RNR_NAK,
    Prepared,
)
from rocetrace.analysis.tolerances import Tolerances

CERTAIN, LIKELY, UNCERTAIN = "certain", "likely", "uncertain"


CERTAINTIES = (CERTAIN, LIKELY, UNCERTAIN)


TRIGGERS = ("nak", "rnr", "timeout", "read_reissue", "unknown")


MODES = ("go-back-n", "go-back-0", "selective-repeat")


READ_REQUEST_OP = 0x0C


ACK_TIMEOUT_UNIT_S = 4.096e-6


SEND_OPS = range(0x00, 0x06)  # SEND FIRST .. SEND ONLY WITH IMMEDIATE (low 5 bits)


EPISODE_COLUMNS = [
    "flow_id", "src_ip", "dst_ip", "dest_qp", "ts", "ts_ns", "trigger", "trigger_certainty",
    "nak_psn", "nak_frame", "nak_frames", "start_psn", "last_psn", "packets", "mode",
    "mode_certainty", "delay_s", "first_frame", "evidence_frames", "nak_latency_ns",
    "retransmission_latency_ns", "silence_ns", "paused_ns", "resumed", "late_frames",
]  # fmt: skip


@dataclass
class Context:
    """What the rules read besides the episode records; `nic`, the capture's NIC context
    when the episodes are a partition's (None: this table's own, made as it is weighed)."""

    conv: cn.Conversations
    pp: Prepared
    model: FlowModel
    tol: Tolerances
    paused_ns: np.ndarray  # per episode: PFC pause of its priority while it waited
    losses_upstream: np.ndarray  # per conversation: the capture saw requests lost before it
    nic: NicContext | None = None
    # per conversation: the capture saw a late original (F_REORDER), so this capture point
    # is after a stage of the path that reorders (_after_reordering)
    reorders: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    seen: dict[str, object] = field(default_factory=dict)  # this table's own NicContext parts
    # per episode: the run its first resend may continue instead (-1 none; either_run)
    alt: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # per split that may continue either of two runs: the second (-1 none; second_run)
    alt2: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # per episode in a run that went on through a PSN soon after its NAK: those NAK events
    near: dict[int, list[int]] = field(default_factory=dict)
    # per episode: a run resumed after a split in doubt whose trigger that leaves open
    split_open: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per restart that takes a NAK a split in doubt took (claim_taken_naks): those NAKs
    claimed: dict[int, list[int]] = field(default_factory=dict)
    # those claims made by a selective repeat's shape (repeat_of_own_psn)
    claimed_repeat: set[int] = field(default_factory=set)
    # per episode: a go-back-0 reading beside a NAK of its own first PSN that a clean
    # answer of another episode took (own_nak_answered)
    own_answered: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per such go-back-0 reading: the episodes that took those NAKs (_own_nak_takers)
    own_takers: dict[int, np.ndarray] = field(default_factory=dict)
    # per episode: a go-back-0 reading beside a NAK of its own first PSN on a NIC that shows
    # selective repeat, which takes that NAK instead (own_nak_on_repeat_nic)
    own_repeat: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # per episode: the run it is, held by a PFC pause this capture point does not see, where
    # no timer can have fired by then (-1 none; unseen_pause, _held_runs)
    held_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # per episode: a timeout a NAK, an RNR NAK or a late original the capture shows may
    # have caused (timeout_silence weighed it; dropped_nak leaves it so)
    cause_shown: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))
    # the requests sorted by conversation and PSN, built when first needed (requests_by_psn)
    requests: RequestsByPsn | None = None
    # the progress events in _timer_progress's two readings, built when first needed
    # (timer_armed_before: the slow answers and the timeouts' bounds both read them)
    timer_progress: tuple[np.ndarray, np.ndarray] | None = None


def among(n: int, episodes: Iterable[int]) -> np.ndarray:
    """A mask over `n` episodes, true at those listed (the keys of `x.near`, `x.claimed`)."""
    out = np.zeros(n, bool)
    out[list(episodes)] = True
    return out


def event_ts(c: cn.Conversations, ev: np.ndarray) -> np.ndarray:
    """Timestamps of events; events -1 read as the int64 minimum's neighbourhood (absent)."""
    return np.where(ev >= 0, c.ts[np.maximum(ev, 0)], np.iinfo(np.int64).min // 4)


def read_reissue(e: np.ndarray) -> np.ndarray:
    """A READ request asked again, with no NAK to answer: the requester re-issued the READ
    from a response it is missing."""
    return (e["read_ev"] >= 0) & ((e["start_opcode"] & 0x1F) == READ_REQUEST_OP) & (e["nak_ev"] < 0)


def right_after_no_cause(e: np.ndarray, trigger: np.ndarray) -> np.ndarray:
    """Episodes right after a restart of no cause in their conversation (no NAK, sooner
    than any timer: `trigger` unknown), no request between. A NIC goes back only for a NAK,
    a timer or a run it resumes: such a restart shows copies arriving out of place (a path
    that reorders, or a NAK the capture point missed), and the run after it may be more of
    them, an earlier run's copies, late, rather than an answer of its own."""
    out = np.zeros(len(e), bool)
    ks = np.flatnonzero(e["conv"][1:] == e["conv"][:-1]) + 1
    prev = ks - 1
    out[ks] = (trigger[prev] == "unknown") & (e["prev_req_ev"][ks] == e["last_ev"][prev])
    return out


def original_open(x: Context, e: np.ndarray) -> np.ndarray:
    """Episodes holding a copy the state machine flagged OPEN: a lone first copy of a
    skipped PSN that took its NAK, and a later restart that would answer that NAK were the
    copy the original, late, but that a timer may have caused. Which copy was the original,
    and so which NAK each answers, the capture cannot tell."""
    c = x.conv
    ev = np.flatnonzero(((c.flags & cn.OPEN) > 0) & (c.episode >= 0))
    out = np.zeros(len(e), bool)
    out[c.episode[ev]] = True
    return out


def responses_of(c: cn.Conversations) -> tuple[np.ndarray, np.ndarray]:
    """The events of NAKs (and RNR NAKs), and of ACKs, atomic ACKs and READ responses."""
    naks = np.flatnonzero(np.isin(c.kind, (NAK, RNR_NAK)))
    return naks, np.flatnonzero(np.isin(c.kind, (ACK, ATOMIC_ACK, READ_RESPONSE)))


def selective_repeat_hosts(x: Context) -> frozenset[str]:
    """The hosts that show a selective repeat no go-back makes (own_nak_on_repeat_nic
    found them before the triggers were weighed), in the capture's NIC context."""
    if x.nic is not None:
        return x.nic.repeat_hosts
    hosts = x.seen.get("repeat_hosts", frozenset())
    return hosts if isinstance(hosts, frozenset) else frozenset()


def progress_before(
    c: cn.Conversations, conv: np.ndarray, ev: np.ndarray, adv: np.ndarray | None = None
) -> np.ndarray:
    """Per (conversation, event): the conversation's latest event before it that
    acknowledged something new (`adv`: those events, by default the state machine's),
    else its first event."""
    first = np.searchsorted(c.conv, conv)  # events are grouped by conversation
    adv = np.flatnonzero((c.flags & cn.ADVANCE) > 0) if adv is None else adv
    if len(adv) == 0:
        return first
    k = np.maximum(np.searchsorted(adv, ev) - 1, 0)
    found = (adv[k] < ev) & (c.conv[adv[k]] == conv)
    return np.where(found, adv[k], first)


def message_first(x: Context, ev: np.ndarray) -> np.ndarray:
    """Per event: the first PSN of the message its PSN belongs to, as the requests the
    capture saw in its conversation show (the nearest message start at or below it; the
    PSN itself when none is seen)."""
    c = x.conv
    req = np.flatnonzero(c.kind == REQUEST)
    pos = x.pp.position[c.row[req]]
    starts = req[~np.isin(pos, (POS_MIDDLE, POS_LAST))]
    span = np.int64(1) << 40  # unwrapped PSNs of one conversation stay well inside this
    key = np.unique(c.conv[starts] * span + c.ext[starts] + (span >> 1))
    if not len(key):  # no message start seen (a capture of middles and lasts only)
        return c.ext[ev].copy()
    want = c.conv[ev] * span + c.ext[ev] + (span >> 1)
    at = np.searchsorted(key, want, side="right") - 1
    found = (at >= 0) & (key[np.maximum(at, 0)] // span == c.conv[ev])
    return np.where(found, key[np.maximum(at, 0)] - c.conv[ev] * span - (span >> 1), c.ext[ev])


def op_class(opcode: np.ndarray) -> np.ndarray:
    """send | rdma: selective repeat covers RDMA READ and WRITE only (ConnectX-6 Dx and
    later); SENDs still go back N on the same NIC."""
    return np.where(np.isin(opcode & 0x1F, SEND_OPS), "send", "rdma").astype(object)


def above_nak(e: np.ndarray) -> np.ndarray:
    """Runs that begin above the PSN their NAK asked for: since the NAK the capture saw no
    request from that PSN up to the run's first, so the NAK's go-back-N lost its first
    resends before the capture point (the state machine's nak_below_unseen)."""
    return (e["nak_ev"] >= 0) & (e["start_ext"] > e["nak_ext"])


def longest_loss(c: cn.Conversations) -> np.ndarray:
    """Per conversation, the most PSNs lost in a row before the capture point that its new
    data shows (its longest PSN gap)."""
    out = np.zeros(int(c.conv.max(initial=-1)) + 1, np.int64)
    np.maximum.at(out, c.conv, c.gap)
    return out


def below_nak_restarts(e: np.ndarray) -> np.ndarray:
    """Restarts at a message's first PSN below the NAKed PSN: go-back-N never resends what
    the NAK it answers acknowledged."""
    return (e["nak_ev"] >= 0) & (e["start_ext"] < e["nak_ext"])


def acked_by_responses(c: cn.Conversations, e: np.ndarray) -> np.ndarray:
    """Per episode, the highest PSN an ACK, atomic ACK or READ response of its conversation
    acknowledged before its first resend (the int64 minimum's neighbourhood: none)."""
    none = np.iinfo(np.int64).min // 4
    ev = np.flatnonzero(
        np.isin(c.kind, (ACK, ATOMIC_ACK, READ_RESPONSE)) & ((c.flags & cn.UNSENT) == 0)
    )
    if len(ev) == 0:
        return np.full(len(e), none, np.int64)
    hi = pd.Series(c.ext[ev]).groupby(c.conv[ev]).cummax().to_numpy(np.int64)
    k = np.searchsorted(ev, e["first_ev"]) - 1  # events are grouped by conversation
    found = (k >= 0) & (c.conv[ev[np.maximum(k, 0)]] == e["conv"])
    return np.where(found, hi[np.maximum(k, 0)], none)


def requests_by_psn(x: Context) -> RequestsByPsn:
    """The table's requests sorted by conversation and PSN, built once (two rules look PSNs
    up in them)."""
    if x.requests is None:
        x.requests = RequestsByPsn.of(x)
    return x.requests


@dataclass(frozen=True)
class RequestsByPsn:
    """A capture's requests sorted by conversation and PSN, with their wire lengths, so the
    PSNs between two resends are found by binary search, not a pass per episode."""

    ev: np.ndarray  # the request events, in capture order within one conversation and PSN
    conv: np.ndarray
    ext: np.ndarray
    wire: np.ndarray
    convs: np.ndarray  # each conversation with a request, once
    shortest: np.ndarray  # per conversation of `convs`: its shortest request

    @classmethod
    def of(cls, x: Context) -> RequestsByPsn:
        c = x.conv
        req = np.flatnonzero(c.kind == REQUEST)
        req = req[np.lexsort((c.ext[req], c.conv[req]))]  # stable: copies stay in order
        conv, wire = c.conv[req], x.pp.wire_len[c.row[req]].astype(np.int64)
        starts = np.flatnonzero(np.r_[True, conv[1:] != conv[:-1]]) if len(req) else req
        shortest = np.minimum.reduceat(wire, starts) if len(req) else wire
        return cls(req, conv, c.ext[req], wire, conv[starts], shortest)

    def first_copy(self, conv: int, ext: int) -> int:
        """The event of the first request of PSN `ext` in conversation `conv`, -1 none."""
        lo, hi = np.searchsorted(self.conv, [conv, conv + 1])
        at = lo + int(np.searchsorted(self.ext[lo:hi], ext))
        return int(self.ev[at]) if at < hi and self.ext[at] == ext else -1

    def psns_between(self, conv: int, lo_ext: int, hi_ext: int) -> int:
        """How many PSNs from `lo_ext` up to, not including, `hi_ext` the conversation's
        requests took (each once)."""
        lo, hi = np.searchsorted(self.conv, [conv, conv + 1])
        ext = self.ext[lo:hi]
        i0, i1 = np.searchsorted(ext, [lo_ext, hi_ext])
        return len(np.unique(ext[i0:i1]))

    def wire_between(self, conv: int, lo_ext: int, hi_ext: int) -> int:
        """The wire bytes, at least, of the PSNs strictly between two of a conversation's:
        a resend is as long as its original, and a PSN the capture never showed is at least
        as long as the conversation's shortest request."""
        lo, hi = np.searchsorted(self.conv, [conv, conv + 1])
        if lo == hi:
            return 0
        ext, wire = self.ext[lo:hi], self.wire[lo:hi]
        i0, i1 = np.searchsorted(ext, [lo_ext + 1, hi_ext])
        seen = 0
        if i1 > i0:
            first = np.flatnonzero(np.r_[True, ext[i0 + 1 : i1] != ext[i0 : i1 - 1]])
            per_psn = np.minimum.reduceat(wire[i0:i1], first)
            seen, bytes_seen = len(per_psn), int(per_psn.sum())
        else:
            bytes_seen = 0
        shortest = int(self.shortest[np.searchsorted(self.convs, conv)])
        return bytes_seen + (hi_ext - lo_ext - 1 - seen) * shortest


def sending_hosts(x: Context, e: np.ndarray) -> np.ndarray:
    """Per episode, its sending host's address: the key of a NIC's settings in every
    partition of the capture (the host codes are one table's own)."""
    return np.asarray(x.pp.ips[x.model.src[e["conv"]]], dtype=object).astype(str)
