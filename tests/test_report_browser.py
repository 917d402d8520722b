"""The report in a real browser: headless Debian chromium driven by Playwright.

Every plot must render with no console error and no network request; a screenshot of each
report is saved next to it in tmp_path for a human look.
"""

from __future__ import annotations

import os
import shutil
import struct
import zlib
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
    page.fill("[data-table='flows'] input.filter", "/0x100")  # QPs read in hex
    shown = page.eval_on_selector_all(
        "#table-flows tbody tr", "rows => rows.filter(r => r.style.display !== 'none').length"
    )
    assert shown == 1
    page.close()


PANELS = ("verdict", "findings", "psn", "throughput", "ecn", "pfc", "flows", "episodes", "qos")
PANELS += ("entropy", "capture")
# Where the screenshots of the reorganised report are kept: ROCETRACE_SCREENSHOTS=docs/screenshots
SHOTS = os.environ.get("ROCETRACE_SCREENSHOTS")


def png_pixels(data: bytes) -> bytes:
    """The raw (filtered) scanlines of a PNG: enough to tell a blank image from a drawing."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, at = [], 8
    while at < len(data):
        size, kind = struct.unpack(">I4s", data[at : at + 8])
        if kind == b"IDAT":
            chunks.append(data[at + 8 : at + 8 + size])
        at += 12 + size
    return zlib.decompress(b"".join(chunks))


OVERLAPS = """() => Array.from(document.querySelectorAll('div.plot')).flatMap(plot => {
    const legend = plot.querySelector('g.legend');
    if (!legend) return [];
    const l = legend.getBoundingClientRect();
    return Array.from(plot.querySelectorAll('rect.nsewdrag')).filter(d => {
        const r = d.getBoundingClientRect();
        return l.left < r.right && r.left < l.right && l.top < r.bottom && r.top < l.bottom;
    }).map(() => plot.id);
})"""


def test_each_panel_renders_beside_its_legend_and_is_screenshotted(
    browser: Any, tmp_path: Path
) -> None:
    """The reorganised report of a real analysis with every panel (loss on three QPs, ECN
    marks and CNPs, PFC pauses), panel by panel: every figure drawn, no legend over a plot,
    a screenshot of each panel that is not blank (kept in docs/ with ROCETRACE_SCREENSHOTS)."""
    import rocetrace
    from rocetrace.generate import Loss, generate
    from rocetrace.generate.scenario import PfcOnLoss

    generate("gbn-loss", tmp_path / "every.pcap", seed=3, qps=3, ce_rate=0.03, messages=16,
             pfc_on_loss=PfcOnLoss(), losses=(Loss(every=150),))  # fmt: skip
    report = render_report(rocetrace.analyze(tmp_path / "every.pcap"), tmp_path / "r.html")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(report.as_uri())
    page.wait_for_function("document.body.hasAttribute('data-rendered')", timeout=60_000)
    order = page.eval_on_selector_all("main > section", "s => s.map(x => x.id)")
    assert order[:2] == ["verdict", "findings"] and set(PANELS) <= set(order)
    assert page.evaluate(OVERLAPS) == []
    for panel in PANELS:
        section = page.locator(f"section#{panel}")
        drawn = section.evaluate(
            "s => Array.from(s.querySelectorAll('div.plot')).map("
            "d => !!d.querySelector('.main-svg') || !!d.querySelector('canvas'))"
        )
        assert all(drawn), panel
        shot = section.screenshot()
        assert len(set(png_pixels(shot)[::3])) > 8, f"{panel}: blank screenshot"
        (tmp_path / f"report-{panel}.png").write_bytes(shot)
        if SHOTS:
            Path(SHOTS).mkdir(parents=True, exist_ok=True)
            (Path(SHOTS) / f"report-{panel}.png").write_bytes(shot)
    page.close()
