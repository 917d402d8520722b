"""A streamed vantage merge (shards partitioned by connection, sightings matched per
partition, clocks fitted capture-wide) equals the in-memory merge, table for table: on
generated multi-vantage runs, on the real NCCL ring of three nodes, with partitions forced
small so that several exist, and once on a 2-worker Dask cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from test_vantage_generated import EVERYWHERE, MIXED, SMALL, WIDE
from vantage_truth import ALL

from rocetrace.errors import NotACapture
from rocetrace.generate import generate
from rocetrace.scale.input_plan import ScaleOptions
from rocetrace.vantage.vantage_api import analyze_vantages
from rocetrace.vantage.vantage_inputs import vantages_of
from rocetrace.vantage.vantage_plan import analyze_vantage_inputs, streams

REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "captures" / "real"
TABLES = (
    "flows", "retransmissions", "naks", "cnps", "pfc", "pfc_pauses", "findings", "anomalies",
    "cm_connections", "udp_sports", "packets", "vantages", "losses", "segments",
    "segment_totals", "sightings",
)  # fmt: skip


def assert_same(a: Any, b: Any) -> None:
    """Every table equal, the summary and the capture's facts too."""
    for name in TABLES:
        x, y = getattr(a, name), getattr(b, name)
        pd.testing.assert_frame_equal(x.reset_index(drop=True), y.reset_index(drop=True), obj=name)
    assert a.summary() == b.summary()


def _generated(tmp: Path, preset: str, vantages: tuple[str, ...], clocks: dict[str, str],
               seed: int, **overrides: Any) -> dict[str, Path]:  # fmt: skip
    truth = generate(
        preset, tmp / "x.pcap", seed=seed, vantages=vantages,
        clocks={v: c for v, c in clocks.items() if v in vantages}, **overrides,
    )  # fmt: skip
    return {v: truth.captures[v].path for v in vantages}


CASES = [
    ("gbn-loss", ALL, WIDE, 0, SMALL),
    ("gbn-loss", ("receiver", "mirror", "sender"), MIXED, 1, SMALL),
    ("incast", ALL, MIXED, 8, {"losses": EVERYWHERE[:2]}),
    ("bidirectional", ALL, WIDE, 9, {}),
    ("pfc-storm", ALL, MIXED, 2, {"malformed": ("truncated_bth", "bad_icrc")}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-seed{c[3]}")
@pytest.mark.parametrize("partitions", [1, 3])
def test_streamed_merge_equals_in_memory(tmp_path: Path, case: Any, partitions: int) -> None:
    preset, vantages, clocks, seed, overrides = case
    spec = _generated(tmp_path, preset, vantages, clocks, seed, **overrides)
    memory = analyze_vantages(spec)
    streamed = analyze_vantage_inputs(spec, ScaleOptions(quiet=True, partitions=partitions))
    assert_same(memory, streamed)
    if preset != "incast":
        return
    work = tmp_path / "work"
    analyze_vantage_inputs(spec, ScaleOptions(quiet=True, partitions=4, workdir=work))
    shards = {p.name for p in work.glob("vantage0/shards/p*")}
    assert len(shards) > 1  # several partitions held connections


@pytest.mark.skipif(not REAL.is_dir(), reason="real captures not present")
def test_real_ring_streamed_equals_in_memory(tmp_path: Path) -> None:
    spec = {f"node{k}": REAL / f"ring2_node{k}.pcap" for k in range(3)}
    memory = analyze_vantages(spec)
    work = tmp_path / "work"
    streamed = analyze_vantage_inputs(spec, ScaleOptions(quiet=True, partitions=8, workdir=work))
    assert len(list(work.glob("vantage0/shards/p*"))) > 1
    assert_same(memory, streamed)
    assert streamed.capture_facts["roce_packets"] == 276


def test_memory_limit_decides(tmp_path: Path) -> None:
    spec = _generated(tmp_path, "gbn-loss", ALL, WIDE, 0, **SMALL)
    vs = vantages_of(spec)
    assert not streams(vs, ScaleOptions())
    assert streams(vs, ScaleOptions(memory_limit=1))
    assert streams(vs, ScaleOptions(workers=2))


@pytest.mark.slow
def test_two_dask_workers(tmp_path: Path) -> None:
    spec = _generated(tmp_path, "incast", ALL, MIXED, 8, losses=EVERYWHERE[:2])
    memory = analyze_vantages(spec)
    streamed = analyze_vantage_inputs(spec, ScaleOptions(quiet=True, workers=2, partitions=4))
    assert_same(memory, streamed)


def test_cli_streams_a_merge_when_asked(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rocetrace.cli import cli

    spec = _generated(tmp_path, "gbn-loss", ALL, WIDE, 0, **SMALL)
    args = [a for v, p in spec.items() for a in ("--vantage", f"{v}={p}")]
    out = {}
    for extra in ([], ["--memory-limit", "1", "--workdir", str(tmp_path / "w")]):
        result = CliRunner().invoke(cli, ["analyze", *args, *extra, "--json", "-", "--quiet"])
        assert result.exit_code == 0, result.output
        out[bool(extra)] = result.stdout
    assert out[True] == out[False]
    assert (tmp_path / "w" / "vantage0" / "manifest.json").is_file()
    # the merge's work folder is not one capture's shard folder: say what can be read there
    again = CliRunner().invoke(cli, ["analyze", str(tmp_path / "w"), "--json", "-", "--quiet"])
    assert isinstance(again.exception, NotACapture)  # exit status 4 from rocetrace.cli.main
    assert f"rocetrace analyze {tmp_path / 'w' / 'vantage0'}`" in str(again.exception)
    one = CliRunner().invoke(cli, ["analyze", str(tmp_path / "w" / "vantage0"), "--json", "-"])
    assert one.exit_code == 0, one.output


def test_a_sample_of_anchors_keeps_the_clocks_honest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above match.MAX_ANCHORS the fit takes every k-th anchor packet: the offsets stay
    within their (wider or equal) uncertainty, in memory and streamed alike."""
    from vantage_truth import true_offset_ns

    from rocetrace.vantage import match

    truth = generate("gbn-loss", tmp_path / "x.pcap", seed=3, vantages=ALL, clocks=WIDE, **SMALL)
    spec = {v: truth.captures[v].path for v in ALL}
    full = analyze_vantages(spec).vantages.set_index("name")
    monkeypatch.setattr(match, "MAX_ANCHORS", 300)
    sampled = analyze_vantages(spec)
    assert_same(sampled, analyze_vantage_inputs(spec, ScaleOptions(quiet=True, partitions=2)))
    rows = sampled.vantages.set_index("name")
    for name in ALL[1:]:
        r = rows.loc[name]
        truth_ns = true_offset_ns(truth, name, ALL[0], int(r["pivot_ns"]))
        assert abs(r["offset_ns"] - truth_ns) <= r["offset_uncertainty_ns"]
        assert r["offset_uncertainty_ns"] >= full.loc[name, "offset_uncertainty_ns"] - 1
