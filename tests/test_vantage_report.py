"""The report's vantage section: the clock table, per-segment loss and delay, the lost
packets and one flow's timeline with a lane per vantage; in Chromium, drawn without error.
A report of one capture has no such section."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_report_browser import browser, open_report  # noqa: F401  (a fixture)
from vantage_truth import ALL, run

from rocetrace.generate import Loss
from rocetrace.reports import render_report
from rocetrace.reports.render import render_html

CLOCKS = {"receiver": "offset=-40ms,drift=20ppm,res=us", "mirror": "offset=+1s,jitter=50ns"}


@pytest.fixture(scope="module")
def merged(tmp_path_factory: Any) -> Any:
    losses = (Loss(rate=0.02), Loss(rate=0.02, before_mirror=True))
    _, a = run(
        "gbn-loss",
        tmp_path_factory.mktemp("r"),
        ALL,
        CLOCKS,
        2,
        losses=losses,
        mtu=256,
        message_size=2048,
        messages=20,
    )
    return a


def test_vantage_section_in_the_page(merged: Any) -> None:
    html = render_html(merged, plotlyjs="cdn")
    for part in (
        'id="vantages"',
        'id="table-vantages"',
        'id="table-segments"',
        'id="table-losses"',
        'id="fig-vantage-timeline"',
        "mirror",
        "receiver",
    ):
        assert part in html
    assert html.index('id="vantages"') < html.index('id="psn"')  # losses located: first


def test_one_capture_has_no_vantage_section(merged: Any) -> None:
    alone = merged.per_vantage["receiver"]
    assert 'id="vantages"' not in render_html(alone, plotlyjs="cdn")


@pytest.mark.browser
def test_vantage_section_renders_in_chromium(browser: Any, merged: Any, tmp_path: Path) -> None:  # noqa: F811
    report = render_report(merged, tmp_path / "merged.html")
    seen = open_report(browser, report, tmp_path / "merged.png")
    assert seen["errors"] == [] and seen["requests"] == []
    assert seen["drawn"] and all(seen["drawn"])
    assert seen["state"]["rendered"] == seen["state"]["figures"] == len(seen["drawn"])
