"""Findings: what went wrong, in plain language, with the evidence to open in Wireshark.

Each rule reads finished analysis tables and yields rows; codes are stable names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import GSI_QP
from rocetrace.analysis.pfc import STORM_S
from rocetrace.capture.damage import describe
from rocetrace.schema import MALFORMED_ROCE
from rocetrace.schema.conform import empty_frame

SEVERITIES = ("info", "warning", "critical")
FINDING_COLUMNS = ["severity", "code", "message", "flow", "first_ts", "frames", "flow_id"]
LIVELOCK_RESTARTS = 3  # go-back-0 restarts from one PSN before we call it a livelock


@dataclass
class Tables:
    """What the rules read (DataFrames, typed Any: rules index rows loosely by label)."""

    flows: Any
    retransmissions: Any
    naks: Any
    cnps: Any
    pfc_runs: Any
    low_class_cnps: Any
    sports: Any
    bad_icrc_frames: list[int]
    capture: dict[str, Any]
    capture_gaps: Any = field(default_factory=pd.DataFrame)
    anomalies: Any = field(default_factory=pd.DataFrame)


def flow_key(row: Any) -> str:
    return f"{row.src_ip}>{row.dst_ip}/{int(row.dest_qp)}"


def _row(severity: str, code: str, message: str, flow: Any, ts_ns: float, frames: list) -> dict:
    return {
        "severity": severity,
        "code": code,
        "message": message,
        "flow": flow_key(flow) if flow is not None else None,
        "first_ts": float(ts_ns) / 1e9 if ts_ns == ts_ns else None,
        "frames": [int(f) for f in frames][:20],
        "flow_id": int(flow.flow_id) if flow is not None else None,
    }


def _by_flow_id(flows: pd.DataFrame) -> Any:
    """The flows table indexed by flow id; built only by rules that found something."""
    return flows.set_index("flow_id", drop=False)


def _flow_groups(df: pd.DataFrame) -> Iterator[tuple[int, np.ndarray]]:
    """(flow_id, row positions) per flow, by flow id; rows keep their order in the table.
    Numpy slices instead of a pandas groupby: one step per flow, none per row."""
    fid = df["flow_id"].to_numpy(np.int64)
    order = np.argsort(fid, kind="stable")
    for rows in np.split(order, np.flatnonzero(np.diff(fid[order])) + 1):
        if len(rows):
            yield int(fid[rows[0]]), rows


def _episode_rules(t: Tables) -> Iterator[dict]:
    eps = t.retransmissions
    if eps.empty:
        return
    flows = _by_flow_id(t.flows)
    timeouts = eps[(eps["trigger"] == "timeout").to_numpy(bool)]
    delay_s = timeouts["delay_s"].to_numpy(float)
    start, ts = timeouts["start_psn"].to_numpy(), timeouts["ts_ns"].to_numpy()
    frames = timeouts["first_frame"].to_numpy()
    for fid, rows in _flow_groups(timeouts):
        f = flows.loc[fid]
        delay = np.median(delay_s[rows])
        yield _row(
            "warning",
            "timeout_retransmission",
            f"{len(rows)} retransmission(s) after a timeout with no NAK (first from PSN "
            f"{int(start[rows[0]])}); silence before the resend {delay * 1e6:.1f} us, "
            f"ACK timeout ~{f['ack_timeout_s'] * 1e6:.1f} us "
            f"(4.096 us x 2^{int(f['ack_timeout_exp'])})",
            f,
            ts[rows].min(),
            frames[rows].tolist(),
        )
    gb0 = t.retransmissions[t.retransmissions["mode"] == "go-back-0"]
    for fid, g in gb0.groupby("flow_id"):
        restarts = g["start_psn"].value_counts()
        if restarts.max() >= LIVELOCK_RESTARTS:
            psn = int(restarts.idxmax())
            yield _row(
                "critical",
                "go_back_0_livelock",
                f"{int(restarts.max())} restarts from message start PSN {psn} without progress "
                "(go-back-0 with periodic loss never completes the message)",
                flows.loc[fid],
                g["ts_ns"].min(),
                g["first_frame"].tolist(),
            )


def _nak_rules(t: Tables) -> Iterator[dict]:
    if t.naks.empty:
        return
    flows = _by_flow_id(t.flows)
    known = t.naks[t.naks["flow_id"].notna()]
    for (fid, kind), g in known.groupby(["flow_id", "kind"], observed=True):
        f = flows.loc[int(fid)]
        psns = ", ".join(str(int(p)) for p in g["psn"].head(5))
        if kind == "rnr":
            timer = g["rnr_timer_us"].iloc[0]
            msg = (
                f"{len(g)} RNR NAK(s) (no receive WQE posted) at PSN {psns}; RNR timer {timer:g} us"
            )
            yield _row("warning", "rnr_nak", msg, f, g["ts_ns"].min(), g["frame"].tolist())
        elif kind == "psn_sequence_error":
            msg = f"{len(g)} NAK(s) PSN sequence error (packet loss) at PSN {psns}"
            yield _row(
                "warning", "psn_sequence_error", msg, f, g["ts_ns"].min(), g["frame"].tolist()
            )
        else:
            msg = f"{len(g)} NAK(s) {kind.replace('_', ' ')} at PSN {psns}: the operation failed"
            yield _row("critical", "nak_error", msg, f, g["ts_ns"].min(), g["frame"].tolist())


def _not_ecn_capable(flows: pd.DataFrame) -> Any:
    """Data flows (requests, not the CM's QP1) that sent ECN 00, as itertuples; numpy masks,
    and no itertuples (its namedtuple class costs ~0.5 ms) when there are none."""
    data = (flows["requests"].to_numpy() > 0) & (flows["dest_qp"].to_numpy() != GSI_QP)
    rows = np.flatnonzero(data & ~flows["ecn_capable"].to_numpy(bool))
    return flows.iloc[rows].itertuples() if len(rows) else []


def _ecn_rules(t: Tables) -> Iterator[dict]:
    yield from _unmarked_cnps(t)
    for f in _not_ecn_capable(t.flows):
        msg = (
            "RoCE data sent with ECN 00 (not ECN-capable): switches cannot mark it, "
            f"DCQCN is blind (DSCP {f.dscp})"
        )
        yield _row("warning", "ecn_not_capable", msg, f, f.first_ts_ns, [])
    yield from _low_class_cnps(t)


def _unmarked_cnps(t: Tables) -> Iterator[dict]:
    if t.cnps.empty:
        return
    unmarked = t.cnps[t.cnps["flow_id"].notna() & ~t.cnps["ce_before"]]
    if unmarked.empty:
        return
    flows = _by_flow_id(t.flows)
    for fid, g in unmarked.groupby("flow_id"):
        msg = (
            f"{len(g)} CNP(s) with no CE-marked packet of the flow since the previous CNP "
            "(out-of-sequence or slow-restart CNPs, or marks not visible at this capture point)"
        )
        yield _row(
            "info",
            "cnp_without_ce",
            msg,
            flows.loc[int(fid)],
            g["ts_ns"].min(),
            g["frame"].tolist(),
        )


def _low_class_cnps(t: Tables) -> Iterator[dict]:
    low = t.low_class_cnps
    if len(low) == 0:
        return
    flows = _by_flow_id(t.flows)
    for fid, g in low.groupby("flow_id"):
        f = flows.loc[int(fid)]
        msg = (
            f"{len(g)} CNP(s) sent in DSCP {int(g['dscp'].iloc[0])} / "
            f"PCP {int(g['vlan_pcp'].iloc[0])}, "
            f"not above the data they throttle (DSCP {f['dscp']} / PCP {f['vlan_pcp']})"
        )
        yield _row("warning", "cnp_priority", msg, f, g["ts_ns"].min(), g["frame"].tolist())


def _fabric_rules(t: Tables) -> Iterator[dict]:
    yield from _pfc_storms(t.pfc_runs)
    yield from _sport_collisions(t.sports)
    if t.bad_icrc_frames:
        n = len(t.bad_icrc_frames)
        yield _row(
            "warning",
            "bad_icrc",
            f"{n} frame(s) with a bad ICRC (corrupted or rewritten in flight)",
            None,
            float("nan"),
            t.bad_icrc_frames,
        )
    yield from _capture_gaps(t)
    yield from _corrupt_records(t.capture)
    yield from _malformed_frames(t.capture)
    if t.capture.get("incomplete_tail"):
        yield _row(
            "info",
            "incomplete_tail",
            "the capture file ends inside a record (tcpdump killed?)",
            None,
            float("nan"),
            [],
        )


def _corrupt_records(capture: dict[str, Any]) -> Iterator[dict]:
    """Records the reader could not read mid-file and skipped (rocetrace.capture.damage):
    frames lost to the file, not to the network, so no PSN finding can explain them."""
    if not capture.get("corrupt_records"):
        return
    msg = (
        f"{capture['corrupt_records']} corrupt record(s) in the capture file, "
        f"{capture['skipped_bytes']:,} bytes skipped, at {describe(capture['corrupt_regions'])}: "
        "the frames there are lost (a damaged file); decoding resumed after each"
    )
    yield _row("warning", "corrupt_records", msg, None, float("nan"), [])


# MALFORMED_ROCE less truncated_bth, which a short snap length causes too
MALFORMED_REASONS = tuple(a for a in MALFORMED_ROCE if a != "truncated_bth")


def _malformed_frames(capture: dict[str, Any]) -> Iterator[dict]:
    """Frames read as RoCE but left out of every flow (prepared.malformed_roce), per reason."""
    counts = {k: v for k, v in (capture.get("anomalies") or {}).items() if k in MALFORMED_REASONS}
    if not any(counts.values()):
        return
    reasons = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()) if v)
    msg = (
        f"{sum(counts.values())} malformed RoCE frame(s) ({reasons}) left out of the flows and "
        "PSN analysis; PSN gaps they fill are not reported as capture drops"
    )
    yield _row("warning", "malformed_frames", msg, None, float("nan"), [])


def _where(df: pd.DataFrame, column: str, holds: Callable[[np.ndarray], np.ndarray]) -> Any:
    """The rows of `df` where `holds(column values)`: itertuples only when some do (its
    namedtuple class costs ~0.5 ms)."""
    if df.empty:
        return []
    rows = np.flatnonzero(holds(df[column].to_numpy()))
    return df.iloc[rows].itertuples() if len(rows) else []


def _pfc_storms(runs: pd.DataFrame) -> Iterator[dict]:
    for r in _where(runs, "duration_s", lambda d: d >= STORM_S):
        msg = (
            f"priority {r.priority} paused for {r.duration_s * 1e3:.1f} ms without a break by "
            f"{r.src_mac} ({r.frames} PFC frames): PFC storm"
        )
        yield _row("critical", "pfc_storm", msg, None, r.start_ns, [r.first_frame])


def _sport_collisions(sports: pd.DataFrame) -> Iterator[dict]:
    for s in _where(sports, "colliding_qps", lambda c: c > 0):
        msg = (
            f"{s.colliding_qps} of {s.qps} QPs from {s.src_ip} to {s.dst_ip} share UDP source "
            f"ports (busiest {s.busiest_sport}): no ECMP entropy, they hash onto one path"
        )
        yield _row("warning", "udp_sport_collision", msg, None, float("nan"), [])


def _capture_gaps(t: Tables) -> Iterator[dict]:
    gaps = t.capture_gaps
    if gaps.empty:
        return
    flows = _by_flow_id(t.flows)
    for fid, rows in _flow_groups(gaps):
        g = gaps.iloc[rows]
        msg = (
            f"{int(g['psns'].sum())} PSN(s) missing from the capture but never resent nor NAKed: "
            "more likely dropped by the capture (sniffer) than lost on the wire"
        )
        yield _row(
            "info", "capture_gap", msg, flows.loc[fid], g["ts_ns"].min(), g["frame"].tolist()
        )


# Named anomalies (anomalies.py): severity, and how a finding sums up several of one flow.
_ANOMALY_SEVERITY = {
    "psn_reuse": "critical",
    "ack_unsent_psn": "warning",
    "stall": "critical",
    "qp_reuse": "info",
    "reordering": "info",
}


def _anomaly_rules(t: Tables) -> Iterator[dict]:
    """One finding per (anomaly, flow): the first one's message, how many, their frames."""
    df = t.anomalies
    if df is None or len(df) == 0:
        return
    flows = _by_flow_id(t.flows)
    for (code, fid), g in df.groupby(["code", "flow_id"], sort=False):
        message = str(g["message"].iloc[0])
        if len(g) > 1:
            message = f"{len(g)} times; first: {message}"
        frames = [f for fs in g["frames"] for f in fs]
        flow = flows.loc[int(fid)] if int(fid) in flows.index else None
        yield _row(_ANOMALY_SEVERITY.get(str(code), "warning"), str(code), message, flow,
                   g["ts_ns"].min(), frames)  # fmt: skip


def build_findings(t: Tables) -> pd.DataFrame:
    """All findings, most severe first, then by time."""
    rows = [
        *_episode_rules(t), *_nak_rules(t), *_ecn_rules(t), *_fabric_rules(t),
        *_anomaly_rules(t),
    ]  # fmt: skip
    if not rows:  # a clean capture: nothing to rank (the sort costs ~2 ms of pandas)
        return empty_frame(dict.fromkeys(FINDING_COLUMNS, object))
    df = pd.DataFrame(rows, columns=FINDING_COLUMNS)
    rank = df["severity"].map({s: -i for i, s in enumerate(SEVERITIES)})
    df = df.assign(_rank=rank).sort_values(["_rank", "first_ts"], kind="stable", na_position="last")
    return df.drop(columns="_rank").reset_index(drop=True)
