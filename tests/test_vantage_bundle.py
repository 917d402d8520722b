"""A merged analysis saved and loaded whole: `Analysis.save` / `rocetrace.load` and a
bundle (`--bundle`) keep the vantage tables (declared in rocetrace.schema.vantage_columns)
and the merged packet table's columns, losslessly; each vantage's own analysis is
computed again from its files on first use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner
from test_vantage_generated import SMALL, WIDE
from vantage_truth import ALL

import rocetrace
from rocetrace import schema
from rocetrace.cli import cli
from rocetrace.generate import generate
from rocetrace.reports.bundle import load_bundle, save_bundle
from rocetrace.vantage.merged_analysis import MergedAnalysis
from rocetrace.vantage.vantage_api import analyze_vantages


@pytest.fixture(scope="module")
def merged(tmp_path_factory: Any) -> tuple[MergedAnalysis, dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("bundle")
    truth = generate("gbn-loss", tmp / "x.pcap", seed=0, vantages=ALL, clocks=WIDE, **SMALL)
    spec = {v: truth.captures[v].path for v in ALL}
    return analyze_vantages(spec), spec


def assert_same(a: Any, b: Any) -> None:
    assert isinstance(b, MergedAnalysis)
    for name in (*schema.TABLES, *schema.VANTAGE_TABLES):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=name)
    assert a.summary() == b.summary()


def test_save_and_load(merged: Any, tmp_path: Path) -> None:
    a, _ = merged
    assert len(a.losses) and len(a.segments) and len(a.sightings)  # something to keep
    back = rocetrace.load(a.save(tmp_path / "saved"))
    assert_same(a, back)
    assert {f"frame_{v}" for v in ALL} <= set(back.packets.columns)
    assert (tmp_path / "saved" / "sightings.parquet").is_file()
    assert list(back.per_vantage) == list(ALL)
    pd.testing.assert_frame_equal(back.per_vantage["sender"].flows, a.per_vantage["sender"].flows)


def test_bundle_round_trip_and_report(merged: Any, tmp_path: Path) -> None:
    a, _ = merged
    back = load_bundle(save_bundle(a, tmp_path / "m.rocetrace"))
    assert_same(a, back)
    out = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(tmp_path / "m.rocetrace"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "Vantage points" in out.read_text()


def test_a_single_capture_bundle_has_no_vantage_tables(tmp_path: Path) -> None:
    a = rocetrace.analyze(str(Path(__file__).parents[1] / "samples" / "gbn-loss.pcap"))
    back = rocetrace.load(a.save(tmp_path / "one"))
    assert not isinstance(back, MergedAnalysis)
    assert not (tmp_path / "one" / "vantages.parquet").exists()


def test_unknown_vantage_table_is_a_clear_error(merged: Any, tmp_path: Path) -> None:
    import json

    a, _ = merged
    folder = a.save(tmp_path / "bad")
    meta = json.loads((folder / "manifest.json").read_text())
    meta["vantage_tables"] = ["vantages", "nonsense"]
    (folder / "manifest.json").write_text(json.dumps(meta))
    with pytest.raises(rocetrace.errors.InvalidResults, match="vantage_tables"):
        rocetrace.load(folder)
