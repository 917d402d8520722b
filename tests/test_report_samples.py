"""Reports of real analyses of generated samples show their scenario's problem on first view.

gbn-loss: the lossy flow's PSN graph leads, with the NAK and the resend burst; ecn-cnp: CE
marks and CNPs on the PSN graph and the ECN panel; pfc-storm: the PFC panel leads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rocetrace.analysis.result import Analysis
from rocetrace.reports.render import render_html

PRESETS = ("gbn-loss", "ecn-cnp", "pfc-storm")


def sample_analysis(preset: str, directory: Path) -> Analysis:
    """Generate the preset's capture and analyse it (skip while those modules are missing)."""
    generate = pytest.importorskip("rocetrace.generate").generate
    import rocetrace

    path = directory / f"{preset}.pcap"
    generate(preset, path, seed=1)
    return rocetrace.analyze(path)


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Analysis]:
    directory = tmp_path_factory.mktemp("samples")
    return {p: sample_analysis(p, directory) for p in PRESETS}


def figures(html: str) -> list[tuple[str, dict[str, Any]]]:
    """(target div id, figure) in page order."""
    found = re.findall(r'data-target="([^"]+)">(.*?)</script>', html)
    return [(target, json.loads(text)) for target, text in found]


def legend_names(fig: dict[str, Any]) -> set[str]:
    return {t.get("name", "") for t in fig["data"]}


def test_gbn_loss_leads_with_the_nak_and_the_resend_burst(samples: dict[str, Analysis]) -> None:
    target, fig = figures(render_html(samples["gbn-loss"]))[0]
    assert target.startswith("fig-psn-")
    assert {"NAK", "retransmitted", "sent"} <= legend_names(fig)
    assert fig["layout"]["xaxis2"]["range"]  # the zoom on the first anomaly


def test_ecn_cnp_shows_marks_and_cnps(samples: dict[str, Analysis]) -> None:
    figs = figures(render_html(samples["ecn-cnp"]))
    psn = [f for t, f in figs if t.startswith("fig-psn-")]
    assert any({"ECN CE mark", "CNP"} <= legend_names(f) for f in psn)
    assert "fig-ecn" in [t for t, _ in figs]


def test_pfc_storm_leads_with_the_pfc_panel(samples: dict[str, Analysis]) -> None:
    target, fig = figures(render_html(samples["pfc-storm"]))[0]
    assert target == "fig-pfc"
    assert any(n.startswith("priority") for n in legend_names(fig))
