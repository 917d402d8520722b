"""CM MADs: our tables against tshark on the real captures, the Scapy layers, the spec."""

from __future__ import annotations

from pathlib import Path

import pytest
from cm_oracle import TSHARK_CM, Mad, mismatches, reference_cm_mads, tshark_cm_mads
from oracle import reference_frames
from scapy.layers.l2 import Ether
from scapy.packet import Packet

from rocetrace.dissectors.header import NeedData
from rocetrace.dissectors.icrc import compute_icrc, stored_icrc
from rocetrace.dissectors.mad import (
    CM_MESSAGES,
    CM_REJ,
    CM_REP,
    CM_REQ,
    GSI_Q_KEY,
    MAD_HEADER,
    PAIRING_FIELDS,
    CmAttr,
    decode_cm_mad,
    encode_cm_mad,
    field_in_mad,
)
from rocetrace.dissectors.scapy_factory import cm_mad
from rocetrace.dissectors.scapy_layers import DETH, MAD, CmMessage

CM_CAPTURES = ("rxe_rdma_cm", "rxe_cm_write_read")
# per capture: REQ, REP, RTU, DREQ, DREP (rdma_cm: 2 connections, 3 DREQs and 3 DREPs)
EXPECTED_KINDS = {"rxe_rdma_cm": [2, 2, 2, 3, 3], "rxe_cm_write_read": [1, 1, 1, 1, 1]}
ACK, READ_RESPONSES, ATOMIC_ACK = 0x11, range(0x0D, 0x11), 0x12


def _capture(real_captures: list[Path], name: str) -> Path:
    return next(p for p in real_captures if p.stem == name)


@pytest.mark.parametrize("name", CM_CAPTURES)
def test_every_cm_mad_field_agrees_with_tshark(
    real_captures: list[Path], tshark: str, name: str
) -> None:
    path = _capture(real_captures, name)
    theirs = tshark_cm_mads(path, tshark)
    ours = {m.frame: m.values for m in reference_cm_mads(path)}
    assert sorted(ours) == sorted(theirs)
    problems, compared = [], 0
    for frame, values in ours.items():
        attr = CmAttr(values["mad_attribute_id"])
        keys = [f"mad_{f}" for f in ("base_version", "mgmt_class", "class_version", "r")]
        keys += ["mad_method", "mad_transaction_id", "mad_attribute_id"]
        keys += [f"cm_{k}" for k in TSHARK_CM[attr]]
        compared += len(keys)
        problems += [
            f"frame {frame} {attr.name} {p}" for p in mismatches(values, theirs[frame], keys)
        ]
    assert not problems, "\n".join(problems)
    kinds = [sum(CmAttr(v["mad_attribute_id"]) == a for v in ours.values()) for a in _KINDS]
    assert kinds == EXPECTED_KINDS[name] and compared > 8 * len(ours)


_KINDS = (CmAttr.REQ, CmAttr.REP, CmAttr.RTU, CmAttr.DREQ, CmAttr.DREP)


@pytest.mark.parametrize("name", CM_CAPTURES)
def test_req_and_rep_name_the_qps_and_psns_of_the_rc_traffic(
    real_captures: list[Path], name: str
) -> None:
    """The pairing fact: requester -> responder goes to REP's Local QPN from REP's Starting
    PSN; responder -> requester goes to REQ's Local QPN, its own requests from REQ's PSN."""
    path = _capture(real_captures, name)
    mads = reference_cm_mads(path)
    rc = _rc_packets(path, {m.frame for m in mads})
    covered = set()
    for req, rep in _handshakes(mads):
        forward = [p for p in rc if p[:3] == (req.src_ip, req.dst_ip, rep.values["cm_local_qpn"])]
        back = [p for p in rc if p[:3] == (rep.src_ip, rep.dst_ip, req.values["cm_local_qpn"])]
        assert forward and back
        assert forward[0][3] == rep.values["cm_starting_psn"]
        back_requests = [p for p in back if not _is_response(p[4])]
        if back_requests:
            assert back_requests[0][3] == req.values["cm_starting_psn"]
        covered |= {p[:3] for p in forward + back}
    assert covered == {p[:3] for p in rc}  # every RC flow is described by a CM exchange


def _handshakes(mads: list[Mad]) -> list[tuple[Mad, Mad]]:
    reqs = [m for m in mads if m.values["mad_attribute_id"] == CmAttr.REQ]
    reps = [m for m in mads if m.values["mad_attribute_id"] == CmAttr.REP]
    pairs = [
        (q, p)
        for q in reqs
        for p in reps
        if p.values["cm_remote_comm_id"] == q.values["cm_local_comm_id"]
    ]
    assert len(pairs) == len(reqs) > 0
    return pairs


def _rc_packets(path: Path, mad_frames: set[int]) -> list[tuple[str, str, int, int, int]]:
    """(src_ip, dst_ip, dest_qp, psn, opcode) of the non-MAD RoCE frames, in order."""
    import dpkt
    from cm_oracle import _ip_text

    frames = reference_frames(path)
    out = []
    with path.open("rb") as fh:
        for number, (_, buf) in enumerate(dpkt.pcap.UniversalReader(fh), start=1):
            if number in frames and number not in mad_frames:
                ip = dpkt.ethernet.Ethernet(buf).data
                v = frames[number]
                out.append(
                    (_ip_text(ip.src), _ip_text(ip.dst), v["dest_qp"], v["psn"], v["opcode"])
                )
    return out


def _is_response(opcode: int) -> bool:
    return opcode in (ACK, ATOMIC_ACK) or opcode in READ_RESPONSES


def test_req_flow_label_by_the_spec(real_captures: list[Path]) -> None:
    """Flow Label is 20 bits at REQ byte 88, Packet Rate the low 6 bits of byte 91 (Linux
    ib_cm: CM_REQ_PRIMARY_FLOW_LABEL at 88, 20 bits); tshark 4.0 misreads both."""
    first = reference_cm_mads(_capture(real_captures, "rxe_rdma_cm"))[0]
    assert first.values["cm_primary_flow_label"] == 0x91A3C  # bytes 91 a3 c0 00
    assert first.values["cm_primary_packet_rate"] == 0
    assert first.values["cm_primary_local_ack_timeout"] == 0x11  # byte 95: 0x88


def test_cm_message_sizes_by_the_spec() -> None:
    """IBTA 12.6: fixed fields, then PrivateData of 92 (REQ), 196 (REP), 224 (RTU, DREP),
    220 (DREQ), 72 ARI + 148 (REJ), 222 (MRA) bytes: every message fills 232 bytes."""
    private = {CmAttr.REQ: 92, CmAttr.REP: 196, CmAttr.RTU: 224, CmAttr.DREP: 224}
    private |= {CmAttr.DREQ: 220, CmAttr.REJ: 72 + 148, CmAttr.MRA: 222}
    assert MAD_HEADER.size == 24
    for attr, header in CM_MESSAGES.items():
        assert header.size + private[attr] == 232, header.name


def test_field_offsets_by_the_spec() -> None:
    """Byte offsets of the fields the pairing relies on, from IBTA tables 99, 103, 107."""
    assert CM_REQ.field("local_qpn").byte_offset == 32
    assert CM_REQ.field("starting_psn").byte_offset == 44
    assert CM_REQ.field("partition_key").byte_offset == 48
    assert CM_REQ.field("primary_local_port_gid").byte_offset == 56
    assert CM_REP.field("local_qpn").byte_offset == 12
    assert CM_REP.field("starting_psn").byte_offset == 20
    assert CM_REP.field("local_ca_guid").byte_offset == 28
    assert CM_REJ.field("reason").byte_offset == 10


@pytest.mark.parametrize(
    ("kind", "fields"),
    [
        ("REQ", {"local_comm_id": 0xA1B2C3D4, "local_qpn": 0x11C0, "starting_psn": 0xFFFFF0,
                 "service_id": 0x0106_0000_0000_1234, "partition_key": 0xFFFF,
                 "path_packet_payload_mtu": 3, "retry_count": 7, "rnr_retry_count": 7,
                 "primary_local_port_gid": 0xFFFF_0A00_0001}),
        ("REP", {"local_comm_id": 7, "remote_comm_id": 0xA1B2C3D4, "local_qpn": 0x22C0,
                 "starting_psn": 5, "target_ack_delay": 15, "srq": 1}),
        ("RTU", {"local_comm_id": 0xA1B2C3D4, "remote_comm_id": 7}),
        ("DREQ", {"local_comm_id": 7, "remote_comm_id": 0xA1B2C3D4, "remote_qpn_eecn": 0x11C0}),
        ("DREP", {"local_comm_id": 0xA1B2C3D4, "remote_comm_id": 7}),
        ("REJ", {"local_comm_id": 7, "remote_comm_id": 0xA1B2C3D4, "message_rejected": 0,
                 "reject_info_length": 0, "reason": 28}),
        ("MRA", {"local_comm_id": 7, "remote_comm_id": 1, "message_mraed": 1,
                 "service_timeout": 20}),
    ],
)  # fmt: skip
def test_scapy_build_then_dissect_round_trip(kind: str, fields: dict[str, int]) -> None:
    pkt = cm_mad(kind, transaction_id=0x1234_5678, psn=9, private_data=b"hello", **fields)
    again = Ether(bytes(pkt))
    message = next(layer for layer in _layers(again) if isinstance(layer, CmMessage))
    assert type(message).__name__ == f"CM_{kind}"
    assert {k: getattr(message, k) for k in fields} == fields
    assert again[DETH].q_key == GSI_Q_KEY and again[DETH].src_qp == 1
    assert again[MAD].transaction_id == 0x1234_5678
    assert bytes(message.payload)[:5] == b"hello"
    raw = bytes(again)
    assert stored_icrc(raw[14:]) == compute_icrc(raw[14:])
    payload = raw[14 + 20 + 8 + 12 + 8 : -4]
    decoded = decode_cm_mad(payload)
    assert {k: decoded[f"cm_{k}"] for k in fields} == fields
    assert payload == encode_cm_mad(CmAttr[kind], 0x1234_5678, private_data=b"hello", **fields)


def _layers(pkt: Packet) -> list[Packet]:
    out = []
    while pkt:
        out.append(pkt)
        pkt = pkt.payload
    return out


def test_generated_cm_mads_agree_with_tshark(tmp_path: Path, tshark: str) -> None:
    """tshark decodes what the factory builds, field for field."""
    from scapy.utils import wrpcap

    pkts = [
        cm_mad("REQ", local_comm_id=0xA1B2C3D4, local_qpn=0x11C0, starting_psn=77, retry_count=7),
        cm_mad("REP", local_comm_id=9, remote_comm_id=0xA1B2C3D4, local_qpn=0x22C0),
        cm_mad("REJ", local_comm_id=9, remote_comm_id=0xA1B2C3D4, message_rejected=1, reason=28),
        cm_mad("DREQ", local_comm_id=9, remote_comm_id=0xA1B2C3D4, remote_qpn_eecn=0x11C0),
    ]
    path = tmp_path / "cm.pcap"
    wrpcap(str(path), pkts)
    theirs = tshark_cm_mads(path, tshark)
    for frame, mad in enumerate(reference_cm_mads(path), start=1):
        attr = CmAttr(mad.values["mad_attribute_id"])
        keys = [f"cm_{k}" for k in TSHARK_CM[attr]]
        assert not mismatches(mad.values, theirs[frame], keys), attr.name


def test_a_short_mad_is_need_data() -> None:
    with pytest.raises(NeedData):
        decode_cm_mad(b"\x01\x07" + b"\x00" * 100)


def test_other_management_classes_decode_the_header_only() -> None:
    subnet_admin = bytearray(encode_cm_mad(CmAttr.RTU, 1))
    subnet_admin[1] = 0x03
    assert not any(k.startswith("cm_") for k in decode_cm_mad(bytes(subnet_admin)))


def test_pairing_fields_gathered_from_the_mad_start_equal_the_decode(
    real_captures: list[Path],
) -> None:
    """What a vectorized decoder would gather with `field_in_mad` (byte_offset, byte_span,
    shift, mask) equals the reference decode, for every pairing column."""
    mads = [m for name in CM_CAPTURES for m in reference_cm_mads(_capture(real_captures, name))]
    for m in mads:
        attr = CmAttr(m.values["mad_attribute_id"])
        for column, by_attr in PAIRING_FIELDS.items():
            if attr in by_attr:
                f = field_in_mad(attr, by_attr[attr])
                word = int.from_bytes(m.raw[f.byte_offset : f.byte_offset + f.byte_span], "big")
                assert (word >> f.shift) & f.mask == m.values[column], (attr.name, column)
