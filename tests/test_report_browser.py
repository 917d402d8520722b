"""The report in a real browser: headless Debian chromium driven by Playwright.

Every plot must render with no console error and no network request; a screenshot of each
report is saved next to it in tmp_path for a human look.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from synthetic_analysis import synthetic_analysis

from rocetrace.reports import render_report

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Any:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (.ci/run installs Debian's chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=shutil.which("chromium") or CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_report(browser: Any, path: Path, shot: Path) -> dict[str, Any]:
    """Load the report, wait for every figure, screenshot it; return what the page saw."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith("file:") else requests.append(r.url))
    page.route(
        "**/*",
        lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort(),
    )
    page.goto(path.as_uri())
    page.wait_for_function("document.body.hasAttribute('data-rendered')", timeout=60_000)
    state = page.evaluate("window.rocetrace")
    drawn = page.evaluate(
        """() => Array.from(document.querySelectorAll('div.plot')).map(
            d => !!d.querySelector('.main-svg') || !!d.querySelector('canvas'))"""
    )
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    return {"errors": errors, "requests": requests, "state": state, "drawn": drawn}


def test_every_plot_renders_offline_without_errors(browser: Any, tmp_path: Path) -> None:
    report = render_report(synthetic_analysis(n_packets=10_000), tmp_path / "synthetic.html")
    seen = open_report(browser, report, tmp_path / "synthetic.png")
    assert seen["errors"] == []
    assert seen["requests"] == []
    assert seen["state"]["errors"] == []
    assert seen["drawn"] and all(seen["drawn"])
    assert seen["state"]["rendered"] == seen["state"]["figures"] == len(seen["drawn"])
    assert (tmp_path / "synthetic.png").stat().st_size > 10_000


@pytest.mark.parametrize("preset", ["gbn-loss", "ecn-cnp", "pfc-storm"])
def test_generated_sample_renders(browser: Any, tmp_path: Path, preset: str) -> None:
    """A real analysis of each problem sample; look at tmp_path/<preset>.png."""
    generate = pytest.importorskip("rocetrace.generate").generate
    import rocetrace

    generate(preset, tmp_path / f"{preset}.pcap", seed=1)
    report = render_report(rocetrace.analyze(tmp_path / f"{preset}.pcap"), tmp_path / "r.html")
    seen = open_report(browser, report, tmp_path / f"{preset}.png")
    assert seen["errors"] == [] and seen["requests"] == []
    assert seen["drawn"] and all(seen["drawn"])


def test_table_sorts_and_filters(browser: Any, tmp_path: Path) -> None:
    report = render_report(synthetic_analysis(n_packets=3_000, n_flows=4), tmp_path / "t.html")
    page = browser.new_page()
    page.goto(report.as_uri())
    page.click("#table-flows th[data-col='4']")  # packets, ascending
    first = page.eval_on_selector_all(
        "#table-flows tbody tr", "rows => rows.map(r => +r.cells[4].dataset.v)"
    )
    assert first == sorted(first)
    page.fill("[data-table='flows'] input.filter", "/256")
    shown = page.eval_on_selector_all(
        "#table-flows tbody tr", "rows => rows.filter(r => r.style.display !== 'none').length"
    )
    assert shown == 1
    page.close()
