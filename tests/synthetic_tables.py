"""The analysis tables of the synthetic capture, derived from its packet table.

Only for `synthetic_analysis`: a stand-in for rocetrace.analysis with the same columns
(docs/analysis-tables.md), computed from the scripted scenario, not a general analysis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.psn import delta as signed_delta
from rocetrace.psn import running_max_before, unwrap

NAK_KINDS = ("psn_sequence_error", "rnr", "invalid_request", "remote_access_error")
NAK_COLUMNS = [f"naks_{k}" for k in (*NAK_KINDS, "remote_operational_error")]


def _mark_retransmitted(packets: pd.DataFrame) -> None:
    """Set `retransmitted`: PSN not beyond the highest PSN already seen in the flow."""
    rows = packets[packets["flow_id"].notna() & (packets["opcode"] != 0x11)]
    rows = rows.sort_values(["flow_id", "ts_ns"], kind="stable")
    groups = rows["flow_id"].to_numpy(dtype=np.int64)
    u = unwrap(rows["psn"].to_numpy(dtype=np.int64), groups)
    packets.loc[rows.index, "retransmitted"] = u <= running_max_before(u, groups)


def derive_flows(packets: pd.DataFrame) -> pd.DataFrame:
    """The flows table: per-flow counts and QoS from the packet table."""
    _mark_retransmitted(packets)
    p = packets[packets["flow_id"].notna()].copy()
    p["fid"] = p["flow_id"].astype(int)
    p = p.sort_values(["fid", "ts_ns"], kind="stable")
    g = p.groupby("fid", sort=True)
    flows = g.agg(
        src_ip=("src_ip", "first"),
        dst_ip=("dst_ip", "first"),
        dest_qp=("dest_qp", "first"),
        packets=("frame", "size"),
        bytes=("wire_len", "sum"),
        first_psn=("psn", "first"),
        last_psn=("psn", "last"),
        retransmitted_packets=("retransmitted", "sum"),
        ecn_ce_packets=("ce", "sum"),
        udp_sport=("udp_sport", "first"),
        dscp=("dscp", "first"),
        vlan_pcp=("vlan_pcp", "first"),
        first_ts_ns=("ts_ns", "min"),
        last_ts_ns=("ts_ns", "max"),
        ecn_min=("ecn", "min"),
        opcode=("opcode", "first"),
    ).reset_index(names="flow_id")
    flows["role"] = np.where(flows["opcode"] == 0x11, "responder", "requester")
    flows["peer_qp"] = flows["dest_qp"].astype("int64") ^ 0x300  # 0x10x <-> 0x20x
    flows["transport"], flows["ecn_capable"] = "RC", flows["ecn_min"] > 0
    step = signed_delta(p["psn"].to_numpy(np.int64)[1:], p["psn"].to_numpy(np.int64)[:-1])
    jump = np.append(False, (step > 1) & (p["fid"].to_numpy()[1:] == p["fid"].to_numpy()[:-1]))
    flows["psn_gaps"] = flows["flow_id"].map(p[jump].groupby("fid").size()).fillna(0).astype(int)
    flows["psn_gaps"] = flows["psn_gaps"].where(flows["role"] == "requester", 0)
    return flows.drop(columns=["ecn_min", "opcode"])


def _naks(packets: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    nak = packets[(packets["aeth_syndrome"] == 0x60).fillna(False)]
    about = nak["dest_qp"].astype("int64").map(flows.set_index("dest_qp")["peer_qp"])
    fid = about.map(flows.set_index("dest_qp")["flow_id"])
    return pd.DataFrame(
        {
            "frame": nak["frame"].astype("int64"),
            "ts_ns": nak["ts_ns"],
            "flow_id": fid.astype("Int32"),
            "kind": "psn_sequence_error",
            "psn": nak["psn"].astype("int64"),
            "rnr_timer_us": np.nan,
        }
    ).reset_index(drop=True)


def _cnps(packets: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    cnp = packets[(packets["opcode"] == 0x81).fillna(False)]
    by_qp = flows.set_index("dest_qp")
    fid = cnp["dest_qp"].astype("int64").map(by_qp["peer_qp"]).map(by_qp["flow_id"])
    out = pd.DataFrame(
        {
            "frame": cnp["frame"].astype("int64"),
            "ts_ns": cnp["ts_ns"],
            "flow_id": fid.astype("Int32"),
            "src_ip": cnp["src_ip"].astype(str),
            "dst_ip": cnp["dst_ip"].astype(str),
            "dest_qp": cnp["dest_qp"].astype("int64"),
            "dscp": cnp["dscp"].astype("int64"),
        }
    ).reset_index(drop=True)
    ce_ts = packets.loc[packets["ce"], "ts_ns"].to_numpy()
    prev = np.append(0, out["ts_ns"].to_numpy()[:-1])
    count = np.searchsorted(ce_ts, out["ts_ns"]) - np.searchsorted(ce_ts, prev)
    out["ce_before"] = count > 0
    return out


def _pfc(packets: pd.DataFrame, link_bps: float) -> pd.DataFrame:
    pf = packets[packets["encap"] == "pfc"]
    parts = []
    for prio in range(8):
        enabled = (pf["pfc_class_enable"].to_numpy(np.int64) >> prio) & 1 == 1
        rows = pf[enabled]
        quanta = rows[f"pfc_quanta_{prio}"].fillna(0).astype("int64")
        parts.append(
            pd.DataFrame(
                {
                    "frame": rows["frame"].astype("int64"),
                    "ts_ns": rows["ts_ns"],
                    "src_mac": rows["src_mac"].astype(str),
                    "priority": prio,
                    "quanta": quanta,
                    "pause": quanta > 0,
                    "paused_s": quanta * 512 / link_bps,
                }
            )
        )
    return pd.concat(parts).sort_values("ts_ns").reset_index(drop=True)


def _retransmissions(
    packets: pd.DataFrame, flows: pd.DataFrame, naks: pd.DataFrame
) -> pd.DataFrame:
    """One episode per run of retransmitted packets of a flow."""
    r = packets[packets["retransmitted"]].sort_values(["flow_id", "ts_ns"])
    fid = r["flow_id"].to_numpy(np.int64)
    frame = r["frame"].to_numpy(np.int64)
    new = np.ones(len(r), dtype=bool)
    new[1:] = (fid[1:] != fid[:-1]) | (frame[1:] - frame[:-1] > 200)
    episode = np.cumsum(new)
    r = r.assign(episode=episode)
    g = r.groupby("episode")
    ep = g.agg(
        flow_id=("flow_id", "first"),
        ts_ns=("ts_ns", "first"),
        first_frame=("frame", "first"),
        start_psn=("psn", "first"),
        packets=("frame", "size"),
    ).reset_index(drop=True)
    keys = flows.set_index("flow_id")
    for col in ("src_ip", "dst_ip", "dest_qp"):
        ep[col] = ep["flow_id"].map(keys[col])
    nak_by_flow = naks.drop_duplicates("flow_id").set_index("flow_id")
    has_nak = ep["flow_id"].isin(nak_by_flow.index)
    ep["trigger"] = np.where(has_nak, "nak", "timeout")
    ep["nak_psn"] = ep["flow_id"].map(nak_by_flow["psn"]).where(has_nak).astype("Int64")
    ep["mode"] = np.where(has_nak, "go-back-n", "go-back-n")
    nak_ts = ep["flow_id"].map(nak_by_flow["ts_ns"])
    ep["delay_s"] = np.where(has_nak, (ep["ts_ns"] - nak_ts) / 1e9, 0.002)
    ep["ts"] = ep["ts_ns"] / 1e9
    return ep.drop(columns=["ts_ns"])


def _findings(
    flows: pd.DataFrame, retx: pd.DataFrame, cnps: pd.DataFrame, pfc: pd.DataFrame
) -> pd.DataFrame:
    """The findings a real analysis would report for this scenario."""
    key = {
        int(f["flow_id"]): f"{f['src_ip']}>{f['dst_ip']}/{f['dest_qp']}"
        for f in flows.to_dict("records")
    }
    rows: list[tuple[Any, ...]] = []
    for e in retx.to_dict("records"):
        if e["trigger"] == "nak":
            code = "psn_sequence_error"
            msg = f"PSN {e['nak_psn']} was lost; the peer NAKed it, {e['packets']} packets resent"
        else:
            code = "timeout_retransmission"
            msg = f"{e['packets']} packets resent after {e['delay_s'] * 1e3:.1f} ms of silence"
        rows.append(("warning", code, msg, key[int(e["flow_id"])], e["ts"], [e["first_frame"]]))
    storm = pfc[pfc["pause"] & (pfc["priority"] == 3)]
    if len(storm):
        span = (storm["ts_ns"].iloc[-1] - storm["ts_ns"].iloc[0]) / 1e6
        msg = f"priority 3 was kept paused for {span:.0f} ms by {storm['src_mac'].iloc[0]}"
        first = storm["ts_ns"].iloc[0] / 1e9
        rows.append(("critical", "pfc_storm", msg, None, first, storm["frame"].head(5).tolist()))
    lone = cnps[~cnps["ce_before"]]
    if len(lone):
        msg = f"{len(lone)} CNPs with no CE-marked packet before them (out-of-sequence?)"
        flow, first = key.get(int(lone["flow_id"].iloc[0])), lone["ts_ns"].iloc[0] / 1e9
        rows.append(("info", "cnp_without_ce", msg, flow, first, lone["frame"].tolist()))
    msg = "2 QPs of 10.0.0.1>10.0.0.2 share UDP source port 49152"
    rows.append(("warning", "udp_sport_collision", msg, None, None, []))
    cols = ["severity", "code", "message", "flow", "first_ts", "frames"]
    return pd.DataFrame(rows, columns=cols)


def derive_tables(packets: pd.DataFrame, flows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """naks, cnps, pfc, retransmissions, findings; completes the flows' columns."""
    naks, cnps = _naks(packets, flows), _cnps(packets, flows)
    pfc = _pfc(packets, 100e9)
    retx = _retransmissions(packets, flows, naks)
    for col in NAK_COLUMNS:
        flows[col] = 0
    flows["naks_psn_sequence_error"] = (
        flows["flow_id"].map(naks.groupby("flow_id").size()).fillna(0).astype(int)
    )
    flows["cnps"] = flows["flow_id"].map(cnps.groupby("flow_id").size()).fillna(0).astype(int)
    lone = cnps[~cnps["ce_before"]].groupby("flow_id").size()
    flows["cnps_without_ce"] = flows["flow_id"].map(lone).fillna(0).astype(int)
    eps = retx.groupby("flow_id")
    flows["retransmission_mode"] = flows["flow_id"].map(eps["mode"].first()).fillna("none")
    timeouts = retx[retx["trigger"] == "timeout"].groupby("flow_id").size()
    flows["timeouts"] = flows["flow_id"].map(timeouts).fillna(0).astype(int)
    flows["flow_id"] = flows["flow_id"].astype("Int32")
    findings = _findings(flows, retx, cnps, pfc)
    return {"naks": naks, "cnps": cnps, "pfc": pfc, "retransmissions": retx, "findings": findings}
