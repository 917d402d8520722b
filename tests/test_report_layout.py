"""The report reorganised: verdict and findings first, panels only with data, time from the
first RoCE frame, legends beside the plots, PSN graphs that mark only real gaps, one PFC
paused time everywhere, PCP "untagged", no "-0.00" entropy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from synthetic_analysis import synthetic_analysis

import rocetrace
from rocetrace.reports.data import ACK_OPCODE, time_origin_ns
from rocetrace.reports.figstyle import LEGEND_WIDTH
from rocetrace.reports.figures import ecn_figure
from rocetrace.reports.figures_psn import psn_graph
from rocetrace.reports.render import build_context, render_html
from rocetrace.reports.sections import Context, _peer_ack_rows
from rocetrace.reports.tables import entropy_table, qos_table

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def samples() -> dict[str, Any]:
    names = ("gbn-loss", "pfc-storm", "ecn-cnp", "read-loss", "clean")
    return {n: rocetrace.analyze(SAMPLES / f"{n}.pcap") for n in names}


def _ids(html: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)"', html)


def test_verdict_and_findings_come_first_and_empty_panels_are_left_out(samples: Any) -> None:
    ids = _ids(render_html(samples["gbn-loss"], plotlyjs="cdn"))
    assert ids[:3] == ["verdict", "findings", "psn"] and ids[-1] == "capture"
    assert "ecn" not in ids and "pfc" not in ids  # no CE, no CNP, no PFC: no panel
    assert "pfc" in _ids(render_html(samples["pfc-storm"], plotlyjs="cdn"))[2:3]  # it leads
    assert "ecn" in _ids(render_html(samples["ecn-cnp"], plotlyjs="cdn"))


def test_time_counts_from_the_first_roce_frame(samples: Any) -> None:
    a = samples["gbn-loss"]
    first_roce = int(a.packets["ts_ns"].min())
    other = a.packets.iloc[:1].assign(ts_ns=first_roce - 10**9, encap="other", flow_id=pd.NA)
    packets = pd.concat([other, a.packets], ignore_index=True)
    shifted = rocetrace.analysis.result.Analysis(**{**a.__dict__, "packets": packets})
    assert time_origin_ns(shifted) == first_roce


def test_legends_sit_beside_the_plots(samples: Any) -> None:
    ctx = build_context(samples["pfc-storm"])
    for section in ctx["sections"]:
        for fig in section.figures:
            layout = __import__("json").loads(str(fig.json))["layout"]
            assert layout["legend"]["x"] >= 1 and layout["legend"]["xanchor"] == "left"
            assert layout["margin"]["r"] >= LEGEND_WIDTH


def _gap_frames(a: Any) -> tuple[set[int], set[int]]:
    """Frames drawn as PSN gaps in the report's graphs, and frames the analysis says follow
    a gap."""
    ctx = Context.of(a, top_flows=50)
    drawn: set[int] = set()
    for _, flow in ctx.top.iterrows():
        fid = int(flow["flow_id"])
        graph = psn_graph(ctx.packets, flow, _peer_ack_rows(ctx, flow),
                          a.naks.iloc[0:0], a.cnps.iloc[0:0], ctx.origin_ns)  # fmt: skip
        drawn |= {int(f) for s in graph.series if s.kind == "gap" for f in s.frame}
        assert not any(ACK_OPCODE[op & 0xFF] for s in graph.series if s.kind == "gap"
                       for op in s.opcode), fid  # fmt: skip
    gaps = a.packets["psn_gap"].to_numpy(np.int64) > 0
    return drawn, set(a.packets["frame"].to_numpy(np.int64)[gaps].tolist())


def test_psn_graphs_mark_only_the_analysis_gaps(samples: Any) -> None:
    drawn, real = _gap_frames(samples["read-loss"])
    assert drawn == real and len(real) == 2  # the two READ response gaps, nothing else


def test_no_gap_marker_on_a_coalesced_ack_in_the_real_captures(real_captures: list[Path]) -> None:
    for path in real_captures:
        drawn, real = _gap_frames(rocetrace.analyze(path))
        assert drawn <= real, path.name


def test_one_pfc_paused_time_everywhere(samples: Any) -> None:
    a = samples["pfc-storm"]
    held = float(a.pfc.loc[a.pfc["priority"] == 3, "held_s"].sum())
    assert a.summary()["pfc"]["by_priority"]["3"]["paused_s"] == pytest.approx(held)
    html = render_html(a, plotlyjs="cdn")
    row = re.search(r'<table class="sortable" id="table-pfc">.*?</table>', html, re.S)
    assert row and f">{held * 1e3:,.3f}<" in row.group(0)
    storm = a.findings.set_index("code").loc["pfc_storm", "message"]
    assert f"{held * 1e3:,.1f} ms" in storm  # one unbroken pause: its length is the total


def test_qos_shows_untagged_pcp_and_entropy_is_never_negative_zero(samples: Any) -> None:
    a = samples["gbn-loss"]
    assert a.flows["vlan_pcp"].isna().all()
    assert {row[4][0] for row in qos_table(a.flows, a.cnps).rows} == {"untagged"}
    assert all(row[3][0] == "0.00" for row in entropy_table(a.flows).rows)


def test_ecn_figure_draws_no_empty_histogram(samples: Any) -> None:
    a = samples["ecn-cnp"]  # four CNPs, each to another QP: no interval between two
    ctx = Context.of(a, 8)
    kinds = [t.type for t in ecn_figure(ctx.packets, a.cnps, ctx.bins, ctx.origin_ns).data]
    assert "histogram" not in kinds and "bar" in kinds
    s = synthetic_analysis(n_packets=3_000, n_flows=3)  # many CNPs to one QP
    sctx = Context.of(s, 8)
    kinds = [t.type for t in ecn_figure(sctx.packets, s.cnps, sctx.bins, sctx.origin_ns).data]
    assert "histogram" in kinds
