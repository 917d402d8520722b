"""Structural golden checks on the HTML report: sections, one plotly.js, figures, no network."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import plotly
import pytest
from synthetic_analysis import synthetic_analysis

from rocetrace.analysis.result import Analysis
from rocetrace.errors import OutputError
from rocetrace.reports import render_report, terminal_summary
from rocetrace.reports.render import default_report_path, render_html

SECTIONS = ("capture", "verdict", "findings", "psn", "throughput", "ecn", "pfc", "flows", "qos")
PLOTLY_BANNER = f"plotly.js v{plotly.offline.get_plotlyjs_version()}"


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of each script."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None


@pytest.fixture(scope="module")
def analysis() -> Analysis:
    return synthetic_analysis(n_packets=6_000, n_flows=5)


@pytest.fixture(scope="module")
def html(analysis: Analysis, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = render_report(analysis, tmp_path_factory.mktemp("report") / "r.html")
    return path.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def parsed(html: str) -> Tags:
    p = Tags()
    p.feed(html)
    return p


def test_every_section_is_present(parsed: Tags) -> None:
    ids = {a.get("id") for _, a in parsed.tags}
    assert set(SECTIONS) <= ids


def test_plotly_js_is_embedded_exactly_once(html: str, parsed: Tags) -> None:
    assert html.count(PLOTLY_BANNER) == 1
    big = [t for a, t in parsed.scripts if len(t) > 1_000_000]
    assert len(big) == 1


def test_one_json_block_per_figure_div(parsed: Tags, analysis: Analysis) -> None:
    blocks = [(a, t) for a, t in parsed.scripts if a.get("type") == "application/json"]
    plots = {a["id"] for tag, a in parsed.tags if tag == "div" and a.get("class") == "plot"}
    assert {a["data-target"] for a, _ in blocks} == plots
    # 3 data flows + their PSN graphs, throughput, ECN, PFC
    assert len(blocks) == 5 + 3
    for _, text in blocks:
        fig = json.loads(text)
        assert fig["data"] and "layout" in fig


def test_no_network_references_in_inline_mode(parsed: Tags) -> None:
    for tag, attrs in parsed.tags:
        for attr in ("src", "href"):
            value = attrs.get(attr) or ""
            assert not re.match(r"\s*(https?:)?//", value), f"<{tag} {attr}={value}>"


def test_cdn_mode_links_plotly_once(analysis: Analysis) -> None:
    html = render_html(analysis, plotlyjs="cdn")
    assert PLOTLY_BANNER not in html
    assert len(re.findall(r'<script src="https://cdn\.plot\.ly/plotly-[\d.]+\.min\.js"', html)) == 1
    assert len(html) < 1_500_000


def test_findings_most_severe_first_with_evidence(html: str) -> None:
    order = [m.group(1) for m in re.finditer(r'<li class="finding (\w+)">', html)]
    rank = {"critical": 0, "warning": 1, "info": 2}
    assert order and order == sorted(order, key=rank.__getitem__)
    assert "frame.number in {" in html
    assert 'href="#psn-0"' in html  # the lossy flow's finding links to its PSN graph


def test_text_from_the_capture_is_escaped(analysis: Analysis) -> None:
    evil = analysis.findings.copy()
    evil.loc[0, "message"] = "<script>alert(1)</script>"
    html = render_html(Analysis(**{**analysis.__dict__, "findings": evil}))
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_unwritable_output_is_a_typed_error(analysis: Analysis, tmp_path: Path) -> None:
    with pytest.raises(OutputError):
        render_report(analysis, tmp_path / "missing-dir" / "r.html")


def test_empty_analysis_renders(analysis: Analysis) -> None:
    empty = Analysis(
        packets=analysis.packets.iloc[0:0],
        flows=analysis.flows.iloc[0:0],
        retransmissions=analysis.retransmissions.iloc[0:0],
        naks=analysis.naks.iloc[0:0],
        cnps=analysis.cnps.iloc[0:0],
        pfc=analysis.pfc.iloc[0:0],
        findings=analysis.findings.iloc[0:0],
        capture=analysis.capture,
    )
    html = render_html(empty)
    assert "Clean: no loss, no retransmission, no congestion signal" in html
    assert 'type="application/json"' not in html


def test_terminal_summary_lists_verdict_findings_counts_and_path(analysis: Analysis) -> None:
    text = terminal_summary(analysis, report_path="x.html", columns=200)
    lines = text.splitlines()
    assert lines[0].startswith("2 retransmission episodes")
    first = next(i for i, line in enumerate(lines) if line.startswith("  CRITICAL"))
    assert lines[first] == "  CRITICAL PFC storm [pfc_storm]"  # after the verdict's lines
    assert all(line.startswith("  ") for line in lines[1:first])
    assert lines[-1] == "Report: x.html"
    assert f"{len(analysis.packets):,} frames" in text


@pytest.mark.parametrize("columns", [60, 80, 132])
def test_terminal_summary_fits_its_width_and_cuts_nothing(analysis: Analysis, columns: int) -> None:
    text = terminal_summary(analysis, report_path="x.html", columns=columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    assert "…" not in text.replace("… and", "")  # nothing cut short, only "… and N more"
    words = " ".join(str(m) for m in analysis.findings["message"].head(1)).split()
    assert all(w in text.split() for w in words)


@pytest.mark.parametrize(
    ("source", "expected"),
    [("a/b/cap.pcap", "cap.html"), ("x.pcapng.gz", "x.html"), ("r.rocetrace", "r.html")],
)
def test_default_report_path_is_the_capture_stem_here(source: str, expected: str) -> None:
    assert default_report_path(source) == Path(expected)


def test_findings_frames_may_be_missing(analysis: Analysis) -> None:
    findings = analysis.findings.drop(columns=["frames"]).assign(first_ts=None)
    html = render_html(Analysis(**{**analysis.__dict__, "findings": findings}))
    assert "Findings" in html
