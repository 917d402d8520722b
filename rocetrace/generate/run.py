"""`generate()`: scenario -> model run -> one capture per vantage (each with its own clock)
-> pcap files + one truth sidecar."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from rocetrace import __version__
from rocetrace.generate.cm_exchange import CmPlan
from rocetrace.generate.facts import v2_facts
from rocetrace.generate.frames import frame_lengths
from rocetrace.generate.hosts import Hosts, make_hosts
from rocetrace.generate.presets import preset
from rocetrace.generate.scenario import BULK_OPS, Scenario, with_clocks
from rocetrace.generate.sidecar import (
    SCHEMA,
    capture_counts,
    drops_truth,
    expected_findings,
    flows_and_episodes,
    message_summary,
    pfc_truth,
)
from rocetrace.generate.sim import SimResult, Simulation
from rocetrace.generate.topology import encap_of
from rocetrace.generate.vantage import VantageCapture, capture_paths, shoot
from rocetrace.generate.wire_table import PacketTable


@dataclass
class Truth:
    """The ground truth of one run: the JSON sidecar as a dict (`data`), every packet sent
    (`wire`: row i is wire id i) and each written capture (`captures`, by vantage)."""

    data: dict[str, Any]
    path: Path
    wire: PacketTable = field(default_factory=lambda: PacketTable.empty(0))
    captures: dict[str, VantageCapture] = field(default_factory=dict)

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

    @property
    def nic_episodes(self) -> list[dict[str, Any]]:
        return list(self.data["nic_episodes"])

    @property
    def drops(self) -> list[dict[str, Any]]:
        return list(self.data["drops"])

    @property
    def anomalies(self) -> list[dict[str, Any]]:
        return list(self.data["anomalies"])


def truth_path(out_path: str | Path) -> Path:
    """`out.pcap` -> `out.truth.json` (any extension, .gz included, is replaced)."""
    p = Path(out_path)
    name = p.name[:-3] if p.name.endswith(".gz") else p.name
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return p.with_name(stem + ".truth.json")


def resolve(scenario: str | Scenario, overrides: dict[str, Any]) -> Scenario:
    base = preset(scenario) if isinstance(scenario, str) else scenario
    sc = base.with_overrides(**overrides)
    sc = with_clocks(replace(sc, vantages=tuple(sc.vantages)), sc.clocks)
    sc.validate()
    faults = any(
        (sc.losses, sc.pfc_storm, sc.ce_rate, sc.kmax_bytes, sc.rnr_naks, sc.pfc_on_loss,
         sc.responder_mtu, sc.reorder_rate)
    )  # fmt: skip
    if sc.bulk and (
        faults or sc.transport != "RC" or not set(sc.ops) <= set(BULK_OPS) or sc.capture_drop_rate
    ):
        raise ValueError(
            f"the bulk path writes fault-free RC traffic of {', '.join(BULK_OPS)} only; "
            "use a preset"
        )
    if sc.bulk and (sc.vxlan_vni is not None or sc.roce_v1 or sc.ip_version == 6):
        raise ValueError("the bulk path writes RoCEv2 over IPv4 only")
    if sc.bulk and (sc.qp_reuse_gap_us is not None or sc.responder_ops):
        raise ValueError("the bulk path has no QP reuse and no responder requests")
    return sc


def simulate(sc: Scenario, seed: int) -> tuple[PacketTable, SimResult]:
    if sc.bulk:
        from rocetrace.generate.bulk import bulk_rows

        return bulk_rows(sc, seed)
    res = Simulation(sc, seed).run()
    table = PacketTable.from_rows(res.rows)
    table.cols["row"] = np.arange(len(table), dtype=np.int32)
    return table, res


def run_model(sc: Scenario, seed: int) -> tuple[PacketTable, SimResult, CmPlan | None]:
    """Every packet sent in the run (the wire table, in wire-id order, frame lengths set),
    with CM MADs."""
    wire, res = simulate(sc, seed)
    plan = None
    if sc.cm:
        from rocetrace.generate.cm_exchange import add_cm_exchange

        wire, plan = add_cm_exchange(wire, res, sc, seed)
    wire.cols["wire_len"] = frame_lengths(wire, encap_of(sc))
    return wire, res, plan


def legacy_vantage(sc: Scenario) -> str:
    """The capture that truth/1's keys (flows, retransmissions, capture, ...) describe."""
    return sc.vantage if sc.vantage in sc.captured else sc.captured[0]


def generate(
    scenario: str | Scenario, out_path: str | Path, seed: int = 0, **overrides: Any
) -> Truth:
    """Write a synthetic capture per vantage and one truth sidecar; the same seed gives the
    same bytes. `vantages=("sender", "receiver")` writes out.sender.pcap and
    out.receiver.pcap; `clocks={"receiver": "offset=+30us,res=us"}` sets a vantage's clock."""
    sc = resolve(scenario, overrides)
    wire, res, plan = run_model(sc, seed)
    hosts = make_hosts(res.hosts, 6 if (sc.ip_version == 6 or sc.roce_v1) else 4)
    payloads = plan.payloads if plan else ()
    paths = capture_paths(out_path, sc.captured)
    shots = {v: shoot(wire, sc, v, seed, paths[v], hosts, payloads) for v in sc.captured}
    data = legacy_truth(sc, seed, shots[legacy_vantage(sc)], wire, res, hosts)
    if plan:
        data["cm_connections"] = plan.truth(hosts)
    data["findings"] = expected_findings(data, sc, res)
    shift = plan.shift_ns if plan else 0
    data.update(v2_facts(sc, res, wire, hosts, list(shots.values()), shift))
    path = truth_path(out_path)
    text = json.dumps(data, indent=1) + "\n"
    path.write_text(text)
    return Truth(json.loads(text), path, wire, shots)


def legacy_truth(
    sc: Scenario, seed: int, shot: VantageCapture, wire: PacketTable, res: SimResult,
    hosts: Hosts,
) -> dict[str, Any]:  # fmt: skip
    """truth/1's keys, counted at one capture point (to be retired by the analysis team)."""
    table = shot.table
    flows, episodes = flows_and_episodes(table, wire, res, hosts)
    return {
        "schema": SCHEMA, "generator": f"rocetrace {__version__}", "seed": seed,
        "scenario": _scenario_dict(sc), "capture": capture_counts(table, sc),
        "flows": flows, "retransmissions": episodes,
        "pfc": pfc_truth(table, sc.link_speed_bps),
        "capture_drops": drops_truth(shot.drops, hosts), "messages": message_summary(res),
        "packets_on_wire": len(wire), "legacy_vantage": shot.vantage,
    }  # fmt: skip


def _scenario_dict(sc: Scenario) -> dict[str, Any]:
    d = asdict(sc)
    d.pop("extra", None)
    return d
