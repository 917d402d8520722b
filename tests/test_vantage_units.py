"""The vantage stages one at a time: naming vantages, the clock line fit, matching resends
and snapped ICRCs, reordering per segment, partitions by connection, one-way traffic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from vantage_truth import ALL, run

from rocetrace.vantage import match as m
from rocetrace.vantage import vantage_api as api
from rocetrace.vantage.clocks import fit_clocks
from rocetrace.vantage.lines import fit_line
from rocetrace.vantage.paths import overtaken
from rocetrace.vantage.vantage_inputs import Vantage, parse_vantage, read_vantage, vantages_of


def test_vantage_names_and_files() -> None:
    assert parse_vantage("tx=a.pcap") == Vantage("tx", (Path("a.pcap"),))
    assert parse_vantage("rx=b1.pcap,b2.pcap.gz").files == (Path("b1.pcap"), Path("b2.pcap.gz"))
    for bad in ("rx", "=a.pcap", "rx=", "1x=a.pcap", "r x=a.pcap"):
        with pytest.raises(ValueError):
            parse_vantage(bad)
    both = vantages_of({"tx": "a.pcap", "rx": ["b1.pcap", "b2.pcap"]})
    assert [v.name for v in both] == ["tx", "rx"] and len(both[1].files) == 2
    with pytest.raises(ValueError, match="distinct"):
        vantages_of([Vantage("a", (Path("x"),)), Vantage("a", (Path("y"),))])
    with pytest.raises(ValueError, match="own files"):
        vantages_of({"a": "x.pcap", "b": "x.pcap"})
    with pytest.raises(ValueError):
        vantages_of({})


def _cloud(rng: np.random.Generator, theta: float, rho: float, n: int, resolution: int) -> Any:
    """Packets both ways between the reference and a vantage whose clock reads theta + rho *
    tau ahead; one-way delays of 300 ns and more, both clocks truncated to `resolution`."""
    tau = np.sort(rng.uniform(-0.5e9, 0.5e9, n))
    later = rng.random(n) < 0.5
    delay = 300 + rng.exponential(2_000, n)
    sent = np.where(later, tau, tau + delay)  # reference stamps when it saw the packet
    seen = np.where(later, tau + delay, tau)  # true time the vantage saw it
    ref = np.floor(sent / resolution) * resolution
    own = np.floor((seen + theta + rho * seen) / resolution) * resolution
    return ref, own - ref, later


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("resolution", [1, 1000])
def test_line_fit_brackets_the_true_clock(seed: int, resolution: int) -> None:
    rng = np.random.default_rng(seed)
    theta, rho = rng.uniform(-1e9, 1e9), rng.uniform(-50e-6, 50e-6)
    ref, d, later = _cloud(rng, theta, rho, 4_000, resolution)
    line = fit_line(ref, d, later, ~later, np.full(len(d), 2.0 * resolution))
    for at in (ref.min(), 0.0, ref.max()):  # the whole capture, not only the pivot
        error = (line.theta + line.rho * at) - (theta + rho * at)
        assert abs(error) <= line.uncertainty
    assert line.uncertainty < 3 * resolution + 1_000
    assert abs(line.rho - rho) < 5e-6


def test_contradicting_packets_say_so() -> None:
    """Delays that no clock line explains (a packet both ways 'before it was sent' by 10 µs):
    a negative margin and an uncertainty at least that wide."""
    tau = np.linspace(-1e6, 1e6, 50)
    later = np.arange(50) % 2 == 0
    d = np.where(later, -10_000.0, 10_000.0)
    line = fit_line(tau, d, later, ~later, np.zeros(50))
    assert line.margin < 0 and line.uncertainty >= 10_000


def _sightings(rows: list[tuple[int, int, int]]) -> pd.DataFrame:
    """(vantage, ts_ns, icrc) rows of one flow's PSN 7 (one opcode), as sightings."""
    s = pd.DataFrame(rows, columns=["vantage", "ts_ns", "icrc"])
    s = s.assign(
        row=np.arange(len(s)),
        src=0,
        dst=1,
        conn=1,
        dest_qp=9,
        psn=7,
        opcode=10,
        matchable=True,
        vantage=s["vantage"].astype(np.int16),
    )
    return m.keyed(s[list(m.SIGHTING_COLUMNS)[:-2]])


def test_a_resend_is_matched_to_the_resend() -> None:
    """The sender saw the original and the resend, the receiver only the resend: the
    receiver's sighting joins the resend, not the k-th occurrence (the original)."""
    s = _sightings([(0, 0, 55), (0, 10_000, 55), (1, 10_600, 55)])
    packet = m.match(s, s["ts_ns"].to_numpy(), [0, 1], window_ns=50_000)
    assert packet[2] == packet[1] != packet[0]
    assert s["occurrence"].tolist() == [0, 1, 0]


def test_a_snapped_icrc_is_the_one_the_others_carry() -> None:
    s = _sightings([(0, 0, 55), (1, 500, -1)])
    assert s["icrc"].tolist() == [55, 55] and s["key"].nunique() == 1
    two = _sightings([(0, 0, 55), (0, 9_000, 66), (1, 500, -1)])  # two payloads: unknown
    assert two["icrc"].tolist() == [55, 66, -1] and two["key"].nunique() == 3


def test_overtaken_packets_are_counted_on_their_segment() -> None:
    pairs = pd.DataFrame(
        {"flow": 0, "from_v": 0, "to_v": 1, "row_from": [0, 1, 2, 3], "row_to": [10, 12, 11, 13]}
    )
    assert overtaken(pairs, ["flow", "from_v", "to_v"]).tolist() == [False, True, False, False]


@pytest.fixture(scope="module")
def incast(tmp_path_factory: Any) -> Any:
    from rocetrace.generate import Loss

    clocks = {"receiver": "offset=+1s,drift=50ppm,res=us", "mirror": "jitter=100ns"}
    truth, _ = run(
        "incast",
        tmp_path_factory.mktemp("v"),
        ALL,
        clocks,
        3,
        losses=(Loss(rate=0.02), Loss(rate=0.02, before_mirror=True)),
    )
    tables = [read_vantage(Vantage(v, (truth.captures[v].path,))) for v in ALL]
    return tables


def test_matching_runs_per_connection_partition(incast: Any) -> None:
    """Anchors, the clock fit and the packet ids come out the same from each connection
    alone (what a streaming or Dask layer computes per partition) as from the whole."""
    s, _ = m.sightings(incast)
    tols = api._tolerances(incast, s)
    fits, aligned = api.align(s, tols)
    window = api.match_window(s, aligned, fits, tols)
    parts = list(m.by_connection(s))
    assert len(parts) == 8  # eight sender hosts, one connection each
    whole = m.anchors(s)
    pieces = pd.concat([m.anchors(p) for p in parts], ignore_index=True)

    def keyed(a: pd.DataFrame) -> list[tuple[int, int]]:
        return sorted(zip(a["conn"], a["ts_ns"], strict=True))

    assert keyed(whole) == keyed(pieces)
    slack, first = [t.slack_ns for t in tols], [0, 0, 0]
    pivot = fits[0].pivot_ns
    assert fit_clocks(pieces, slack, first, pivot) == fit_clocks(whole, slack, first, pivot)
    together = m.match(s, aligned, [0, 1, 2], window)
    apart = m.match_by_connection(s, aligned, [0, 1, 2], window)
    assert (pd.factorize(together)[0] == pd.factorize(apart)[0]).all()


def test_one_way_traffic_is_not_aligned_and_says_so(tmp_path: Path) -> None:
    """UD traffic has no answers: no packet crosses back, so no offset can be bounded."""
    _, a = run(
        "clean", tmp_path, ("sender", "receiver"), {"receiver": "offset=+5ms"}, 0, transport="UD"
    )
    rx = a.vantages.set_index("name").loc["receiver"]
    assert np.isnan(rx["offset_uncertainty_ns"]) and rx["matched_packets"] > 0
    assert "clock_unaligned" in set(a.findings["code"])
    assert abs(rx["offset_ns"] + 5_000_000) < 50_000  # a guess: packets' one-way medians
