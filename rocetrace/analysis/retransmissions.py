"""Retransmission episodes: runs of resent PSNs, what triggered them and how the NIC resent.

An episode starts at a resent packet that follows new data, restarts from a PSN at or before
the previous resend, or follows a new NAK. Its trigger is the new NAK / RNR NAK of its start
PSN, else the latest unused NAK about the flow; otherwise a timeout, a READ re-issue when a
re-sent READ REQUEST re-asks for responses already partly seen, or unknown for the rest of
a go-back-N resumed after a selective repeat (docs/analysis-tables.md).
"""

from __future__ import annotations

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

EPISODE_COLUMNS = [
    "flow_id", "src_ip", "dst_ip", "dest_qp", "ts", "ts_ns", "trigger", "nak_psn", "start_psn",
    "packets", "mode", "mode_certain", "mode_basis", "delay_s", "first_frame", "last_psn",
    "nak_frame",
]  # fmt: skip
ACK_TIMEOUT_UNIT_S = 4.096e-6
SR_COVERAGE = 0.5
TIMER_SILENCE_NS = 65_536  # a resend this long after the previous one: the ACK timer fired
ALTERNATIVES = ("selective-repeat", "go-back-0")  # what an uncertain episode may also be


def episode_rows(s: Stream, pp: Prepared, naks: pd.DataFrame) -> np.ndarray:
    """Episode number per stream row (-1 for rows that are not resends). A new NAK shows
    as a restart (the PSN goes back), not where the NAK is seen: the sender reacts later;
    or as the resend of exactly the PSN a NAK asked for (_answers_new_nak); or after a
    silence only the ACK timer explains. Only resent rows are looked at (they are few)."""
    ep = np.full(len(s), -1, np.int64)
    rows = np.flatnonzero(s.retransmitted)
    if not len(rows):
        return ep
    prev = rows - 1  # a flow's first row is never a resend: prev is in the same flow
    prev_resent = s.retransmitted[prev] & ~s.first[rows]
    restart = s.ext[rows] <= s.ext[prev]
    stalled = (pp.ts[s.idx[rows]] - pp.ts[s.idx[prev]]) > TIMER_SILENCE_NS  # the timer fired
    start = np.zeros(len(s), bool)
    start[rows] = ~prev_resent | restart | stalled
    start[np.flatnonzero(s.retransmitted & ~start)] = _answers_new_nak(s, pp, naks, start)
    ep[rows] = np.cumsum(start[rows]) - 1
    return ep


def _answers_new_nak(s: Stream, pp: Prepared, naks: pd.DataFrame, start: np.ndarray) -> np.ndarray:
    """Per resend row not yet starting an episode, whether a NAK about its flow with its PSN
    came after the flow's previous row (back-to-back one-packet selective repeats) or after
    the NAK of its run's start PSN, new since the previous episode began (both NAKs seen
    before the first resend: each PSN NAKed starts its own episode, when it comes at least
    the round trip its run's first resend took after the NAK)."""
    rows = np.flatnonzero(s.retransmitted & ~start)
    if not len(rows):
        return np.zeros(0, bool)
    starts = np.maximum.accumulate(np.where(start, np.arange(len(s)), -1))
    run = starts[rows]
    before = starts[np.maximum(run - 1, 0)]  # the flow's previous episode's first row
    known = (run > 0) & (before >= 0) & (s.flow[np.maximum(before, 0)] == s.flow[run])
    own_floor = np.where(known, s.idx[np.maximum(before, 0)], -1)
    hit = _latest_nak(s, pp, naks, rows)
    own = _latest_nak(s, pp, naks, run)
    own = np.where(own > own_floor, own, len(pp))  # its start PSN's NAK, since that episode
    ts = np.append(pp.ts, 0)
    # The sender's answer takes at least the round trip its first answer took here.
    answer = ts[s.idx[rows]] - ts[hit] >= ts[s.idx[run]] - ts[own]
    return (hit > s.idx[rows - 1]) | ((hit > own) & answer)


def _latest_nak(s: Stream, pp: Prepared, naks: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    """Per stream row, the frame index of the latest NAK about its flow with its PSN captured
    before it (-1 when none)."""
    known = naks[naks["flow_id"].notna()] if len(rows) else naks.iloc[:0]
    if known.empty:
        return np.full(len(rows), -1, np.int64)
    nak_idx = np.searchsorted(pp.frame, known["frame"].to_numpy(np.int64))
    nak_flow = known["flow_id"].to_numpy(np.int64)
    psn = known["psn"].to_numpy(np.int64)
    code = dense_ids(
        np.concatenate([nak_flow, s.flow[rows]]), np.concatenate([psn, pp.psn[s.idx[rows]]])
    )
    width = len(pp) + 1
    packed = np.sort(code[: len(known)] * width + nak_idx)
    row_code = code[len(known) :]
    at = np.searchsorted(packed, row_code * width + s.idx[rows]) - 1
    hit = packed[np.maximum(at, 0)]
    return np.where((at >= 0) & (hit // width == row_code), hit % width, -1)


def _resumes_at_ack(
    s: Stream, pp: Prepared, rows: np.ndarray, progress: pd.DataFrame
) -> np.ndarray:
    """Per stream row, whether it resends the first PSN not yet acknowledged: a go-back-N
    that an ACK overtook skips to it (not a selective-repeat skip)."""
    if progress.empty or not len(rows):
        return np.zeros(len(rows), bool)
    idx = s.idx[rows]
    if pp.in_time_order:
        acked = _acked_before(s.flow[rows], idx, progress, len(pp))
    else:
        at = pd.DataFrame({"flow_id": s.flow[rows], "ts_ns": pp.ts[idx]})
        acked = _last_acked_asof(at, progress)
    return (acked >= 0) & (psn_delta(pp.psn[idx], (acked + 1) % PSN_MOD) == 0)


def _episodes(s: Stream, pp: Prepared, ep: np.ndarray, progress: pd.DataFrame) -> pd.DataFrame:
    """One row per episode: where it starts, how many packets, and whether it is contiguous.
    An episode's rows are consecutive in the stream, so reduceat over its first rows works."""
    rows = np.flatnonzero(ep >= 0)
    if len(rows) == 0:
        return pd.DataFrame()
    cut = np.flatnonzero(np.diff(ep[rows], prepend=-1) != 0)
    ends = np.append(cut[1:], len(rows))
    first, last = rows[cut], rows[ends - 1]
    prev = rows - 1  # a flow's first row is never a resend
    jump = (s.ext[rows] != s.end[prev] + 1) & (ep[rows] == ep[prev])  # skips inside the episode
    jump[jump] = ~_resumes_at_ack(s, pp, rows[jump], progress)
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


def _assign_triggers(eps: pd.DataFrame, naks: pd.DataFrame) -> pd.DataFrame:
    """The NAK / RNR NAK of the episode's start PSN when it is new (_start_naks), else the
    latest NAK about the flow since the flow's previous episode began."""
    eps = eps.sort_values("ts_ns", kind="stable")
    known = naks[naks["flow_id"].notna()].copy()
    known["flow_id"] = known["flow_id"].astype(np.int64)
    known = known.rename(columns={"ts_ns": "nak_ts", "frame": "nak_frame", "psn": "nak_raw"})
    known = known.sort_values("nak_ts")[["flow_id", "nak_ts", "nak_frame", "nak_raw", "kind"]]
    known["nak_raw"] = known["nak_raw"].astype(np.int64)
    known["nak_ts_exact"] = known["nak_ts"].astype("Int64")  # float64 ns would lose 256 ns
    own, own_new = _start_naks(eps, known)
    eps = pd.merge_asof(
        eps, known, left_on="ts_ns", right_on="nak_ts", by="flow_id", direction="backward"
    )
    for col in ("nak_ts", "nak_frame", "nak_raw", "kind", "nak_ts_exact"):
        eps[col] = eps[col].mask(own_new, own[col])
    # Exact ns: as float64 two events 88 ns apart can compare equal.
    prev_start = eps["ts_ns"].astype("Int64").groupby(eps["flow_id"]).shift(1)
    after_prev = ~(eps["nak_ts_exact"] <= prev_start)
    fresh = (eps["nak_ts_exact"].notna() & after_prev).fillna(True).to_numpy(bool) | own_new
    eps["trigger"] = np.where(
        fresh, np.where(eps["kind"].astype(object) == "rnr", "rnr", "nak"), "timeout"
    )
    for col in ("nak_ts", "nak_frame", "nak_raw", "nak_ts_exact"):
        eps[col] = eps[col].where(fresh)
    return eps.drop(columns=["kind"])


def _start_naks(eps: pd.DataFrame, known: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """Per episode (`eps` in time order), the latest NAK with its start PSN, and whether that
    NAK is new: after the flow's previous episode began or after that episode's own NAK
    (two NAKs seen before the first resend: each answers its own)."""
    left = eps[["flow_id", "ts_ns"]].assign(nak_raw=eps["start_psn"].to_numpy(np.int64))
    own = pd.merge_asof(
        left, known, left_on="ts_ns", right_on="nak_ts", by=["flow_id", "nak_raw"]
    ).set_index(eps.index)
    prev_start = own["ts_ns"].astype("Int64").groupby(own["flow_id"]).shift(1)  # exact ns
    prev_own = own.groupby("flow_id")["nak_ts_exact"].shift(1)
    ts = own["nak_ts_exact"]
    new = ts.notna() & ((ts > prev_start) | (ts > prev_own) | prev_start.isna())
    return own.reset_index(drop=True), new.fillna(False).to_numpy(bool)


def _last_acked(pp: Prepared, eps: pd.DataFrame, progress: pd.DataFrame) -> np.ndarray:
    """Per episode, the highest PSN acknowledged about its flow before it (-1 when none)."""
    if progress.empty:
        return np.full(len(eps), -1, np.int64)
    if not pp.in_time_order:
        return _last_acked_asof(eps, progress)
    earlier = np.searchsorted(pp.ts, eps["ts_ns"].to_numpy(np.int64), "left")
    return _acked_before(eps["flow_id"].to_numpy(np.int64), earlier, progress, len(pp))


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
        eps[["flow_id", "ts_ns"]].reset_index(),
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


def _modes(eps: pd.DataFrame, s: Stream, ep: np.ndarray, acked: np.ndarray) -> pd.DataFrame:
    """go-back-0: resent PSNs below the expected restart point (NAK PSN or first unacked);
    selective-repeat: at least half the PSNs of its range skipped, or stopped short of what
    was sent and went on with new data; go-back-n otherwise. Not certain when the resends
    (one or two packets reaching the last PSN sent) are what either policy would send."""
    expected = np.where(eps["nak_raw"].notna(), eps["nak_raw"].fillna(0), acked + 1)
    known = eps["nak_raw"].notna().to_numpy() | (acked >= 0)
    below = known & (psn_delta(eps["start_psn"].to_numpy(), expected.astype(np.int64)) < 0)
    nxt = np.minimum(eps["last_row"].to_numpy() + 1, max(len(s) - 1, 0))
    next_is_new = (nxt > eps["last_row"].to_numpy()) & (s.flow[nxt] == eps["flow_id"].to_numpy())
    next_is_new &= ep[nxt] < 0
    short = (eps["last_ext"] < eps["high"]).to_numpy() & next_is_new
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
    pp: Prepared, model: FlowModel, s: Stream, naks: pd.DataFrame, progress: pd.DataFrame
) -> tuple[pd.DataFrame, np.ndarray]:
    """Episodes of resent requests with trigger, mode and delay, and the frames of READ
    re-issues: episodes that open with a re-sent READ REQUEST and no NAK are not resends of
    this flow but requests to resend READ responses (reads.py)."""
    ep = episode_rows(s, pp, naks)
    eps = _episodes(s, pp, ep, progress)
    if eps.empty:
        return _empty(), np.zeros(0, np.int64)
    eps = _assign_triggers(eps, naks)
    reissue = pp.read_request[eps["idx"].to_numpy()] & (eps["trigger"] == "timeout").to_numpy()
    rows = np.flatnonzero(np.isin(ep, eps["ep"].to_numpy()[reissue]))
    reissues = s.idx[rows][pp.read_request[s.idx[rows]]]
    eps = eps[~reissue].reset_index(drop=True)
    if eps.empty:
        return _empty(), reissues
    eps["mode"] = _modes(eps, s, ep, np.full(len(eps), -1, np.int64))["mode"]
    acked = _last_acked(pp, eps, _requester_view(pp, model, s, eps, progress))
    eps[["mode", "mode_certain", "alternative"]] = _modes(eps, s, ep, acked)
    last_ts = pp.ts[s.idx[eps["last_row"].to_numpy()]]
    eps.loc[_resumed(eps, last_ts, acked), "trigger"] = "unknown"
    prev_ts = _prev_ts_in_flow(model, pp, eps["idx"].to_numpy())
    silence = eps["ts_ns"] - prev_ts
    after_nak = (eps["ts_ns"] - eps["nak_ts_exact"]).fillna(0).to_numpy(np.int64)
    untriggered = eps["trigger"].isin(("timeout", "unknown")).to_numpy()
    delay_ns = np.where(untriggered, silence, after_nak)
    eps["delay_s"] = delay_ns / 1e9
    eps["nak_psn"] = eps["nak_raw"].where(eps["trigger"] == "nak")
    return eps, reissues


def _resumed(eps: pd.DataFrame, last_ts: np.ndarray, acked: np.ndarray) -> np.ndarray:
    """Runs with no NAK of their own that pick up, right after a NAK's resends, above where
    those began: the rest of a go-back-N the NAK interrupted. A timer restart would come
    after a silence and resend from the first unacknowledged PSN; the capture shows no
    trigger (unknown). `last_ts`: per episode, when its last resend was seen."""
    order = np.argsort(eps["first_row"].to_numpy(), kind="stable")  # stream order
    flow = eps["flow_id"].to_numpy()[order]
    trigger = eps["trigger"].to_numpy(object)[order]
    first, last = eps["first_row"].to_numpy()[order], eps["last_row"].to_numpy()[order]
    ext = eps["start_ext"].to_numpy()[order]
    prev = np.maximum(np.arange(len(eps)) - 1, 0)
    after_nak = (np.arange(len(eps)) > 0) & (flow == flow[prev]) & (first == last[prev] + 1)
    after_nak &= np.isin(trigger[prev], ("nak", "rnr"))
    soon = eps["ts_ns"].to_numpy()[order] - last_ts[order][prev] <= TIMER_SILENCE_NS
    una = (acked[order] >= 0) & (
        psn_delta(eps["start_psn"].to_numpy()[order], acked[order] + 1) == 0
    )
    out = np.zeros(len(eps), bool)
    out[order] = (trigger == "timeout") & after_nak & (ext > ext[prev]) & soon & ~una
    return out


def _empty() -> pd.DataFrame:
    return empty_frame(dict.fromkeys(EPISODE_COLUMNS, object))


def ack_timeout_estimate(delay_s: float) -> tuple[int, float]:
    """Nearest IBTA ACK timeout 4.096 us * 2^k to an observed silence: (k, seconds)."""
    k = int(np.clip(np.round(np.log2(max(delay_s, 1e-12) / ACK_TIMEOUT_UNIT_S)), 0, 31))
    return k, ACK_TIMEOUT_UNIT_S * 2**k
