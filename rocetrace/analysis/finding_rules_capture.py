"""Finding rules for the fabric and the capture itself: PFC storms and pauses, bad ICRCs,
a damaged or cut capture file, malformed frames, and the named protocol anomalies."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from rocetrace.analysis.advice import plural
from rocetrace.analysis.finding_rules_loss import _obs
from rocetrace.analysis.pfc import STORM_S
from rocetrace.capture.damage import describe
from rocetrace.schema import MALFORMED_ROCE

if TYPE_CHECKING:
    from rocetrace.analysis.findings import Observation, Tables

# MALFORMED_ROCE less truncated_bth, which a short snap length causes too
MALFORMED_REASONS = tuple(a for a in MALFORMED_ROCE if a != "truncated_bth")


def _data_pcps(t: Tables) -> set[int]:
    """The PCPs the RoCE data rides (tagged requester flows)."""
    f = t.flows
    rows = (f["requests"].to_numpy() > 0) & (f["vlan_pcp"].to_numpy() >= 0)
    return {int(p) for p in f["vlan_pcp"].to_numpy()[rows]}


def _pfc(t: Tables) -> Iterator[Observation]:
    runs, pfc = t.pfc_runs, t.pfc
    storms = set()
    for r in runs[runs["duration_s"] >= STORM_S].itertuples() if len(runs) else []:
        storms.add((r.src_mac, r.priority))
        detail = (
            f"priority {r.priority} paused for {r.duration_s * 1e3:,.1f} ms without a break by "
            f"{r.src_mac} ({plural(int(r.frames), 'PFC frame')})"
        )
        yield _obs("pfc_storm", 1, detail, r.start_ns, [r.first_frame],
                   facts={"priority": int(r.priority)})  # fmt: skip
    if pfc.empty:
        return
    data = _data_pcps(t)
    for (mac, prio), g in pfc[pfc["pause"].to_numpy(bool)].groupby(["src_mac", "priority"]):
        if (mac, prio) in storms:
            continue
        held = float(g["held_s"].sum()) * 1e3
        detail = f"priority {prio} paused {plural(len(g), 'time')} by {mac}, {held:,.3f} ms in all"
        facts = {"priority": int(prio), "data_pcp": min(data) if data else None}
        frames = g["frame"].tolist()
        yield _obs("pfc_pause", len(g), detail, g["ts_ns"].min(), frames, facts=facts)


def _file(t: Tables) -> Iterator[Observation]:
    cap = t.capture
    if t.bad_icrc_frames:
        n = len(t.bad_icrc_frames)
        detail = f"{plural(n, 'frame')} with a bad ICRC"
        yield _obs("bad_icrc", n, detail, None, t.bad_icrc_frames)
    if cap.get("corrupt_records"):
        detail = (
            f"{plural(cap['corrupt_records'], 'corrupt record')} in the capture file, "
            f"{cap['skipped_bytes']:,} bytes skipped, at {describe(cap['corrupt_regions'])}; "
            "decoding resumed after each"
        )
        yield _obs("corrupt_records", int(cap["corrupt_records"]), detail, None, [])
    counts = {k: v for k, v in (cap.get("anomalies") or {}).items() if k in MALFORMED_REASONS}
    if any(counts.values()):
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(counts.items()) if v)
        n = sum(counts.values())
        detail = f"{plural(n, 'malformed RoCE frame')} ({reasons}) left out of the flows"
        yield _obs("malformed_frames", n, detail, None, [])
    if cap.get("incomplete_tail"):
        detail = "the capture file ends inside a record"
        yield _obs("incomplete_tail", 1, detail, None, [])


def _anomalies(t: Tables) -> Iterator[Observation]:
    df = t.anomalies
    if df is None or len(df) == 0:
        return
    for (code, fid), g in df.groupby(["code", "flow_id"], sort=False):
        message = str(g["message"].iloc[0])
        detail = message if len(g) == 1 else f"{len(g)} times; first: {message}"
        frames = [f for fs in g["frames"] for f in fs]
        flow: Any = int(fid) if 0 <= int(fid) < len(t.flows) else None
        ts = int(np.min(g["ts_ns"].to_numpy()))
        yield _obs(str(code), len(g), detail, ts, frames, flow, {"message": message})


def observations(t: Tables) -> Iterator[Observation]:
    yield from _pfc(t)
    yield from _anomalies(t)
    yield from _file(t)
