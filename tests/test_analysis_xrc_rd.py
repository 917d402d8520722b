"""XRC (XRCETH, two XRC SRQs behind one target QP) and RD (RDETH + DETH) captures built with
the Scapy factory: flows, pairing, gaps, retransmissions and NAKs, with and without a lost
and resent packet. The capture point is the responder: a lost request is simply missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dissectors.scapy_factory import roce_packet
from rocetrace.analysis.api import analyze
from rocetrace.capture.writer import write_capture

A, B = "10.0.0.1", "10.0.0.2"
INI_QP, TGT_QP = 0x100, 0x200  # XRC initiator QP (A), XRC target QP (B)
RD_QP_A, RD_QP_B, EE = 0x300, 0x400, 0x77
MTU = 1024
ACK, NAK_SEQ = 0x1F, 0x60  # AETH syndromes: ACK with credits, NAK PSN sequence error
XRC = {"SEND_ONLY": 0xA4, "WRITE_FIRST": 0xA6, "WRITE_MIDDLE": 0xA7, "WRITE_LAST": 0xA8}
XRC |= {"READ_REQUEST": 0xAC, "READ_FIRST": 0xAD, "READ_LAST": 0xAF, "ACK": 0xB1}
RD = {"SEND_FIRST": 0x40, "SEND_MIDDLE": 0x41, "SEND_LAST": 0x42, "SEND_ONLY": 0x44}
RD |= {"WRITE_ONLY": 0x4A, "ACK": 0x51}


def xrc_request(op: str, psn: int, srq: int, **headers: dict[str, int]) -> Any:
    return roce_packet(
        XRC[op], src_ip=A, dst_ip=B, sport=50001, dest_qp=TGT_QP, psn=psn,
        payload=b"\x00" * (MTU if "READ" not in op else 0),
        headers={"XRCETH": {"xrc_srqn": srq}, **headers},
    )  # fmt: skip


def xrc_response(op: str, psn: int, syndrome: int = ACK, payload: int = 0) -> Any:
    return roce_packet(
        XRC[op], src_ip=B, dst_ip=A, sport=50002, dest_qp=INI_QP, psn=psn,
        payload=b"\x00" * payload, headers={"AETH": {"syndrome": syndrome, "msn": 1}},
    )  # fmt: skip


def rd_request(op: str, psn: int, **headers: dict[str, int]) -> Any:
    return roce_packet(
        RD[op], src_ip=A, dst_ip=B, sport=50003, dest_qp=RD_QP_B, psn=psn, payload=b"\x00" * MTU,
        headers={"RDETH": {"ee_context": EE}, "DETH": {"q_key": 0x1111, "src_qp": RD_QP_A},
                 **headers},
    )  # fmt: skip


def rd_ack(psn: int, syndrome: int = ACK) -> Any:
    return roce_packet(
        RD["ACK"], src_ip=B, dst_ip=A, sport=50004, dest_qp=RD_QP_A, psn=psn,
        headers={"RDETH": {"ee_context": EE}, "AETH": {"syndrome": syndrome, "msn": 1}},
    )  # fmt: skip


def reth(length: int) -> dict[str, dict[str, int]]:
    return {"RETH": {"va": 0x1000, "r_key": 0x1234, "dma_length": length}}


def xrc_traffic(lose: bool) -> list[Any]:
    """WRITE to SRQ 5, SEND to SRQ 6, READ via SRQ 5, then a WRITE of 4 packets whose second
    one is lost (NAK, go-back-N resend of 7..9) when `lose`."""
    frames = [
        xrc_request("WRITE_FIRST", 0, 5, **reth(3 * MTU)),
        xrc_request("WRITE_MIDDLE", 1, 5),
        xrc_request("WRITE_LAST", 2, 5),
        xrc_response("ACK", 2),
        xrc_request("SEND_ONLY", 3, 6),
        xrc_response("ACK", 3),
        xrc_request("READ_REQUEST", 4, 5, **reth(2 * MTU)),
        xrc_response("READ_FIRST", 4, payload=MTU),
        xrc_response("READ_LAST", 5, payload=MTU),
    ]
    write = [
        xrc_request("WRITE_FIRST", 6, 6, **reth(4 * MTU)),
        xrc_request("WRITE_MIDDLE", 7, 6),
        xrc_request("WRITE_MIDDLE", 8, 6),
        xrc_request("WRITE_LAST", 9, 6),
    ]
    if not lose:
        return [*frames, *write, xrc_response("ACK", 9)]
    return [*frames, write[0], write[2], xrc_response("ACK", 7, NAK_SEQ), write[3], *write[1:],
            xrc_response("ACK", 9)]  # fmt: skip


def rd_traffic(lose: bool) -> list[Any]:
    """An RD SEND of 3 packets and a WRITE ONLY; with `lose`, the SEND's middle packet is
    lost (NAK, go-back-N resend of 11..13)."""
    send = [
        rd_request("SEND_FIRST", 10),
        rd_request("SEND_MIDDLE", 11),
        rd_request("SEND_LAST", 12),
        rd_request("WRITE_ONLY", 13, **reth(MTU)),
    ]
    if not lose:
        return [*send, rd_ack(13)]
    return [send[0], send[2], rd_ack(11, NAK_SEQ), send[3], *send[1:], rd_ack(13)]


def analyzed(tmp_path: Path, frames: list[Any]) -> Any:
    ts = 1_700_000_000_000_000_000 + 1000 * np.arange(len(frames), dtype=np.int64)
    path = write_capture(tmp_path / "x.pcap", ts, [bytes(f) for f in frames])
    return analyze(path)


def flow(summary: dict[str, Any], dst_qp: int) -> dict[str, Any]:
    return next(f for f in summary["flows"] if f["dest_qp"] == dst_qp)


@pytest.mark.parametrize("lose", [False, True])
def test_xrc_flows_pairing_and_recovery(tmp_path: Path, lose: bool) -> None:
    summary = analyzed(tmp_path, xrc_traffic(lose)).summary()
    req, resp = flow(summary, TGT_QP), flow(summary, INI_QP)
    assert len(summary["flows"]) == 2  # both SRQs share the target QP's one PSN space
    assert (req["transport"], req["role"], req["peer_qp"]) == ("XRC", "requester", INI_QP)
    assert (resp["transport"], resp["role"], resp["peer_qp"]) == ("XRC", "responder", TGT_QP)
    assert (req["psn_gaps"], resp["psn_gaps"]) == (int(lose), 0)
    assert req["retransmitted_packets"] == (3 if lose else 0)
    assert req["naks"]["psn_sequence_error"] == int(lose)
    episodes = summary["retransmissions"]
    if not lose:
        assert (episodes, req["retransmission_mode"]) == ([], "none")
        return
    (e,) = episodes
    assert (e["dest_qp"], e["trigger"], e["nak_psn"], e["start_psn"]) == (TGT_QP, "nak", 7, 7)
    # Captured past the loss: a go-back-0 whose resend of the WRITE's first PSN (6) was lost
    # too would show the same, so the mode is go-back-N, but not certainly.
    assert (e["packets"], e["mode"], e["mode_certainty"]) == (3, "go-back-n", "uncertain")
    assert req["retransmission_mode"] == "go-back-n"


@pytest.mark.parametrize("lose", [False, True])
def test_rd_flows_pairing_and_recovery(tmp_path: Path, lose: bool) -> None:
    summary = analyzed(tmp_path, rd_traffic(lose)).summary()
    req, resp = flow(summary, RD_QP_B), flow(summary, RD_QP_A)
    assert len(summary["flows"]) == 2
    assert (req["transport"], req["role"], req["peer_qp"]) == ("RD", "requester", RD_QP_A)
    assert (resp["transport"], resp["role"], resp["peer_qp"]) == ("RD", "responder", RD_QP_B)
    assert (req["psn_gaps"], req["retransmitted_packets"]) == (int(lose), 3 if lose else 0)
    assert req["naks"]["psn_sequence_error"] == int(lose)
    if lose:
        (e,) = summary["retransmissions"]
        assert (e["trigger"], e["nak_psn"], e["start_psn"], e["packets"]) == ("nak", 11, 11, 3)
        # a go-back-0 whose resend of the SEND's first PSN was lost too would look the same
        assert (e["mode"], e["mode_certainty"]) == ("go-back-n", "uncertain")
    else:
        assert summary["retransmissions"] == []


def test_xrc_read_response_lost_is_reissued(tmp_path: Path) -> None:
    """The READ's first response is lost: the requester, seeing the last one, re-issues the
    READ from PSN 4; the episode belongs to the response flow (read_reissue)."""
    frames = [
        xrc_request("READ_REQUEST", 4, 5, **reth(2 * MTU)),
        xrc_response("READ_LAST", 5, payload=MTU),
        xrc_request("READ_REQUEST", 4, 5, **reth(2 * MTU)),
        xrc_response("READ_FIRST", 4, payload=MTU),
        xrc_response("READ_LAST", 5, payload=MTU),
    ]
    summary = analyzed(tmp_path, frames).summary()
    resp = flow(summary, INI_QP)
    assert (resp["peer_qp"], resp["psn_gaps"], resp["retransmitted_packets"]) == (TGT_QP, 1, 2)
    (e,) = summary["retransmissions"]
    assert (e["dest_qp"], e["trigger"], e["start_psn"], e["packets"]) == (
        INI_QP, "read_reissue", 4, 2,
    )  # fmt: skip


@pytest.mark.parametrize("traffic", [xrc_traffic, rd_traffic])
def test_headers_only_capture_counts_the_same(tmp_path: Path, traffic: Any) -> None:
    """With a 128-byte snap length (payloads cut) every count is the same."""
    frames = traffic(True)
    ts = 1_700_000_000_000_000_000 + 1000 * np.arange(len(frames), dtype=np.int64)
    cut = write_capture(tmp_path / "cut.pcap", ts, [bytes(f) for f in frames], snaplen=128)
    full = analyzed(tmp_path, frames).summary()
    short = analyze(cut).summary()
    keys = ("dest_qp", "peer_qp", "role", "transport", "psn_gaps", "retransmitted_packets")
    assert [[f[k] for k in keys] for f in short["flows"]] == [
        [f[k] for k in keys] for f in full["flows"]
    ]
    assert [e["mode"] for e in short["retransmissions"]] == ["go-back-n"]
