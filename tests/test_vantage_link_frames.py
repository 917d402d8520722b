"""PFC frames and malformed frames are per link and per capture: the merged analysis
counts each PFC frame once however many vantages saw its link (a host and the mirror of its
port), reports each vantage's own PFC frames and paused time, and keeps every malformed
frame (each capture's own) once, counted per vantage. The truth (the generator's wire
table and each capture's frames) says how many there were."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from rocetrace.generate import generate
from rocetrace.generate.wire_table import PFC
from rocetrace.vantage.vantage_api import analyze_vantages

VANTAGES = ("sender", "receiver", "mirror")
CLOCKS = {"receiver": "offset=+1ms,drift=20ppm,res=us", "mirror": "offset=-2ms,jitter=100ns"}
MALFORMED = ("truncated_bth", "bad_icrc", "unknown_opcode")


@pytest.fixture(scope="module", params=["pfc-storm", "pfc-recovery"])
def run(request: Any, tmp_path_factory: Any) -> tuple[Any, Any]:
    out = tmp_path_factory.mktemp("links") / "x.pcap"
    truth = generate(
        request.param, out, seed=1, vantages=VANTAGES, clocks=CLOCKS, malformed=MALFORMED
    )
    return truth, analyze_vantages({v: truth.captures[v].path for v in VANTAGES})


def _seen_pfc(truth: Any, vantage: str) -> np.ndarray:
    """The wire ids of the PFC frames a vantage captured."""
    ids = np.asarray(truth.data["capture_frames"][vantage])
    ids = ids[ids >= 0]
    return ids[truth.wire["kind"][ids] == PFC]


def test_each_pfc_frame_once(run: Any) -> None:
    truth, a = run
    distinct = set().union(*(set(_seen_pfc(truth, v).tolist()) for v in VANTAGES))
    assert distinct  # the scenario has pauses, seen at two vantages at least
    assert a.pfc["frame"].nunique() == len(distinct)
    merged = a.packets.set_index("frame")
    pfc_rows = merged.loc[a.pfc["frame"].unique()]
    assert (pfc_rows["sightings"].to_numpy() >= 1).all()
    assert int(pfc_rows["sightings"].sum()) == sum(len(_seen_pfc(truth, v)) for v in VANTAGES)


def test_pfc_per_vantage_link(run: Any) -> None:
    truth, a = run
    table = a.vantages.set_index("name")
    for v in VANTAGES:
        own = a.per_vantage[v]
        assert table.loc[v, "pfc_frames"] == len(_seen_pfc(truth, v)) == own.pfc["frame"].nunique()
        held = float(own.pfc["held_s"].sum()) if len(own.pfc) else 0.0
        assert table.loc[v, "pfc_held_s"] == pytest.approx(held, rel=1e-3, abs=1e-6)
    # a pause run is per sender and priority: no frame counted twice in it
    assert int(a.pfc_pauses["frames"].sum()) <= a.pfc["frame"].nunique()


def test_malformed_frames_per_vantage_none_dropped(run: Any) -> None:
    truth, a = run
    table = a.vantages.set_index("name")
    for v in VANTAGES:
        injected = int((np.asarray(truth.data["capture_frames"][v]) < 0).sum())
        assert injected == len(MALFORMED)  # the truth: each capture's own broken frames
        assert table.loc[v, "malformed_packets"] == injected
        assert a.per_vantage[v].capture_facts["malformed_packets"] == len(MALFORMED)
    assert a.capture_facts["malformed_packets"] == len(MALFORMED) * len(VANTAGES)
    broken = a.packets["anomaly"].notna().to_numpy()
    assert dict(a.packets["vantage"][broken].value_counts()) == dict.fromkeys(
        VANTAGES, len(MALFORMED)
    )
