"""The truth sidecar (`out.pcap` -> `out.truth.json`): flows, retransmission episodes, PFC,
capture counts, capture drops and the findings an analysis should raise."""

from __future__ import annotations

from typing import Any

import numpy as np

from rocetrace.dissectors.pfc_header import pause_seconds
from rocetrace.generate.episode_truth import episode_truth, resolve_by_host
from rocetrace.generate.hosts import Hosts
from rocetrace.generate.malformed import MALFORMED_NAMES
from rocetrace.generate.model import Episode
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.sim import SimResult
from rocetrace.generate.truth import CNP, find_flows, flow_key, flow_truth, group_by_key
from rocetrace.generate.wire_table import MALFORMED, PFC, ROLE_REQUEST, PacketTable

SCHEMA = "rocetrace.truth/2"
STORM_S = 0.1
LIVELOCK_RESTARTS = 3


def _sent_counts(all_rows: PacketTable) -> dict[tuple[int, int], int]:
    key = (all_rows["conn"].astype(np.int64) + 1) * 8 + all_rows["role"]
    counts = np.bincount(key)
    return {(int(k) // 8 - 1, int(k) % 8): int(counts[k]) for k in np.flatnonzero(counts)}


def _cnps_by_key(table: PacketTable, hosts: Hosts) -> dict[tuple[str, str, int], np.ndarray]:
    groups = group_by_key(table, table["opcode"] == CNP)
    return {flow_key(hosts, table, int(g[0])): g for g in groups}


def flows_and_episodes(
    table: PacketTable, all_rows: PacketTable, res: SimResult, hosts: Hosts
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    flows = find_flows(table, hosts)
    ctx: dict[str, Any] = {
        "by_key": {f.key: f for f in flows}, "cnps": _cnps_by_key(table, hosts),
        "sent": _sent_counts(all_rows), "messages": res.messages, "retransmitted": set(),
    }  # fmt: skip
    entries = [flow_truth(table, f, res.conns, ctx) for f in flows]
    visible: list[dict[str, Any]] = []
    if res.episodes:
        flow_of = {int(i): f for f in flows for i in f.rows}
        index_of = {int(r): i for i, r in enumerate(table["row"]) if r >= 0}
        redone = {  # NAKs answered by redoing the whole message (go-back-0)
            index_of[e.trigger_row]: e.start_psn
            for e in res.episodes
            if e.mode == "go-back-0" and e.trigger == "nak" and e.trigger_row in index_of
        }
        reissues = np.array([e.idx for e in res.episodes if e.role != ROLE_REQUEST], np.int64)
        for ep in res.episodes:
            visible += episode_truth(
                table, ep, ctx["retransmitted"], flow_of, index_of, redone, reissues
            )
    resolve_by_host(visible)
    for entry in entries:
        mine = [e for e in visible if (e["src_ip"], e["dst_ip"], e["dest_qp"]) == _key(entry)]
        modes = {e["mode"] for e in mine}
        entry["retransmission_mode"] = (
            "none" if not modes else modes.pop() if len(modes) == 1 else "mixed"
        )
        entry["timeouts"] = sum(e["trigger"] == "timeout" for e in mine)
    return entries, visible


def _key(entry: dict[str, Any]) -> tuple[str, str, int]:
    return entry["src_ip"], entry["dst_ip"], entry["dest_qp"]


def pfc_truth(table: PacketTable, link_bps: float) -> dict[str, Any]:
    """PFC frames and, per priority, pause/resume counts, quanta and time paused."""
    rows = np.flatnonzero(table["kind"] == PFC)
    by: dict[str, dict[str, Any]] = {}
    pause = resume = 0
    for p in range(8):
        mine = rows[(table["pfc_enable"][rows] >> p) & 1 == 1]
        if not len(mine):
            continue
        q = table[f"pfc_q{p}"][mine].astype(np.int64)
        paused, longest = _paused(table["ts"][mine], table["src"][mine], q, link_bps)
        by[str(p)] = {"pause_frames": int((q > 0).sum()), "resume_frames": int((q == 0).sum()),
                      "quanta_total": int(q.sum()), "paused_s": round(paused, 9),
                      "longest_pause_s": round(longest, 9)}  # fmt: skip
    for i in rows:
        q = [int(table[f"pfc_q{p}"][i]) for p in range(8) if (table["pfc_enable"][i] >> p) & 1]
        pause += any(q)
        resume += not any(q)
    return {"frames": len(rows), "pause_frames": pause, "resume_frames": resume, "by_priority": by}


def _paused(
    ts: np.ndarray, src: np.ndarray, quanta: np.ndarray, link_bps: float
) -> tuple[float, float]:
    """(total seconds paused, longest continuous pause): a frame's pause lasts its quanta
    unless the next frame from the same port replaces it first."""
    total, longest = 0.0, 0.0
    for s in np.unique(src):
        t = ts[src == s].astype(np.float64) * 1e-9
        q = quanta[src == s]
        run = 0.0
        for i in range(len(t)):
            dur = pause_seconds(int(q[i]), link_bps)
            if i + 1 < len(t):
                dur = min(dur, t[i + 1] - t[i])
            total += dur
            run = run + dur if q[i] > 0 else 0.0
            longest = max(longest, run)
            if i + 1 < len(t) and dur < t[i + 1] - t[i]:
                run = 0.0
    return total, longest


def capture_counts(table: PacketTable, sc: Scenario) -> dict[str, Any]:
    mal = table["malformed"][table["kind"] == MALFORMED]
    return {
        "packets": len(table),
        "roce_packets": int((table["kind"] != PFC).sum()),
        "non_roce_packets": int((table["kind"] == PFC).sum()),
        "malformed_packets": int((mal >= 2).sum()),
        "truncated_packets": int((table["wire_len"] > sc.snaplen).sum()),
        "incomplete_tail": False,
        "first_ts": float(table["ts"][0]) * 1e-9 if len(table) else None,
        "last_ts": float(table["ts"][-1]) * 1e-9 if len(table) else None,
        "first_ts_ns": int(table["ts"][0]) if len(table) else None,
        "last_ts_ns": int(table["ts"][-1]) if len(table) else None,
        "malformed": [MALFORMED_NAMES[int(m)] for m in mal],
    }


def drops_truth(drops: PacketTable, hosts: Hosts) -> list[dict[str, Any]]:
    return [
        {
            "ts": float(drops["ts"][i]) * 1e-9,
            "ts_ns": int(drops["ts"][i]),
            "src_ip": hosts.ip_str(int(drops["src"][i])),
            "dst_ip": hosts.ip_str(int(drops["dst"][i])),
            "dest_qp": int(drops["dest_qp"][i]),
            "psn": int(drops["psn"][i]),
            "opcode": int(drops["opcode"][i]),
        }
        for i in range(len(drops))
    ]


def message_summary(res: SimResult) -> dict[str, int]:
    out: dict[str, int] = {}
    for m in res.messages:
        out[m.status] = out.get(m.status, 0) + 1
    return out


def restarts_without_progress(episodes: list[Episode]) -> int:
    """Most go-back-0 restarts of one message start PSN (the livelock signature)."""
    starts: dict[tuple[int, int], int] = {}
    for e in episodes:
        if e.mode == "go-back-0":
            starts[(e.conn, e.start_psn)] = starts.get((e.conn, e.start_psn), 0) + 1
    return max(starts.values(), default=0)


def _flow_name(f: dict[str, Any]) -> str:
    return f"{f['src_ip']}>{f['dst_ip']}/{f['dest_qp']}"


def expected_findings(data: dict[str, Any], sc: Scenario, res: SimResult) -> list[dict[str, Any]]:
    """Finding codes (issue 4) an analysis of this capture must raise; `certain` is False
    where the analysis has to guess (a PSN gap from a capture drop)."""
    out: list[dict[str, Any]] = []
    per_flow = {
        "psn_sequence_error": lambda f: f["naks"]["psn_sequence_error"] > 0,
        "rnr_nak": lambda f: f["naks"]["rnr"] > 0,
        "timeout_retransmission": lambda f: f["timeouts"] > 0,
        "cnp_without_ce": lambda f: f["cnps_without_ce"] > 0,
    }
    for code, test in per_flow.items():
        out += [
            {"code": code, "flow": _flow_name(f), "certain": True} for f in data["flows"] if test(f)
        ]
    data_flows = [f for f in data["flows"] if f["role"] == "requester"]
    if sc.ecn == 0 and data_flows:
        out.append({"code": "ecn_not_capable", "flow": None, "certain": True})
    if any(f["cnps"] for f in data["flows"]) and sc.cnp_dscp >> 3 <= sc.dscp >> 3:
        out.append({"code": "cnp_priority", "flow": None, "certain": True})
    if sc.udp_sport_collision and sc.qps > 1:
        out.append({"code": "udp_sport_collision", "flow": None, "certain": True})
    if "bad_icrc" in data["capture"]["malformed"]:
        out.append({"code": "bad_icrc", "flow": None, "certain": True})
    if data["capture_drops"]:
        out.append({"code": "capture_gap", "flow": None, "certain": False})
    if any(p["longest_pause_s"] >= STORM_S for p in data["pfc"]["by_priority"].values()):
        out.append({"code": "pfc_storm", "flow": None, "certain": True})
    stuck = any(m.status == "pending" for m in res.messages)
    if stuck and restarts_without_progress(res.episodes) >= LIVELOCK_RESTARTS:
        out.append({"code": "go_back_0_livelock", "flow": None, "certain": True})
    return out
