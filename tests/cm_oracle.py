"""CM MADs of a capture two ways: tshark's CM dissector, and our `decode_cm_mad` over dpkt.

Values are keyed by our field names (`mad_*` MAD header, `cm_*` CM message) so the two can
be compared field by field, and turned into the `cm_connections` input table.
"""

from __future__ import annotations

import ipaddress
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from oracle import _roce_transport

from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.deth import DETH
from rocetrace.dissectors.mad import GSI_QP, CmAttr, decode_cm_mad

# Not compared: tshark 4.0 reads a REQ path's Flow Label from 2 bytes (the top 12 of its 20
# bits) and its Packet Rate from the wrong byte; test_cm_mads checks them by the spec.
_REQ_PATH = {
    "local_port_lid": "locallid", "remote_port_lid": "remotelid", "traffic_class": "tfcclass",
    "hop_limit": "hoplim", "sl": "sl", "subnet_local": "subnetlocal",
    "local_ack_timeout": "localacktout",
}  # fmt: skip
# our field -> tshark 4.0 field, per CM message (`tshark -G fields | grep infiniband.cm`)
TSHARK_CM: dict[CmAttr, dict[str, str]] = {
    CmAttr.REQ: {
        "local_comm_id": "req", "service_id": "req.serviceid",
        "local_ca_guid": "req.localcaguid", "local_q_key": "req.localqkey",
        "local_qpn": "req.localqpn", "responder_resources": "req.responderres",
        "local_eecn": "req.localeecn", "initiator_depth": "req.initdepth",
        "remote_eecn": "req.remoteeecn", "remote_cm_response_timeout": "req.remoteresptout",
        "transport_service_type": "req.transpsvctype", "end_to_end_flow_control":
        "req.e2eflowctrl", "starting_psn": "req.startpsn", "local_cm_response_timeout":
        "req.localresptout", "retry_count": "req.retrcount", "partition_key": "req.pkey",
        "path_packet_payload_mtu": "req.pppmtu", "rdc_exists": "req.rdcexist",
        "rnr_retry_count": "req.rnrretrcount", "max_cm_retries": "req.maxcmretr",
        "srq": "req.srq", "extended_transport_type": "req.ext_transport",
        **{f"primary_{k}": f"req.prim_{v}" for k, v in _REQ_PATH.items()},
        "primary_local_port_gid": "req.prim_localgid",
        "primary_remote_port_gid": "req.prim_remotegid",
    },
    CmAttr.REP: {
        "local_comm_id": "rep", "remote_comm_id": "rep.remotecommid",
        "local_q_key": "rep.localqkey", "local_qpn": "rep.localqpn",
        "local_ee_context": "rep.localeecn", "starting_psn": "rep.startpsn",
        "responder_resources": "rep.respres", "initiator_depth": "rep.initdepth",
        "target_ack_delay": "rep.tgtackdelay", "failover_accepted": "rep.failoveracc",
        "end_to_end_flow_control": "rep.e2eflowctrl", "rnr_retry_count": "rep.rnrretrcount",
        "srq": "rep.srq", "local_ca_guid": "rep.localcaguid",
    },
    CmAttr.RTU: {"local_comm_id": "rtu.localcommid", "remote_comm_id": "rtu.remotecommid"},
    CmAttr.DREQ: {
        "local_comm_id": "dreq.localcommid", "remote_comm_id": "dreq.remotecommid",
        "remote_qpn_eecn": "req.remoteqpneecn",  # sic: tshark files it under req
    },
    CmAttr.DREP: {"local_comm_id": "drsp.localcommid", "remote_comm_id": "drsp.remotecommid"},
    CmAttr.REJ: {
        "local_comm_id": "rej.localcommid", "remote_comm_id": "rej.remotecommid",
        "message_rejected": "rej.msgrej", "reject_info_length": "rej.rejinfolen",
        "reason": "rej.reason",
    },
}  # fmt: skip
TSHARK_MAD = {
    "base_version": "baseversion", "mgmt_class": "mgmtclass", "class_version": "classversion",
    "method": "method", "status": "status", "class_specific": "classspecific",
    "transaction_id": "transactionid", "attribute_id": "attributeid",
    "attribute_modifier": "attributemodifier",
}  # fmt: skip
_GID_IPV4 = {"primary_local_port_gid", "primary_remote_port_gid"}


def _tshark_columns() -> list[tuple[str, str]]:
    """(our key, tshark field) for the MAD header and every CM message field, in order."""
    cols = [(f"mad_{k}", f"infiniband.mad.{v}") for k, v in TSHARK_MAD.items()]
    for attr, fields in TSHARK_CM.items():
        cols += [(f"{attr.name}:cm_{k}", f"infiniband.cm.{v}") for k, v in fields.items()]
    cols += [
        (f"REQ:cm_{g}_ipv4", f"infiniband.cm.{TSHARK_CM[CmAttr.REQ][g]}_ipv4") for g in _GID_IPV4
    ]
    return cols


def tshark_cm_mads(path: Path, tshark: str = "tshark") -> dict[int, dict[str, int]]:
    """{frame: {key: value}} of every MAD tshark decodes (CM fields of its own message)."""
    cols = _tshark_columns()
    cmd = [tshark, "-n", "-r", str(path), "-Y", "infiniband.mad", "-T", "fields"]
    cmd += ["-E", "separator=\t", "-E", "occurrence=f", "-e", "frame.number"]
    for _, name in cols:
        cmd += ["-e", name]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout
    frames = {}
    for line in out.splitlines():
        number, *texts = line.split("\t")
        frames[int(number)] = _tshark_values(cols, texts)
    return frames


def _tshark_values(cols: list[tuple[str, str]], texts: list[str]) -> dict[str, int]:
    values: dict[str, int] = {}
    for (key, _), text in zip(cols, texts, strict=True):
        if not text:
            continue
        key = key.split(":", 1)[-1]
        values[key] = int(ipaddress.ip_address(text)) if "_gid" in key else int(text, 0)
    if "mad_method" in values:  # tshark shows the R bit and the method as one byte
        values["mad_r"], values["mad_method"] = (
            values["mad_method"] >> 7,
            values["mad_method"] & 0x7F,
        )
    return values


def mismatches(ours: dict[str, int], theirs: dict[str, int], keys: list[str]) -> list[str]:
    """ "key: ours=X tshark=Y" for each disagreement; a GID tshark shows as IPv4 (RoCE, an
    IPv4-mapped or zero GID) is compared on its low 32 bits."""
    problems = []
    for key in keys:
        mine, other = ours.get(key), theirs.get(key)
        if key.endswith("_gid") and f"{key}_ipv4" in theirs and mine is not None:
            mine, other = mine & 0xFFFFFFFF, theirs[f"{key}_ipv4"]
        if mine != other:
            problems.append(f"{key}: ours={mine} tshark={other}")
    return problems


@dataclass
class Mad:
    """One MAD of a capture as our reference decoder reads it."""

    frame: int
    ts_ns: int
    src_ip: str
    dst_ip: str
    values: dict[str, int]
    raw: bytes  # the 256 MAD bytes


def reference_cm_mads(path: Path) -> list[Mad]:
    """UD packets to QP1 decoded with `decode_cm_mad` (links parsed by dpkt, not our code)."""
    import dpkt

    mads = []
    with path.open("rb") as fh:
        for number, (ts, buf) in enumerate(dpkt.pcap.UniversalReader(fh), start=1):
            eth = dpkt.ethernet.Ethernet(buf)
            transport = _roce_transport(eth)
            if transport is None or BTH.decode(transport)["dest_qp"] != GSI_QP:
                continue
            payload = transport[BTH.size + DETH.size : -4]
            src, dst = (_ip_text(eth.data.src), _ip_text(eth.data.dst))
            mads.append(
                Mad(number, round(ts * 1_000_000_000), src, dst, decode_cm_mad(payload), payload)
            )
    return mads


def _ip_text(raw: bytes) -> str:
    return str(ipaddress.ip_address(raw))


def mad_table(mads: list[Mad]) -> pd.DataFrame:
    """The `cm_connections` input table (contract of rocetrace.analysis.cm) from MADs."""
    from rocetrace.analysis.cm import MAD_COLUMNS, empty_mads

    rows = [
        {"ts_ns": m.ts_ns, "src_ip": m.src_ip, "dst_ip": m.dst_ip}
        | {col: m.values.get(key) for col, key in MAD_COLUMNS.items()}
        for m in mads
    ]
    return pd.concat([empty_mads(), pd.DataFrame(rows)]).astype(empty_mads().dtypes)
