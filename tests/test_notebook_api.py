"""The Analysis in a notebook: how it shows itself, selection, plots on demand, lossless
save and load, keyword arguments checked by name."""

from __future__ import annotations

from html import unescape
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

import rocetrace
from rocetrace import schema
from rocetrace.analysis.verdict import verdict
from rocetrace.generate import generate
from rocetrace.generate.scenario import PfcStorm
from rocetrace.reports.bundle import load_bundle, save_bundle

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
GBN_KEY = "10.0.0.1>10.0.0.2/0x22c0"


@pytest.fixture(scope="module")
def gbn() -> Any:
    return rocetrace.analyze(SAMPLES / "gbn-loss.pcap")


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """CM connections, anomalies, PFC pauses and UDP ports all with rows."""
    path = tmp_path_factory.mktemp("cm") / "qp-reuse.pcap"
    generate("qp-reuse", path, seed=1, pfc_storm=PfcStorm(duration_us=500.0))
    return rocetrace.analyze(path)


def test_repr_is_two_lines_with_the_verdict(gbn: Any) -> None:
    text = repr(gbn)
    assert len(text.splitlines()) == 2 and "177 frames, 2 flows" in text
    assert text.splitlines()[1] == f"warning: {verdict(gbn).title}"


def test_repr_html_has_verdict_facts_findings_with_advice_and_flows(gbn: Any) -> None:
    html = gbn._repr_html_()
    page = unescape(html)
    finding = gbn.findings.iloc[0]
    for part in (verdict(gbn).title, "177 frames", finding["title"], finding["advice"], GBN_KEY):
        assert part in page, part
    assert GBN_KEY not in html  # escaped: ">" is markup
    assert html.count("<tr>") == 2  # the header and the data flow; its ACK flow is counted
    assert "1 more flow in" in page
    assert "<script" not in html


def test_flow_takes_hex_or_decimal_qps_and_names_the_closest_key(gbn: Any) -> None:
    one = gbn.flow(GBN_KEY)
    assert one.flows["flow"].tolist() == [GBN_KEY, "10.0.0.2>10.0.0.1/0x11c0"]  # and reverse
    assert gbn.flow("10.0.0.1>10.0.0.2/8896").flows.equals(one.flows)
    assert gbn.flow(0).flows.equals(one.flows)
    with pytest.raises(KeyError, match=r"closest: 10\.0\.0\.1>10\.0\.0\.2/0x22c0"):
        gbn.flow("10.0.0.1>10.0.0.2/0x22c1")
    with pytest.raises(ValueError, match="not a flow key"):
        gbn.flow("10.0.0.1")


def test_select_by_qp_src_and_time_window(gbn: Any) -> None:
    by_qp = gbn.select(qp=0x11C0)  # the QP of the other end: the same connection
    assert set(by_qp.flows["flow"]) == set(gbn.flows["flow"])
    by_src = gbn.select(src="10.0.0.2")
    assert set(by_src.packets["flow_id"].dropna()) <= set(by_src.flows["flow_id"])
    t0 = int(gbn.packets["ts_ns"].min())
    window = gbn.select(t0=3e-6, t1=pd.Timestamp(t0 + 8_000, unit="ns", tz="UTC"))
    ts = window.packets["ts_ns"].to_numpy(np.int64)
    assert len(ts) and ts.min() >= t0 + 3_000 and ts.max() <= t0 + 8_000
    assert len(window.packets) < len(gbn.packets)
    assert window.summary()["schema"] == "rocetrace.summary/2"
    with pytest.raises(TypeError, match="did you mean 'src'"):
        gbn.select(sr="10.0.0.1")


def _traces(fig: go.Figure) -> set[str]:
    return {t.name for t in fig.data}


def test_plots_on_demand(gbn: Any, everything: Any) -> None:
    psn = gbn.plot.psn(GBN_KEY)
    assert isinstance(psn, go.Figure) and {"sent", "retransmitted", "NAK"} <= _traces(psn)
    assert _traces(gbn.flow(GBN_KEY).plot.psn()) == _traces(psn)  # the flow by default
    assert GBN_KEY in psn.layout.title.text
    assert GBN_KEY in _traces(gbn.plot.timeline())
    assert "CE-marked packets" in _traces(rocetrace.analyze(SAMPLES / "ecn-cnp.pcap").plot.cnp())
    assert any(str(n).startswith("priority") for n in _traces(everything.plot.pfc()))
    with pytest.raises(ValueError, match="no PFC"):
        gbn.plot.pfc()
    with pytest.raises(TypeError, match="did you mean 'flow'"):
        gbn.plot.psn(flw=GBN_KEY)


def test_analyze_rejects_a_misspelled_option_naming_the_closest() -> None:
    with pytest.raises(TypeError, match="'link_sped'; did you mean 'link_speed'"):
        rocetrace.analyze(SAMPLES / "clean.pcap", link_sped="25G")


def _same(a: Any, b: Any) -> None:
    for name in schema.TABLES:
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), obj=name)
    assert (b.capture, b.capture_facts, b.tolerances) == (a.capture, a.capture_facts, a.tolerances)
    assert b.options == a.options and b.summary() == a.summary()


def test_save_and_load_keep_every_table_and_the_capture_info(
    everything: Any, tmp_path: Path
) -> None:
    for name in ("cm_connections", "pfc_pauses", "udp_sports", "anomalies"):
        assert len(getattr(everything, name)), name  # the round trip below is not vacuous
    _same(everything, rocetrace.load(everything.save(tmp_path / "saved")))
    _same(everything, load_bundle(save_bundle(everything, tmp_path / "b.rocetrace")))


def test_qps_are_hex_where_a_person_reads_them_and_integers_in_tables(gbn: Any) -> None:
    assert gbn.flows["dest_qp"].dtype == "int64[pyarrow]"
    assert set(gbn.flows["flow"]) == {GBN_KEY, "10.0.0.2>10.0.0.1/0x11c0"}
    assert gbn.findings["flow"].iloc[0] == GBN_KEY
