"""Truth v2: the facts of the simulation (hosts, connections, NIC episodes, drops, CNP causes,
pause windows, captured frames), each checked against the wire table or the written file,
never against what an analysis would infer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rocetrace.dissectors.aeth import AckKind, ack_kind
from rocetrace.generate import Loss, PfcStorm, generate
from rocetrace.generate.wire_table import PFC, ROLE_REQUEST, ROLE_RESPONSE

SMALL = {"mtu": 256, "message_size": 2048}
NAK, ACK = 0x11, 0x11
READ_RESPONSES = (0x0D, 0x0E, 0x0F, 0x10)


def pcap_psns(path: Path) -> list[int | None]:
    """BTH PSN of each frame of a plain RoCEv2/IPv4 pcap (None for non-RoCE frames)."""
    data = path.read_bytes()
    out: list[int | None] = []
    at = 24
    while at < len(data):
        caplen = int.from_bytes(data[at + 8 : at + 12], "little")
        frame = data[at + 16 : at + 16 + caplen]
        roce = frame[12:14] == b"\x08\x00" and int.from_bytes(frame[36:38], "big") == 4791
        out.append(int.from_bytes(frame[51:54], "big") if roce else None)
        at += 16 + caplen
    return out


def test_schema_hosts_and_connections(tmp_path: Path) -> None:
    truth = generate("clean", tmp_path / "c.pcap", seed=1, qps=2, messages=2)
    assert truth.data["schema"] == "rocetrace.truth/2"
    hosts = truth.data["hosts"]
    assert [h["role"] for h in hosts] == ["requester", "responder", "switch"]
    assert hosts[0] == {
        "index": 0, "ip": "10.0.0.1", "mac": "02:00:00:00:00:01", "role": "requester",
        "recovery": "go-back-n", "mtu": 1024, "ack_timeout_ns": 4096 * 2**8, "retry_cnt": 7,
        "rnr_retry": 7, "accepts_out_of_order": False,
    }  # fmt: skip
    conns = truth.data["connections"]
    assert [c["requester_qp"] for c in conns] == [0x11C0, 0x11C1]
    w = truth.wire
    for c in conns:
        first = np.flatnonzero((w["conn"] == c["conn"]) & (w["role"] == ROLE_REQUEST))[0]
        assert w["psn"][first] == c["start_psn"] and w["dest_qp"][first] == c["responder_qp"]
        assert c["generation"] == 0 and c["responder_start_psn"] is None


def test_wire_table_is_indexed_by_wire_id(tmp_path: Path) -> None:
    truth = generate("gbn-loss", tmp_path / "g.pcap", seed=1, cm=True, **SMALL)
    assert truth.wire["row"].tolist() == list(range(len(truth.wire)))
    assert truth.data["packets_on_wire"] == len(truth.wire)


def test_go_back_n_episode_as_the_nic_did_it(tmp_path: Path) -> None:
    truth = generate("gbn-loss", tmp_path / "g.pcap", seed=1, **SMALL)
    w = truth.wire
    (drop,) = truth.data["drops"]
    assert (drop["psn"], drop["where"], drop["role"]) == (7396, "after_mirror", "request")
    assert w["lost"][drop["wire_id"]] != 0 and w["t_tx"][drop["wire_id"]] == drop["t_ns"]
    (ep,) = truth.nic_episodes
    assert (ep["trigger"], ep["nak_psn"], ep["start_psn"], ep["mode"]) == (
        "nak",
        7396,
        7396,
        "go-back-n",
    )
    nak = ep["trigger_packet"]
    assert w["opcode"][nak] == NAK and ack_kind(int(w["syndrome"][nak])) is AckKind.NAK
    assert w["psn"][nak] == 7396
    resent = ep["resent"]
    sent_before = w["psn"][(w["role"] == ROLE_REQUEST) & (w["t_tx"] < w["t_rx"][nak])]
    assert w["psn"][resent].tolist()[: 1 + sent_before.max() - 7396] == list(
        range(7396, int(sent_before.max()) + 1)
    )
    assert np.all(w["episode"][resent] == ep["id"]) and np.all(np.diff(w["t_tx"][resent]) > 0)
    assert np.all(w["t_tx"][resent] >= w["t_rx"][nak])


def test_read_reissue_names_the_response_that_showed_the_gap(tmp_path: Path) -> None:
    truth = generate("read-loss", tmp_path / "r.pcap", seed=1, **SMALL)
    w = truth.wire
    eps = truth.nic_episodes
    assert [e["trigger"] for e in eps] == ["read_reissue", "read_reissue"]
    assert [e["start_psn"] for e in eps] == [5010, 5027]
    for e in eps:
        cause = e["trigger_packet"]
        assert w["role"][cause] == ROLE_RESPONSE and w["opcode"][cause] in (*READ_RESPONSES, ACK)
        (request,) = e["resent"]
        assert w["opcode"][request] == 0x0C and w["psn"][request] == e["start_psn"]
        assert w["t_tx"][request] >= w["t_rx"][cause]
        assert w["psn"][e["answers"]][0] == e["start_psn"]
        assert np.all(w["role"][e["answers"]] == ROLE_RESPONSE)


def test_drops_say_which_side_of_the_mirror(tmp_path: Path) -> None:
    truth = generate(
        "gbn-loss", tmp_path / "b.pcap", seed=1, losses=(Loss(psns=(7396,), before_mirror=True),),
        **SMALL,
    )  # fmt: skip
    (drop,) = truth.data["drops"]
    assert drop["where"] == "before_mirror"
    assert drop["wire_id"] not in truth.captures["mirror"].wire_ids


def test_cnp_causes(tmp_path: Path) -> None:
    truth = generate("ecn-cnp", tmp_path / "e.pcap", seed=1, mtu=256, messages=4,
                     kmin_bytes=2000, kmax_bytes=16000)  # fmt: skip
    w, causes = truth.wire, truth.data["cnp_causes"]
    assert causes and {c["cause"] for c in causes} == {"ce"}
    for c in causes:
        marked, cnp = c["marked_wire_id"], c["wire_id"]
        assert w["opcode"][cnp] == 0x81 and w["ecn"][marked] == 3
        assert w["src"][cnp] == w["dst"][marked] and w["t_tx"][cnp] >= w["t_rx"][marked]
    oos = generate("gbn-loss", tmp_path / "o.pcap", seed=1, cnp_on_oos=True, **SMALL)
    (cause,) = oos.data["cnp_causes"]
    assert cause["cause"] == "oos" and oos.wire["psn"][cause["out_of_sequence_wire_id"]] > 7396


def test_pfc_windows_and_their_frames(tmp_path: Path) -> None:
    storm = PfcStorm(start_us=2, duration_us=3000, refresh_us=300)
    truth = generate("pfc-storm", tmp_path / "p.pcap", seed=1, pfc_storm=storm, mtu=256)
    w = truth.wire
    windows = truth.data["pfc_windows"]
    assert {(p["port"], p["host"]) for p in windows} == {
        ("switch_egress", "10.0.0.2"), ("nic", "10.0.0.1")
    }  # fmt: skip
    for p in windows:
        frames = p["frames"]
        assert np.all(w["kind"][frames] == PFC)
        quanta = w["pfc_q3"][frames]
        assert np.all(quanta[:-1] > 0) and quanta[-1] == 0
        assert p["end_ns"] - p["start_ns"] == 3_000_000
    nic = next(p for p in windows if p["port"] == "nic")
    sent = w["t_tx"][(w["src"] == 0) & (w["pcp"] == 3) & (w["kind"] == 0)]
    assert not np.any((sent >= nic["start_ns"]) & (sent < nic["end_ns"]))


@pytest.mark.parametrize("vantage", ["sender", "receiver", "mirror"])
def test_capture_frames_name_the_wire_packets(tmp_path: Path, vantage: str) -> None:
    out = tmp_path / "f.pcap"
    truth = generate("gbn-loss", out, seed=1, vantage=vantage, malformed=("truncated_bth",),
                     **SMALL)  # fmt: skip
    ids = truth.captures[vantage].wire_ids
    assert truth.data["capture_frames"] == {vantage: ids.tolist()}
    psns = pcap_psns(out)
    assert len(psns) == len(ids) and (ids == -1).sum() == 1
    real = ids >= 0
    captured = [p for p, r in zip(psns, real, strict=True) if r]
    assert captured == truth.wire["psn"][ids[real]].tolist()
    table = truth.captures[vantage].table
    assert np.all(table["wire_len"][real] == truth.wire["wire_len"][ids[real]])
    lost = {d["wire_id"] for d in truth.data["drops"]}
    assert (vantage != "receiver") == bool(lost & set(ids.tolist()))  # lost after the mirror
