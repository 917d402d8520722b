"""cm_connections: CM MAD tables -> one row per connection (hand-built and real captures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from cm_oracle import mad_table, reference_cm_mads

from rocetrace.analysis.cm import CONNECTION_DTYPES, cm_connections, empty_mads
from rocetrace.dissectors.mad import CmAttr
from rocetrace.schema import MAD_DTYPES

A, B, C = "10.0.0.1", "10.0.0.2", "10.0.0.3"


def mad(
    ts: int, src: str, dst: str, attr: CmAttr, local: int, remote: Any = pd.NA, **kw: Any
) -> dict[str, Any]:
    return {"ts_ns": ts, "src_ip": src, "dst_ip": dst, "mad_attr_id": int(attr),
            "cm_local_comm_id": local, "cm_remote_comm_id": remote,
            "cm_local_qpn": kw.get("qpn", pd.NA), "cm_starting_psn": kw.get("psn", pd.NA),
            "cm_reason": kw.get("reason", pd.NA)}  # fmt: skip


def table(*rows: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(list(rows)).astype(MAD_DTYPES)


def handshake(t: int, req: str, resp: str, ids: tuple[int, int], qpns: tuple[int, int]) -> list:
    return [
        mad(t, req, resp, CmAttr.REQ, ids[0], qpn=qpns[0], psn=100),
        mad(t + 1, resp, req, CmAttr.REP, ids[1], ids[0], qpn=qpns[1], psn=200),
        mad(t + 2, req, resp, CmAttr.RTU, ids[0], ids[1]),
    ]


def test_a_full_handshake_pairs_qpns_and_starting_psns() -> None:
    rows = handshake(10, A, B, (0xAAAA, 0xBBBB), (0x11, 0x22))
    rows += [mad(50, B, A, CmAttr.DREQ, 0xBBBB, 0xAAAA), mad(51, A, B, CmAttr.DREP, 0xAAAA, 0xBBBB)]
    (conn,) = cm_connections(table(*rows)).to_dict("records")
    assert conn == {
        "requester_ip": A, "responder_ip": B, "requester_comm_id": 0xAAAA,
        "responder_comm_id": 0xBBBB, "requester_qpn": 0x11, "responder_qpn": 0x22,
        "requester_starting_psn": 200, "responder_starting_psn": 100, "connect_ts_ns": 10,
        "established": True, "disconnected": True, "disconnect_ts_ns": 50, "rejected": False,
        "reject_reason": None,
    }  # fmt: skip


def test_output_follows_the_declared_dtypes_even_when_empty() -> None:
    for mads in (empty_mads(), table(*handshake(0, A, B, (1, 2), (3, 4)))):
        out = cm_connections(mads)
        assert {c: str(t) for c, t in out.dtypes.items()} == CONNECTION_DTYPES


def test_connections_between_the_same_hosts_are_told_apart_by_comm_id() -> None:
    rows = handshake(10, A, B, (1, 2), (0x11, 0x22)) + handshake(20, A, B, (3, 4), (0x13, 0x24))
    rows.append(mad(30, A, B, CmAttr.DREQ, 3, 4))
    out = cm_connections(table(*rows))
    assert list(out["responder_qpn"]) == [0x22, 0x24]
    assert list(out["disconnected"]) == [False, True]


def test_a_rejected_request_keeps_its_reason_and_is_not_established() -> None:
    rows = [mad(10, A, C, CmAttr.REQ, 7, qpn=0x11, psn=5),
            mad(12, C, A, CmAttr.REJ, 0, 7, reason=28)]  # fmt: skip
    (conn,) = cm_connections(table(*rows)).to_dict("records")
    assert conn["rejected"] and conn["reject_reason"] == 28 and not conn["established"]
    assert pd.isna(conn["responder_qpn"])


def test_a_rep_rejected_by_the_requester_counts_too() -> None:
    rows = handshake(10, A, B, (1, 2), (0x11, 0x22))[:2]
    rows.append(mad(13, A, B, CmAttr.REJ, 1, 2, reason=6))
    (conn,) = cm_connections(table(*rows)).to_dict("records")
    assert conn["rejected"] and conn["reject_reason"] == 6


def test_retried_mads_count_once_and_a_rep_without_its_req_still_connects() -> None:
    first = handshake(10, A, B, (1, 2), (0x11, 0x22))
    orphan_rep = mad(40, C, A, CmAttr.REP, 9, 8, qpn=0x33, psn=300)
    out = cm_connections(table(*first, first[0] | {"ts_ns": 15}, orphan_rep))
    assert len(out) == 2 and out["connect_ts_ns"].tolist() == [10, 40]
    orphan = out.iloc[1]
    assert orphan["requester_ip"] == A and orphan["responder_qpn"] == 0x33
    assert pd.isna(orphan["requester_qpn"]) and not orphan["established"]


def test_categorical_ips_work() -> None:
    mads = table(*handshake(10, A, B, (1, 2), (0x11, 0x22)))
    mads["src_ip"] = mads["src_ip"].astype("category")
    assert cm_connections(mads)["established"].all()


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rxe_cm_write_read", [("192.168.2.25", 0x17, 0x11, 0xC23298, 0x89BB0E)]),
        ("rxe_rdma_cm", [("10.1.16.62", 0x3D, 0x3B, 0x727D6D, 0x7CC204),
                         ("10.1.16.62", 0x3E, 0x3C, 0x7D2388, 0xAF834F)]),
    ],
)  # fmt: skip
def test_real_captures(real_captures: list[Path], name: str, expected: list[tuple]) -> None:
    """Values cross-checked by hand with tshark; every connection set up and torn down."""
    path = next(p for p in real_captures if p.stem == name)
    out = cm_connections(mad_table(reference_cm_mads(path)))
    cols = ["requester_ip", "requester_qpn", "responder_qpn", "requester_starting_psn"]
    got = [tuple(r) for r in out[[*cols, "responder_starting_psn"]].itertuples(index=False)]
    assert got == expected
    assert out["established"].all() and out["disconnected"].all() and not out["rejected"].any()
