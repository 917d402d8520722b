"""Flows paired by the capture's CM connections: real captures against tshark's REQ/REP,
generated ones (every QP from one start PSN, where PSN-space pairing is weakest) against
the truth, and QPNs reused by a later connection."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cm_oracle import tshark_cm_mads

from rocetrace.analysis.api import analyze
from rocetrace.analysis.cm import CONNECTION_DTYPES
from rocetrace.analysis.pairing import cm_peers, flow_keys
from rocetrace.analysis.prepared import REQUEST, prepare
from rocetrace.capture import read_capture
from rocetrace.dissectors.mad import CmAttr
from rocetrace.generate import Loss, generate

CM_CAPTURES = ("rxe_rdma_cm", "rxe_cm_write_read")


def _tshark_handshakes(path: Path, tshark: str) -> set[tuple[int, int]]:
    """(REQ Local QPN, REP Local QPN) of every handshake tshark shows."""
    mads = tshark_cm_mads(path, tshark).values()
    req = {m["cm_local_comm_id"]: m["cm_local_qpn"] for m in mads
           if m["mad_attribute_id"] == CmAttr.REQ}  # fmt: skip
    return {(req[m["cm_remote_comm_id"]], m["cm_local_qpn"]) for m in mads
            if m["mad_attribute_id"] == CmAttr.REP}  # fmt: skip


@pytest.mark.parametrize("name", CM_CAPTURES)
def test_real_captures_pair_every_rc_flow_by_cm(
    real_captures: list[Path], tshark: str, name: str
) -> None:
    path = next(p for p in real_captures if p.stem == name)
    a = analyze(path)
    rc = a.flows[a.flows["transport"] == "RC"]
    assert len(rc) and (rc["paired_by"] == "cm").all()
    pairs = {(int(f.dest_qp), int(f.peer_qp)) for f in rc.itertuples()}
    handshakes = _tshark_handshakes(path, tshark)
    assert pairs == handshakes | {(b, a) for a, b in handshakes}
    assert len(a.summary()["cm_connections"]) == len(handshakes)


@pytest.mark.parametrize("name", CM_CAPTURES)
def test_real_captures_start_at_the_announced_psns(real_captures: list[Path], name: str) -> None:
    """The requester's flow starts at REP's Starting PSN; the responder's own requests (if
    any) at REQ's."""
    path = next(p for p in real_captures if p.stem == name)
    cap = read_capture(path)
    a = analyze(cap)
    flows = a.flows.set_index(["src_ip", "dst_ip", "dest_qp"])
    pp = prepare(cap.packets)
    flow_id = a.packets["flow_id"].fillna(-1).to_numpy(np.int64)
    for c in a.cm_connections.itertuples():
        out = flows.loc[(c.requester_ip, c.responder_ip, c.responder_qpn)]
        assert out["first_psn"] == c.requester_starting_psn
        back = flows.loc[(c.responder_ip, c.requester_ip, c.requester_qpn)]
        requests = np.flatnonzero((flow_id == back["flow_id"]) & (pp.kind == REQUEST))
        if len(requests):
            assert pp.psn[requests[0]] == c.responder_starting_psn


@pytest.mark.parametrize("vantage", ["sender", "receiver", "mirror"])
@pytest.mark.parametrize(
    ("preset", "qps", "ops"),
    [("clean", 2, ("write",)), ("gbn-loss", 5, ("write", "read")), ("read-loss", 8, ("read",)),
     ("rnr", 3, ("send",)), ("incast", 8, ("write", "read"))],
)  # fmt: skip
def test_generated_cm_pairs_like_truth(
    tmp_path: Path, vantage: str, preset: str, qps: int, ops: tuple[str, ...]
) -> None:
    path = tmp_path / "cm.pcap"
    truth = generate(
        preset, path, seed=qps, cm=True, qps=qps, vantage=vantage, ops=ops, start_psn=100,
        messages=4, message_size=4096, losses=(Loss(rate=0.02),),
    )  # fmt: skip
    real = {(f["src_ip"], f["dst_ip"], f["dest_qp"]): f for f in truth.data["flows"]}
    got = [f for f in analyze(path).summary()["flows"] if f["transport"] != "UD"]
    assert len(got) == sum(f["dest_qp"] != 1 for f in real.values())
    wrong = [
        (key, f["peer_qp"], f["role"], f["paired_by"])
        for f in got
        if (f["peer_qp"], f["role"], f["paired_by"])
        != (real[key := (f["src_ip"], f["dst_ip"], f["dest_qp"])]["peer_qp"],
            real[key]["role"], "cm")
    ]  # fmt: skip
    assert wrong == []


def test_without_mads_the_same_capture_pairs_by_psn(tmp_path: Path) -> None:
    """A bare packet table holds no MAD bytes: the pairing falls back to the PSN space."""
    path = tmp_path / "cm.pcap"
    generate("clean", path, seed=2, cm=True, qps=4, messages=4, message_size=4096)
    cap = read_capture(path)
    with_cm, bare = analyze(cap).flows, analyze(cap.packets).flows
    rc = with_cm["transport"] == "RC"
    assert (with_cm.loc[rc, "paired_by"] == "cm").all()
    assert (bare.loc[rc, "paired_by"] == "psn").all()
    assert with_cm["peer_qp"].equals(bare["peer_qp"]) and with_cm["role"].equals(bare["role"])
    assert analyze(cap.packets).cm_connections.empty


def _connection(t: int, end: int | None, requester_qpn: int, responder_qpn: int) -> dict:
    return {"requester_ip": "10.0.0.1", "responder_ip": "10.0.0.2",
            "requester_qpn": requester_qpn, "responder_qpn": responder_qpn,
            "connect_ts_ns": t, "disconnect_ts_ns": end}  # fmt: skip


@pytest.mark.parametrize(("first_ts", "peer"), [(50, 10), (250, 11), (150, -1), (-5, -1)])
def test_a_reused_qpn_belongs_to_the_connection_open_at_the_flows_start(
    first_ts: int, peer: int
) -> None:
    """QP 20 answers QP 10 until its disconnect at 100, then QP 11 from 200 on."""
    conns = pd.DataFrame([_connection(0, 100, 10, 20), _connection(200, None, 11, 20)])
    conns = conns.astype({k: CONNECTION_DTYPES[k] for k in conns.columns})
    ips = np.array(["10.0.0.1", "10.0.0.2"], dtype=object)
    keys = flow_keys(np.array([0]), np.array([1]), np.array([20]))
    assert cm_peers(conns, ips, keys, np.array([first_ts])).tolist() == [peer]
