"""A synthetic `Analysis` with every table per docs/analysis-tables.md.

Why: the report is developed, tested and sized independently of the capture reader and the
analysis (the same tables at any scale, e.g. 1 M packets, in a second). The scenario has a
go-back-N loss (gap, NAK, resend burst), a congested flow (CE marks, CNPs, a throughput dip), a
timeout retransmission, a PFC storm, two QPs on one UDP source port and a few undecodable
frames.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from synthetic_tables import derive_flows, derive_tables

from rocetrace.analysis.finish import finished
from rocetrace.analysis.result import Analysis
from rocetrace.capture import CaptureInfo
from rocetrace.schema import PACKET_COLUMN_NAMES, PACKET_DTYPES

T0_NS = 1_700_000_000_000_000_000
SRC, DST = "10.0.0.1", "10.0.0.2"
WRITE_OPS = np.array([0x06, 0x07, 0x07, 0x08], dtype=np.uint8)  # FIRST, MIDDLE x2, LAST
OP_NAMES = {
    0x06: "RC_RDMA_WRITE_FIRST",
    0x07: "RC_RDMA_WRITE_MIDDLE",
    0x08: "RC_RDMA_WRITE_LAST",
    0x11: "RC_ACKNOWLEDGE",
    0x81: "CNP",
}


@dataclass
class _Flow:
    """Columns of one direction's frames, before they are merged into the packet table."""

    ts: np.ndarray
    psn: np.ndarray
    opcode: np.ndarray
    src_ip: str
    dst_ip: str
    dest_qp: int
    sport: int
    dscp: int = 26
    ecn: np.ndarray | int = 2
    syndrome: np.ndarray | None = None
    wire_len: int = 4158


def _data_flow(rng: np.random.Generator, n: int, duration_ns: int, kind: str) -> _Flow:
    """Timestamps and PSN offsets of a requester flow with one scripted event."""
    gap = np.full(n, duration_ns / n)
    offsets = np.arange(n, dtype=np.int64)
    mid = n // 2
    if kind == "gbn":  # PSN mid lost: 12 later packets arrive, NAK, resend mid..mid+12
        offsets = np.concatenate(
            [np.arange(mid), np.arange(mid + 1, mid + 13), np.arange(mid, n - 12)]
        )
    elif kind == "timeout":  # a stall of 2 ms then a resend of the last 8 PSNs
        offsets = np.concatenate([np.arange(mid), np.arange(mid - 8, n - 8)])
        gap[mid] += 2_000_000
    elif kind == "congested":  # DCQCN: rate halves in the middle third
        gap[n // 3 : 2 * n // 3] *= 2.0
    ts = np.cumsum(gap * rng.uniform(0.8, 1.2, n)).astype(np.int64)
    return _Flow(ts, offsets, WRITE_OPS[offsets % 4], SRC, DST, 0, 0)


def _ack_flow(data: _Flow, every: int, nak_at: int | None) -> _Flow:
    """Coalesced ACKs (one per `every` data packets) plus one NAK, in the reverse direction."""
    idx = np.arange(every - 1, data.ts.size, every)
    ts, psn = data.ts[idx] + 3_000, data.psn[idx].copy()
    syn = np.full(idx.size, 0x1F, dtype=np.uint8)
    if nak_at is not None:
        ts = np.append(ts, data.ts[nak_at + 1] + 2_000)
        psn = np.append(psn, (data.psn[nak_at - 1] + 1) % (1 << 24))
        syn = np.append(syn, np.uint8(0x60))  # NAK, PSN sequence error
    return _Flow(ts, psn, np.full(ts.size, 0x11, np.uint8), DST, SRC, 0, 0, 26, 2, syn, 62)


def _cnp_flow(rng: np.random.Generator, data: _Flow, window: tuple[int, int]) -> _Flow:
    """CNPs every ~50 us while the data flow is CE-marked, plus two with no mark."""
    ce_ts = data.ts[np.asarray(data.ecn) == 3]
    ts = np.unique(ce_ts // 50_000) * 50_000 + 50_000 if ce_ts.size else np.zeros(0, np.int64)
    extra = rng.integers(window[1], window[1] + 2_000_000, 2)
    ts = np.sort(np.concatenate([ts, extra])).astype(np.int64)
    return _Flow(
        ts,
        np.zeros(ts.size, np.int64),
        np.full(ts.size, 0x81, np.uint8),
        DST,
        SRC,
        0,
        0,
        48,
        1,
        None,
        62,
    )


def _flows(rng: np.random.Generator, n_packets: int, n_flows: int, duration_ns: int) -> list[_Flow]:
    kinds = ["gbn", "congested", "timeout", *["clean"] * max(n_flows - 3, 0)][:n_flows]
    weights = np.array([4.0, 3.0, 2.0, *[1.0] * (len(kinds) - 3)])[: len(kinds)]
    sizes = np.maximum((n_packets * 0.9 * weights / weights.sum()).astype(int), 64)
    flows: list[_Flow] = []
    for i, (kind, size) in enumerate(zip(kinds, sizes, strict=True)):
        data = _data_flow(rng, int(size), duration_ns, kind)
        base = (1 << 24) - size // 3 if kind == "clean" and i == 3 else 1000 * (i + 1)
        data.psn = (data.psn + base) % (1 << 24)
        data.dest_qp, data.sport = (
            0x100 + i,
            49152 if kind in ("timeout", "clean") and i < 4 else 50000 + i,
        )
        if kind == "congested":
            lo, hi = data.ts[size // 3], data.ts[2 * size // 3]
            ce = (data.ts >= lo) & (data.ts < hi) & (rng.random(size) < 0.2)
            data.ecn = np.where(ce, 3, 2)
        acks = _ack_flow(data, 16, size // 2 if kind == "gbn" else None)
        acks.dest_qp, acks.sport = 0x200 + i, data.sport
        flows += [data, acks]
        if kind == "congested":
            cnp = _cnp_flow(rng, data, (int(lo), int(hi)))
            cnp.dest_qp, cnp.sport = 0x200 + i, data.sport
            flows.append(cnp)
    return flows


def _pfc_frames(duration_ns: int) -> pd.DataFrame:
    """A storm on priority 3 (pause refreshed every 300 us for 120 ms) and one short pause on 0."""
    start = duration_ns // 2
    ts = np.arange(start, start + 120_000_000, 300_000, dtype=np.int64)
    n = ts.size
    frame = {
        "ts_ns": np.concatenate([ts, [ts[-1] + 300_000, start // 2]]),
        "pfc_class_enable": np.concatenate([np.full(n + 1, 1 << 3), [1]]),
        "pfc_quanta_3": np.concatenate([np.full(n, 0xFFFF), [0], [0]]),
        "pfc_quanta_0": np.concatenate([np.zeros(n + 1), [0x2000]]),
    }
    return pd.DataFrame(frame)


def _columns(flows: list[_Flow]) -> dict[str, np.ndarray]:
    """Concatenate the flows' frames into packet-table columns (flow_id by list position)."""
    ids = [-1 if f.opcode.size and f.opcode[0] == 0x81 else i for i, f in enumerate(flows)]
    rep = [f.ts.size for f in flows]

    def per_flow(get: object) -> np.ndarray:
        return np.concatenate([np.broadcast_to(get(f), f.ts.shape) for f in flows])  # type: ignore[operator]

    return {
        "ts_ns": np.concatenate([f.ts for f in flows]),
        "psn": np.concatenate([f.psn for f in flows]),
        "opcode": np.concatenate([f.opcode for f in flows]),
        "flow_id": np.repeat(ids, rep),
        "src_ip": np.repeat([f.src_ip for f in flows], rep),
        "dst_ip": np.repeat([f.dst_ip for f in flows], rep),
        "dest_qp": np.repeat([f.dest_qp for f in flows], rep),
        "udp_sport": np.repeat([f.sport for f in flows], rep),
        "dscp": np.repeat([f.dscp for f in flows], rep),
        "wire_len": np.repeat([f.wire_len for f in flows], rep),
        "ecn": per_flow(lambda f: f.ecn),
        "aeth_syndrome": per_flow(lambda f: -1 if f.syndrome is None else f.syndrome),
    }


def _packet_table(cols: dict[str, np.ndarray], pfc: pd.DataFrame, t0: int) -> pd.DataFrame:
    """The packet table with the schema's dtypes, frames numbered in time order."""
    roce = pd.DataFrame(cols)
    roce["encap"], roce["udp_dport"], roce["vlan_pcp"] = "roce_v2", 4791, 3
    roce["ip_version"] = 4
    pfc = pfc.assign(encap="pfc", wire_len=64, src_mac="b8:ce:f6:00:00:01", pfc_opcode=0x0101)
    pfc["dst_mac"], pfc["flow_id"] = "01:80:c2:00:00:01", -1
    bad = pd.DataFrame({"ts_ns": [1_000, 2_000, 3_000], "wire_len": 60, "flow_id": -1})
    bad["anomaly"] = ["truncated_bth", "truncated_bth", "unknown_opcode"]
    df = pd.concat([roce, pfc, bad], ignore_index=True).sort_values("ts_ns", kind="stable")
    df = df.reset_index(drop=True)
    df["ts_ns"] += t0
    df["frame"] = np.arange(1, len(df) + 1)
    df["cap_len"] = np.minimum(df["wire_len"], 128)
    df["opcode_name"] = df["opcode"].map(OP_NAMES)
    df.loc[df["aeth_syndrome"] < 0, "aeth_syndrome"] = np.nan
    df.loc[df["encap"] != "roce_v2", ["psn", "dest_qp", "opcode", "udp_sport"]] = np.nan
    out = pd.DataFrame(index=df.index)
    for name in PACKET_COLUMN_NAMES:
        src = df[name] if name in df else pd.Series(None, index=df.index, dtype="object")
        out[name] = src.astype(PACKET_DTYPES[name])  # type: ignore[call-overload]
    flow_id = df["flow_id"].where(df["flow_id"] >= 0)
    out["flow_id"] = flow_id.astype("Int32")
    out["ecn"] = out["ecn"]
    out["retransmitted"] = False
    out["ce"] = (out["ecn"] == 3).fillna(False).astype(bool)
    return out


def synthetic_analysis(n_packets: int = 20_000, n_flows: int = 6, seed: int = 1) -> Analysis:
    """A reproducible fake Analysis of about `n_packets` frames (at least 0.3 s long)."""
    rng = np.random.default_rng(seed)
    duration = max(300_000_000, n_packets * 1_000)
    flows = _flows(rng, n_packets, max(n_flows, 3), duration)
    packets = _packet_table(_columns(flows), _pfc_frames(duration), T0_NS)
    flows_df = derive_flows(packets)
    tables = derive_tables(packets, flows_df)
    capture = CaptureInfo(Path(f"synthetic-{n_packets}.pcap"), "pcap", False, link_types=[1])
    capture.packets = capture.roce_packets = len(packets)
    capture.first_ts_ns = int(packets["ts_ns"].iloc[0])
    capture.last_ts_ns = int(packets["ts_ns"].iloc[-1])
    capture.anomaly_counts = {"truncated_bth": 2, "unknown_opcode": 1}
    analysis = Analysis(
        packets=packets,
        flows=flows_df,
        capture=capture,
        options={"link_speed_bps": 100_000_000_000},
        **tables,
    )
    return finished(analysis)  # every table in its declared form, as analyze() gives it
