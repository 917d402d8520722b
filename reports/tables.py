"""The report's tables, built from the analysis tables as (text, sort key) cells.

Why cells carry a sort key: the page sorts in the browser with a few lines of vanilla JS;
the key keeps numbers numeric and PSNs/QPs sortable while the text stays readable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup, escape

from rocetrace.flowkey import hex_qp
from rocetrace.reports.data import flow_keys, ints, seconds

Cell = tuple[str, Any]


@dataclass
class Table:
    """A sortable, filterable HTML table."""

    id: str
    headers: list[str]
    rows: list[list[Cell]]
    numeric: set[int] = field(default_factory=set)
    note: str = ""
    highlight: list[bool] = field(default_factory=list)  # per row: deserves a look


def num(v: Any, fmt: str = "{:,}") -> Cell:
    """A numeric cell; nulls show as an en dash and sort first."""
    if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return ("–", -1)
    return (fmt.format(v), v)


def text(v: Any) -> Cell:
    s = "–" if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else str(v)
    return (s, s)


FLOW_COLUMNS = (
    ("flow", None),
    ("role", None),
    ("transport", None),
    ("peer QP", "peer_qp"),
    ("packets", "packets"),
    ("bytes", "bytes"),
    ("first PSN", "first_psn"),
    ("last PSN", "last_psn"),
    ("retransmitted", "retransmitted_packets"),
    ("PSN gaps", "psn_gaps"),
    ("NAKs (seq)", "naks_psn_sequence_error"),
    ("RNR NAKs", "naks_rnr"),
    ("timeouts", "timeouts"),
    ("mode", None),
    ("CE marks", "ecn_ce_packets"),
    ("CNPs", "cnps"),
    ("CNPs w/o CE", "cnps_without_ce"),
)
TROUBLE = ("retransmitted_packets", "psn_gaps", "naks_psn_sequence_error", "naks_rnr", "timeouts")


def flows_table(flows: pd.DataFrame, graphed: set[int], max_rows: int = 5_000) -> Table:
    """Every flow (up to max_rows, busiest first); flows with a PSN graph link to it."""
    keys = flow_keys(flows)
    shown = flows.sort_values("packets", ascending=False, kind="stable").head(max_rows)
    rows, hot = [], []
    for r in shown.to_dict("records"):
        fid = int(r["flow_id"])
        key = keys.get(fid, str(fid))
        link = Markup(f'<a href="#psn-{fid}">{escape(key)}</a>') if fid in graphed else key
        cells: list[Cell] = [(link, key), text(r.get("role")), text(r.get("transport"))]
        cells.append(_qp(r.get("peer_qp")))
        for _, col in FLOW_COLUMNS[4:13]:
            cells.append(num(r.get(col)))
        cells.append(text(r.get("retransmission_mode")))
        cells += [num(r.get(c)) for c in ("ecn_ce_packets", "cnps", "cnps_without_ce")]
        rows.append(cells)
        hot.append(any((r.get(c) or 0) > 0 for c in TROUBLE))
    note = f"{len(flows) - len(shown)} quieter flows not listed" if len(flows) > len(shown) else ""
    numeric = set(range(3, 13)) | {14, 15, 16}
    return Table("flows", [h for h, _ in FLOW_COLUMNS], rows, numeric, note, hot)


def qos_table(flows: pd.DataFrame, cnps: pd.DataFrame) -> Table:
    """DSCP / PCP / ECN per flow and the class of the CNPs that throttle it."""
    keys = flow_keys(flows)
    cnp_dscp = (
        pd.Series(ints(cnps["dscp"]), index=ints(cnps["flow_id"]))
        .groupby(level=0)
        .agg(lambda s: ",".join(str(v) for v in sorted(set(s))))
        if len(cnps) and "dscp" in cnps
        else pd.Series(dtype=str)
    )
    rows, hot = [], []
    for r in flows.to_dict("records"):
        fid = int(r["flow_id"])
        dscp = r.get("dscp")
        prio = None if dscp is None or dscp is pd.NA else int(dscp) >> 3
        cnp = cnp_dscp.get(fid)
        ecn_raw = r.get("ecn_capable")
        ecn_ok = None if ecn_raw is None or ecn_raw is pd.NA else bool(ecn_raw)
        cnp_low = (
            cnp is not None
            and dscp is not None
            and min(int(v) for v in cnp.split(",")) <= int(dscp)
        )
        rows.append(
            [
                text(keys.get(fid)),
                text(r.get("role")),
                num(r.get("udp_sport"), "{}"),
                num(dscp, "{}"),
                _pcp(r.get("vlan_pcp")),
                num(prio, "{}"),
                text("–" if ecn_ok is None else "yes" if ecn_ok else "NO"),
                text(cnp),
            ]
        )
        hot.append(ecn_ok is False or cnp_low)
    headers = ["flow", "role", "UDP sport", "DSCP", "PCP", "DSCP>>3", "ECN-capable", "CNP DSCP"]
    note = "Highlighted: not ECN-capable, or CNPs not in a higher class than the data."
    return Table("qos", headers, rows, {2, 3, 4, 5}, note, hot)


def _qp(value: Any) -> Cell:
    """A QP cell in hex, as Wireshark and NIC tools show QPs (sorted by number)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ("–", -1)
    return (hex_qp(int(value)), int(value))


def _pcp(value: Any) -> Cell:
    """A PCP cell: "untagged" for frames without an 802.1Q tag (null, or -1 of old tables)."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ("untagged", -1)
    return ("untagged", -1) if int(value) < 0 else (str(int(value)), int(value))


def entropy_table(flows: pd.DataFrame) -> Table:
    """UDP source ports per host pair: ECMP spreads QPs only if their source ports differ."""
    headers = ["host pair", "QPs", "distinct source ports", "entropy (bits)"]
    headers += ["most QPs on one port", "that port"]
    note = "Highlighted: several QPs share one UDP source port, so ECMP hashes them onto one path."
    if flows.empty or "udp_sport" not in flows:
        return Table("entropy", headers, [], set(), "No UDP source ports in these results.")
    f = flows.assign(_sport=ints(flows["udp_sport"]))
    rows, hot = [], []
    for (src, dst), g in f.groupby([f["src_ip"].astype(str), f["dst_ip"].astype(str)]):
        ports = g["_sport"].value_counts()
        p = ports.to_numpy() / ports.sum()
        bits = abs(float(-(p * np.log2(p)).sum()))  # one port: 0 bits, not -0.00
        worst = int(ports.iloc[0])
        rows.append(
            [
                text(f"{src} → {dst}"),
                num(len(g)),
                num(len(ports)),
                num(bits, "{:.2f}"),
                num(worst),
                text(int(ports.index[0]) if worst > 1 else "–"),
            ]
        )
        hot.append(worst > 1)
    return Table("entropy", headers, rows, {1, 2, 3, 4}, note, hot)


def episodes_table(
    retx: pd.DataFrame, keys: pd.Series, origin_ns: int, max_rows: int = 500
) -> Table:
    """Retransmission episodes: when, why, from which PSN, how many packets, first frame."""
    rows = []
    for r in retx.head(max_rows).to_dict("records"):
        ts = seconds(r.get("ts"))
        rel = None if ts is None else (ts * 1e9 - origin_ns) / 1e6
        rows.append(
            [
                text(keys.get(int(r["flow_id"])) if r.get("flow_id") is not pd.NA else None),
                num(rel, "{:.4f}"),
                text(r.get("trigger")),
                num(r.get("nak_psn"), "{}"),
                num(r.get("start_psn"), "{}"),
                num(r.get("packets")),
                text(r.get("mode")),
                num(None if r.get("delay_s") is None else r["delay_s"] * 1e6, "{:,.1f}"),
                num(r.get("first_frame"), "{}"),
            ]
        )
    note = f"first {max_rows} of {len(retx)} episodes" if len(retx) > max_rows else ""
    headers = [
        "flow",
        "time (ms)",
        "trigger",
        "NAK PSN",
        "start PSN",
        "packets",
        "mode",
        "delay (µs)",
        "first frame",
    ]
    return Table("episodes", headers, rows, {1, 3, 4, 5, 7, 8}, note)


def pfc_table(pfc: pd.DataFrame) -> Table:
    """Per priority: pause and resume frames, total quanta, total time paused (as long as
    each pause held: the figure the JSON summary and the findings give)."""
    held = "held_s" if "held_s" in pfc else "paused_s"
    pause = pd.Series(pfc["pause"]).fillna(False).astype(bool)
    g = pfc.assign(_p=ints(pfc["priority"]), _pause=pause).groupby("_p")
    rows = [
        [
            num(p, "{}"),
            num(int(x["_pause"].sum())),
            num(int((~x["_pause"]).sum())),
            num(int(ints(x["quanta"], 0).sum())),
            num(float(pd.to_numeric(x[held]).sum()) * 1e3, "{:,.3f}"),
        ]
        for p, x in g
    ]
    headers = ["priority", "pause frames", "resume frames", "quanta", "paused (ms)"]
    return Table("pfc", headers, rows, {0, 1, 2, 3, 4})
