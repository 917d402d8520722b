"""`generate()`: scenario -> model run -> capture point -> frames -> pcap + truth sidecar."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rocetrace import __version__
from rocetrace.capture.writer import write_capture
from rocetrace.generate.capture import capture
from rocetrace.generate.frames import build_frames
from rocetrace.generate.hosts import make_hosts
from rocetrace.generate.presets import preset
from rocetrace.generate.scenario import BULK_OPS, Scenario
from rocetrace.generate.sidecar import (
    SCHEMA,
    STORM_S,
    capture_counts,
    drops_truth,
    flows_and_episodes,
    message_summary,
    pfc_truth,
    restarts_without_progress,
)
from rocetrace.generate.sim import SimResult, Simulation, encap_of
from rocetrace.generate.table import PacketTable

LIVELOCK_RESTARTS = 3


@dataclass
class Truth:
    """The ground truth of one generated capture (the JSON sidecar as a dict)."""

    data: dict[str, Any]
    path: Path

    def flow(self, src_ip: str, dst_ip: str, dest_qp: int) -> dict[str, Any]:
        for f in self.data["flows"]:
            if (f["src_ip"], f["dst_ip"], f["dest_qp"]) == (src_ip, dst_ip, dest_qp):
                return f
        raise KeyError((src_ip, dst_ip, dest_qp))

    @property
    def flows(self) -> list[dict[str, Any]]:
        return list(self.data["flows"])

    @property
    def retransmissions(self) -> list[dict[str, Any]]:
        return list(self.data["retransmissions"])


def truth_path(out_path: str | Path) -> Path:
    """`out.pcap` -> `out.truth.json` (any extension, .gz included, is replaced)."""
    p = Path(out_path)
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return p.with_name(stem + ".truth.json")


def resolve(scenario: str | Scenario, overrides: dict[str, Any]) -> Scenario:
    base = preset(scenario) if isinstance(scenario, str) else scenario
    sc = base.with_overrides(**overrides)
    sc.validate()
    faults = sc.losses or sc.pfc_storm or sc.ce_rate or sc.kmax_bytes or sc.rnr_naks
    if sc.bulk and (
        faults or sc.transport != "RC" or not set(sc.ops) <= set(BULK_OPS) or sc.capture_drop_rate
    ):
        raise ValueError(
            f"the bulk path writes fault-free RC traffic of {', '.join(BULK_OPS)} only; "
            "use a preset"
        )
    if sc.bulk and (sc.vxlan_vni is not None or sc.roce_v1 or sc.ip_version == 6):
        raise ValueError("the bulk path writes RoCEv2 over IPv4 only")
    return sc


def simulate(sc: Scenario, seed: int) -> tuple[PacketTable, SimResult]:
    if sc.bulk:
        from rocetrace.generate.bulk import bulk_rows

        return bulk_rows(sc, seed)
    res = Simulation(sc, seed).run()
    table = PacketTable.from_rows(res.rows)
    table.cols["row"] = np.arange(len(table), dtype=np.int32)
    return table, res


def generate(
    scenario: str | Scenario, out_path: str | Path, seed: int = 0, **overrides: Any
) -> Truth:
    """Write a synthetic capture and its truth sidecar; the same seed gives the same bytes."""
    sc = resolve(scenario, overrides)
    all_rows, res = simulate(sc, seed)
    cm_plan = None
    if sc.cm:
        from rocetrace.generate.cm import add_cm_exchange

        all_rows, cm_plan = add_cm_exchange(all_rows, res, sc, seed)
    got = capture(all_rows, sc, np.random.default_rng([seed, 1]))
    table = got.table
    if not sc.nanosecond:
        table.cols["ts"] = table["ts"] // 1000 * 1000
    hosts = make_hosts(res.hosts, 6 if (sc.ip_version == 6 or sc.roce_v1) else 4)
    payloads = cm_plan.payloads if cm_plan else ()
    frames = build_frames(table, encap_of(sc), hosts, payloads, snaplen=sc.snaplen)
    table.cols["wire_len"] = frames.wire.astype(np.uint32)
    write_capture(
        out_path, table["ts"], (frames.flat, frames.offsets, frames.lengths), wire_lens=frames.wire,
        fmt="pcapng" if sc.fmt == "pcapng" else "pcap",
        nanosecond=sc.nanosecond, snaplen=sc.snaplen,
    )  # fmt: skip
    flows, episodes = flows_and_episodes(table, all_rows, res, hosts)
    data = {
        "schema": SCHEMA, "generator": f"rocetrace {__version__}", "seed": seed,
        "scenario": _scenario_dict(sc), "capture": capture_counts(table, sc),
        "flows": flows, "retransmissions": episodes, "pfc": pfc_truth(table, sc.link_speed_bps),
        "capture_drops": drops_truth(got.drops, hosts), "messages": message_summary(res),
        "packets_on_wire": len(all_rows),
    }  # fmt: skip
    if cm_plan:
        data["cm_connections"] = cm_plan.truth(hosts)
    data["findings"] = expected_findings(data, sc, res)
    path = truth_path(out_path)
    text = json.dumps(data, indent=1) + "\n"
    path.write_text(text)
    return Truth(json.loads(text), path)


def _scenario_dict(sc: Scenario) -> dict[str, Any]:
    d = asdict(sc)
    d.pop("extra", None)
    return d


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
