"""Saved results (bundle, JSON summary) re-render; the `rocetrace report` command."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from synthetic_analysis import synthetic_analysis

from rocetrace.analysis.result import Analysis
from rocetrace.cli import cli, main
from rocetrace.errors import ExitStatus
from rocetrace.reports.bundle import is_bundle, load_bundle, load_summary, save_bundle
from rocetrace.reports.render import render_html


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return synthetic_analysis(n_packets=4_000, n_flows=4)


@pytest.fixture(scope="module")
def bundle(analysis: Analysis, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_bundle(analysis, tmp_path_factory.mktemp("b") / "cap.rocetrace")


def _figures(html: str) -> str:
    """The figure JSON blocks only (the footer has the generation time)."""
    return "".join(line for line in html.splitlines() if "application/json" in line)


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Categoricals as objects with None for nulls (an all-null category reads back as None)."""
    out = df.reset_index(drop=True).copy()
    for col in out.columns:
        if isinstance(out[col].dtype, pd.CategoricalDtype):
            values = out[col].astype(object)
            out[col] = values.where(values.notna(), None)
    return out


def test_bundle_round_trips_every_table(analysis: Analysis, bundle: Path) -> None:
    assert is_bundle(bundle)
    back = load_bundle(bundle)
    for name in ("packets", "flows", "retransmissions", "naks", "cnps", "pfc", "findings"):
        mine, saved = getattr(analysis, name), getattr(back, name)
        assert list(saved.dtypes.astype(str)) == list(mine.dtypes.astype(str)), name
        pd.testing.assert_frame_equal(_plain(saved), _plain(mine))
    assert back.capture.packets == analysis.capture.packets


def test_report_from_bundle_has_the_same_figures(analysis: Analysis, bundle: Path) -> None:
    assert _figures(render_html(load_bundle(bundle))) == _figures(render_html(analysis))


def test_report_from_a_json_summary_has_findings_and_tables(tmp_path: Path) -> None:
    summary = {
        "schema": "rocetrace.summary/2",
        "capture": {"packets": 10, "first_ts": 1.0, "last_ts": 2.0, "incomplete_tail": True},
        "flows": [
            {
                "src_ip": "a",
                "dst_ip": "b",
                "dest_qp": 7,
                "peer_qp": None,
                "role": "requester",
                "packets": 10,
                "bytes": 100,
                "first_psn": 1,
                "last_psn": 10,
                "retransmitted_packets": 2,
                "psn_gaps": 0,
                "naks": {"psn_sequence_error": 1},
                "retransmission_mode": "go-back-n",
                "timeouts": 0,
                "ecn_ce_packets": 0,
                "cnps": 0,
                "cnps_without_ce": 0,
            }
        ],
        "retransmissions": [
            {
                "src_ip": "a",
                "dst_ip": "b",
                "dest_qp": 7,
                "ts": 1.5,
                "trigger": "nak",
                "nak_psn": 4,
                "start_psn": 4,
                "packets": 2,
                "mode": "go-back-n",
                "delay_s": 1e-5,
            }
        ],
        "pfc": {"frames": 0},
        "findings": [
            {
                "severity": "warning",
                "code": "psn_sequence_error",
                "message": "PSN 4 lost",
                "flow": "a>b/7",
                "first_ts": 1.5,
            }
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(summary))
    html = render_html(load_summary(path))
    assert "PSN 4 lost" in html and "NAK 4 → resent from PSN 4" in html
    assert "incomplete tail" in html


def test_cli_report_from_bundle_writes_html_and_prints_summary(
    bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["report", str(bundle), "--plotlyjs", "cdn"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cap.html").is_file()
    assert result.output.splitlines()[-1] == "Report: cap.html"


def test_cli_report_missing_source_exits_no_such_file(tmp_path: Path) -> None:
    assert main(["report", str(tmp_path / "nope.pcap")]) == ExitStatus.NO_SUCH_FILE
