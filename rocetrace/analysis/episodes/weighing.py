"""The episode table: every rule weighed, in order, into one row per episode with its
evidence frames, NAK frames and late first copies.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis.episodes.answered_naks import nak_frames
from rocetrace.analysis.episodes.basics import (
    ACK_TIMEOUT_UNIT_S,
    CERTAINTIES,
    MODES,
    TRIGGERS,
    UNCERTAIN,
    Context,
    event_ts,
    read_reissue,
)
from rocetrace.analysis.episodes.late_copies import late_frames
from rocetrace.analysis.episodes.modes import settled_modes
from rocetrace.analysis.episodes.nak_claims import (
    cap_reserved,
    claim_taken_naks,
    own_nak_on_repeat_nic,
)
from rocetrace.analysis.episodes.triggers import weigh_triggers
from rocetrace.analysis.nic_context import NicContext
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
            "nak_frames": nak_frames(x, e, by_nak),
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
            "late_frames": late_frames(x, e, trigger_certainty == UNCERTAIN),
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
