"""Finding rules for loss and recovery: NAKs, retransmission episodes by trigger, go-back-0
livelocks, PSNs the capture itself missed. One observation per flow; findings.py
aggregates them per code."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rocetrace.analysis.advice import plural
from rocetrace.analysis.finish import loss_location

if TYPE_CHECKING:
    from rocetrace.analysis.findings import Observation, Tables

LIVELOCK_RESTARTS = 3  # go-back-0 restarts from one PSN before we call it a livelock
NAK_CODES = {"psn_sequence_error": "psn_sequence_error", "rnr": "rnr_nak"}
EPISODE_CODES = {"timeout": "timeout_retransmission", "read_reissue": "read_reissue"}
EPISODE_CODES["unknown"] = "retransmission_unknown"


def _obs(*args: Any, **kwargs: Any) -> Observation:
    from rocetrace.analysis.findings import Observation

    return Observation(*args, **kwargs)


def _flow_groups(df: pd.DataFrame) -> Iterator[tuple[int, pd.DataFrame]]:
    """(flow_id, rows) per flow with a known flow id, rows in table order."""
    known = df[df["flow_id"].notna()]
    if known.empty:
        return
    fid = known["flow_id"].to_numpy(np.int64)
    for flow in np.unique(fid):
        yield int(flow), known[fid == flow]


def _flow_facts(t: Tables, fid: int) -> dict[str, Any]:
    """The flow's class and timers, for the advice (vlan_pcp -1: untagged)."""
    f = t.flows.iloc[fid] if 0 <= fid < len(t.flows) else None
    if f is None:
        return {}
    pcp = int(f["vlan_pcp"]) if f["vlan_pcp"] >= 0 else None
    return {"pcp": pcp, "rtt_s": f["rtt_median_s"], "ack_timeout_s": f["ack_timeout_s"]}


def _location(t: Tables, fid: int, trigger: str) -> str | None:
    """Where the flow's episodes of this trigger lost their packets (both: mixed)."""
    eps = t.retransmissions
    if eps.empty:
        return None
    mine = eps[(eps["flow_id"].to_numpy(np.int64) == fid) & (eps["trigger"] == trigger).to_numpy()]
    where = set(loss_location(mine).tolist()) - {None}
    return None if not where else ("both" if len(where) > 1 else where.pop())


def _psns(values: Any) -> str:
    psns = [str(int(p)) for p in dict.fromkeys(values)]
    return ", ".join(psns[:5]) + (f" and {len(psns) - 5} more" if len(psns) > 5 else "")


def _naks(t: Tables) -> Iterator[Observation]:
    for fid, g in _flow_groups(t.naks):
        for kind, k in g.groupby("kind", observed=True, sort=False):
            code = NAK_CODES.get(str(kind), "nak_error")
            what = "" if code != "nak_error" else f"{str(kind).replace('_', ' ')} "
            detail = f"{what}at PSN {_psns(k['psn'])}"
            if code == "rnr_nak":
                detail += f"; RNR timer {float(k['rnr_timer_us'].iloc[0]):g} us"
            facts = _flow_facts(t, fid) | {"location": _location(t, fid, "nak")}
            frames = k["frame"].tolist()
            yield _obs(code, len(k), detail, k["ts_ns"].min(), frames, fid, facts)


def _episode_detail(code: str, g: pd.DataFrame, flow: Any) -> str:
    first = f"first from PSN {int(g['start_psn'].iloc[0])}"
    if code == "timeout_retransmission":
        silence = float(np.median(g["delay_s"].to_numpy(float))) * 1e6
        exp: Any = flow["ack_timeout_exp"] if flow is not None else None
        timer = f" (4.096 us x 2^{int(exp)})" if pd.notna(exp) else ""
        timeout = float(flow["ack_timeout_s"]) * 1e6 if flow is not None else float("nan")
        return (
            f"{first}; silence before the resend {silence:,.1f} us, ACK timeout "
            f"~{timeout:,.1f} us{timer}"
        )
    resent = int(g["packets"].sum())
    return f"{first}; {plural(resent, 'packet')} resent"


def _episodes(t: Tables) -> Iterator[Observation]:
    eps = t.retransmissions
    if eps.empty:
        return
    for trigger, code in EPISODE_CODES.items():
        chosen = eps[(eps["trigger"] == trigger).to_numpy(bool)]
        for fid, g in _flow_groups(chosen):
            flow = t.flows.iloc[fid] if 0 <= fid < len(t.flows) else None
            facts = _flow_facts(t, fid) | {
                "location": _location(t, fid, trigger),
                "silence_s": float(np.median(g["delay_s"].to_numpy(float))),
            }
            detail = _episode_detail(code, g, flow)
            frames = g["first_frame"].tolist()
            yield _obs(code, len(g), detail, g["ts_ns"].min(), frames, fid, facts)


def _livelocks(t: Tables) -> Iterator[Observation]:
    eps = t.retransmissions
    if eps.empty:
        return
    gb0 = eps[(eps["mode"] == "go-back-0").to_numpy(bool)]
    for fid, g in _flow_groups(gb0):
        restarts = g["start_psn"].value_counts()
        if restarts.max() >= LIVELOCK_RESTARTS:
            n, psn = int(restarts.max()), int(restarts.index.to_numpy()[restarts.argmax()])
            detail = f"from message start PSN {psn}, never completing the message"
            frames = g["first_frame"].tolist()
            yield _obs("go_back_0_livelock", n, detail, g["ts_ns"].min(), frames, fid)


def _capture_gaps(t: Tables) -> Iterator[Observation]:
    if t.capture_gaps.empty:
        return
    for fid, g in _flow_groups(t.capture_gaps):
        n = int(g["psns"].sum())
        detail = f"in {plural(len(g), 'gap')}"
        yield _obs("capture_gap", n, detail, g["ts_ns"].min(), g["frame"].tolist(), fid)


def observations(t: Tables) -> Iterator[Observation]:
    yield from _livelocks(t)
    yield from _naks(t)
    yield from _episodes(t)
    yield from _capture_gaps(t)
