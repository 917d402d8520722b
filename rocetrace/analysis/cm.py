"""RDMA CM connections from the CM MADs of a capture: who connected which QPs, from which PSNs.

A BTH names only the destination QP; the CM exchange (IBTA 12.6) names both ends. REQ
(active side, "requester") carries its Local Comm ID, Local QPN and a Starting PSN; REP
(passive side, "responder") echoes that Comm ID as its Remote Comm ID and adds its own
Local Comm ID, QPN and Starting PSN. RTU, DREQ, DREP and REJ name the pair of Comm IDs.

Starting PSNs, as ib_cm uses them and as both real captures show: REQ's is the PSN the
requester expects to receive (the responder's send queue starts there), REP's is the
requester's send queue start. So the requester -> responder flow goes to `responder_qpn`
from `requester_starting_psn`, and the responder -> requester flow to `requester_qpn`,
its own requests from `responder_starting_psn` (ACKs and READ responses carry the
requester's PSNs).

Input contract (`MAD_DTYPES`), one row per CM MAD (management class 0x07) as captured:

| column | meaning |
|---|---|
| ts_ns | capture timestamp, ns since the epoch |
| src_ip, dst_ip | IP addresses of the MAD (str or categorical) |
| mad_attr_id | AttributeID: REQ 0x10 MRA 0x11 REJ 0x12 REP 0x13 RTU 0x14 DREQ 0x15 DREP 0x16 |
| cm_local_comm_id, cm_remote_comm_id | the message's Comm IDs (REQ has no remote one) |
| cm_local_qpn, cm_starting_psn | REQ and REP only, else NA |
| cm_reason | REJ only: the rejection reason code (IBTA table 112), else NA |

`MAD_COLUMNS` maps each column to its key in `rocetrace.dissectors.mad.decode_cm_mad`; a
vectorized decoder gathers the `cm_*` ones with `mad.PAIRING_FIELDS` and `mad.field_in_mad`.
Repeated MADs (CM retries) count once; a REP whose REQ was not captured still makes a
connection, with the requester's QPN and Starting PSN NA.
"""

from __future__ import annotations

import pandas as pd

from rocetrace.dissectors.mad import CmAttr
from rocetrace.schema import MAD_DTYPES
from rocetrace.schema.conform import empty_frame

MAD_COLUMNS: dict[str, str] = {
    "mad_attr_id": "mad_attribute_id",
    "cm_local_comm_id": "cm_local_comm_id",
    "cm_remote_comm_id": "cm_remote_comm_id",
    "cm_local_qpn": "cm_local_qpn",
    "cm_starting_psn": "cm_starting_psn",
    "cm_reason": "cm_reason",
}
"""Input column -> key of `decode_cm_mad`'s result."""

CONNECTION_DTYPES: dict[str, str] = {
    "requester_ip": "object",  # active side: sent the REQ
    "responder_ip": "object",  # passive side: sent the REP
    "requester_comm_id": "UInt32",
    "responder_comm_id": "UInt32",
    "requester_qpn": "UInt32",  # REQ Local QPN: dest_qp of the responder -> requester flow
    "responder_qpn": "UInt32",  # REP Local QPN: dest_qp of the requester -> responder flow
    "requester_starting_psn": "UInt32",  # first PSN the requester sends (from the REP)
    "responder_starting_psn": "UInt32",  # first PSN the responder sends (from the REQ)
    "connect_ts_ns": "Int64",  # first REQ (or REP, when no REQ was captured)
    "established": "boolean",  # an RTU was seen
    "disconnected": "boolean",  # a DREQ or DREP was seen
    "disconnect_ts_ns": "Int64",  # first DREQ or DREP
    "rejected": "boolean",  # a REJ was seen
    "reject_reason": "UInt16",
}
_KEY = ["requester_ip", "responder_ip", "requester_comm_id"]


def empty_mads() -> pd.DataFrame:
    """A MAD table with no rows and the contract's dtypes."""
    return empty_frame(MAD_DTYPES)


def empty_connections() -> pd.DataFrame:
    """A connections table with no rows (what a capture without CM MADs has)."""
    return empty_frame(CONNECTION_DTYPES)


def cm_connections(mads: pd.DataFrame | None) -> pd.DataFrame:
    """One row per CM connection (REQ/REP pair), in order of connection, `CONNECTION_DTYPES`."""
    if mads is None or mads.empty:
        return empty_connections()
    mads = _normalized(mads)
    conns = _handshakes(mads)
    conns["established"] = _matched(conns, mads, (CmAttr.RTU,))["ts_ns"].notna()
    closing = _matched(conns, mads, (CmAttr.DREQ, CmAttr.DREP))
    conns["disconnected"], conns["disconnect_ts_ns"] = closing["ts_ns"].notna(), closing["ts_ns"]
    rejects = _matched(conns, mads, (CmAttr.REJ,))
    conns["rejected"], conns["reject_reason"] = rejects["ts_ns"].notna(), rejects["cm_reason"]
    conns = conns.sort_values("connect_ts_ns", kind="stable").reset_index(drop=True)
    return conns[list(CONNECTION_DTYPES)].astype(CONNECTION_DTYPES)


def _normalized(mads: pd.DataFrame) -> pd.DataFrame:
    """Contract dtypes (IPs as plain strings, so categoricals of two captures still merge)."""
    out = mads[list(MAD_DTYPES)].copy()
    for ip in ("src_ip", "dst_ip"):
        out[ip] = out[ip].astype(str)
    return out.astype(MAD_DTYPES)


def _of(mads: pd.DataFrame, attr: CmAttr) -> pd.DataFrame:
    return mads[mads["mad_attr_id"] == attr]


def _handshakes(mads: pd.DataFrame) -> pd.DataFrame:
    """REQs outer-joined with the REPs that answer them (first copy of each)."""
    req = _of(mads, CmAttr.REQ).rename(
        columns={"src_ip": "requester_ip", "dst_ip": "responder_ip",
                 "cm_local_comm_id": "requester_comm_id", "cm_local_qpn": "requester_qpn",
                 "cm_starting_psn": "responder_starting_psn", "ts_ns": "req_ts_ns"}
    )  # fmt: skip
    rep = _of(mads, CmAttr.REP).rename(
        columns={"dst_ip": "requester_ip", "src_ip": "responder_ip",
                 "cm_remote_comm_id": "requester_comm_id", "cm_local_comm_id": "responder_comm_id",
                 "cm_local_qpn": "responder_qpn", "cm_starting_psn": "requester_starting_psn",
                 "ts_ns": "rep_ts_ns"}
    )  # fmt: skip
    req = req[[*_KEY, "requester_qpn", "responder_starting_psn", "req_ts_ns"]]
    rep = rep[[*_KEY, "responder_comm_id", "responder_qpn", "requester_starting_psn", "rep_ts_ns"]]
    both = req.drop_duplicates(_KEY).merge(rep.drop_duplicates(_KEY), on=_KEY, how="outer")
    both["connect_ts_ns"] = both["req_ts_ns"].fillna(both["rep_ts_ns"])
    return both.reset_index(drop=True)


def _matched(conns: pd.DataFrame, mads: pd.DataFrame, attrs: tuple[CmAttr, ...]) -> pd.DataFrame:
    """Per connection (index-aligned), the first MAD of `attrs` about it, NA rows if none.

    Either side may send these: from the requester its Local Comm ID is the requester's,
    from the responder its Remote Comm ID is.
    """
    events = mads[mads["mad_attr_id"].isin([int(a) for a in attrs])]
    by_requester = events.rename(
        columns={"src_ip": "requester_ip", "dst_ip": "responder_ip",
                 "cm_local_comm_id": "requester_comm_id"}
    )  # fmt: skip
    by_responder = events.rename(
        columns={"dst_ip": "requester_ip", "src_ip": "responder_ip",
                 "cm_remote_comm_id": "requester_comm_id"}
    )  # fmt: skip
    cols = [*_KEY, "ts_ns", "cm_reason"]
    oriented = pd.concat([by_requester[cols], by_responder[cols]], ignore_index=True)
    keyed = conns[_KEY].reset_index().merge(oriented, on=_KEY, how="inner")
    first = keyed.sort_values("ts_ns", kind="stable").drop_duplicates("index")
    return first.set_index("index")[["ts_ns", "cm_reason"]].reindex(conns.index)
