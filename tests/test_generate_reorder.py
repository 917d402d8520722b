"""`reorder`: packet spraying delays some request packets in the switch so later ones overtake
them. Nothing is lost; the IBTA responder NAKs the gap (a resend for a packet that was only
late), an out-of-order-capable responder does not. Checked on the wire table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rocetrace.generate import generate
from rocetrace.generate.wire_table import ROLE_REQUEST
from rocetrace.link import wire_ns

NAK_KIND = 3


def arrival_psns(w, conn: int = 0) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Request PSNs of a connection in the order they reached the responder."""
    mine = np.flatnonzero((w["conn"] == conn) & (w["role"] == ROLE_REQUEST) & (w["lost"] == 0))
    return w["psn"][mine[np.argsort(w["t_rx"][mine], kind="stable")]].astype(np.int64)


@pytest.mark.parametrize("ooo", [False, True])
def test_delayed_packets_are_overtaken_and_recorded(tmp_path: Path, ooo: bool) -> None:
    truth = generate("reorder", tmp_path / "r.pcap", seed=1, responder_ooo=ooo)
    w, late = truth.wire, truth.anomalies
    assert late and {a["kind"] for a in late} == {"reordered"} and truth.data["drops"] == []
    lo, hi = truth.data["scenario"]["reorder_delay_ns"]
    for a in late:
        i = a["wire_id"]
        assert (
            w["role"][i] == ROLE_REQUEST and w["psn"][i] == a["psn"] and lo <= a["delay_ns"] <= hi
        )
        arrival = w["t_tx"][i] + int(wire_ns(int(w["wire_len"][i]), 100e9)) + 500
        assert w["t_sw"][i] >= arrival + a["delay_ns"]  # its longer path through the switch
    psns = arrival_psns(w)
    assert np.any(np.diff(psns) < 0)  # arrival order at the responder is not PSN order
    assert sum(a["overtaken_by"] > 0 for a in late) > len(late) // 2
    assert truth.data["messages"] == {"completed": 16}
    naks = (w["opcode"] == 0x11) & (w["syndrome"] >> 5 == NAK_KIND)
    if ooo:
        assert not naks.any() and truth.nic_episodes == []
        assert truth.data["hosts"][1]["accepts_out_of_order"]
    else:
        eps = truth.nic_episodes
        assert naks.any() and eps and {e["trigger"] for e in eps} == {"nak"}
        overtaken = {w["psn"][a["wire_id"]] for a in late if a["overtaken_by"]}
        assert eps[0]["nak_psn"] in overtaken  # the NAK names a late packet, not a lost one


def test_no_two_frames_overlap_on_the_receivers_link(tmp_path: Path) -> None:
    truth = generate("reorder", tmp_path / "r.pcap", seed=2, reorder_rate=0.3)
    w = truth.wire
    into = np.flatnonzero((w["dst"] == 1) & (w["kind"] == 0))
    order = into[np.argsort(w["t_sw"][into], kind="stable")]
    ser = np.asarray(wire_ns(w["wire_len"][order].astype(np.int64), 100e9)).astype(np.int64)
    assert np.all(np.diff(w["t_sw"][order]) >= ser[:-1])
