"""docs/findings.md, written from advice.py (never by hand): every finding code, its
severity, cause and advice.

    python -m rocetrace.analysis.findings_doc > docs/findings.md

tests/test_findings_advice.py fails when the checked-in page differs from what this writes.
"""

from __future__ import annotations

import sys

from rocetrace.analysis.advice import ENTRIES

INTRO = """\
# Findings (generated from `rocetrace/analysis/advice.py`: do not edit)

A finding is one kind of problem, however many QPs and host pairs share it: sixteen QPs
with the same problem make one finding that lists the sixteen flows (`flows`), not sixteen
lines. Each says what the capture shows (`message`, with counts), the probable cause
(`cause`), what to check or change (`advice`), the evidence frames (`frames`) and, for a
loss, on which side of the capture point it happened (`loss_location`: `upstream`, before
the capture point, when the capture shows the PSN gap; `downstream`, after it, when the
capture saw the packets that were later resent). The columns: docs/tables.md, `findings`.

Where the capture shows more, the cause and advice say more than the text below: a timeout
shorter than the RTT is named as such, a PFC pause of a priority the data does not ride
names both, a PSN reuse after a READ names both ends' path MTUs.

Regenerate this page with `python -m rocetrace.analysis.findings_doc > docs/findings.md`.

| code | severity | title | cause | advice |
|---|---|---|---|---|
"""


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def render() -> str:
    rows = [
        f"| `{code}` | {e.severity} | {_cell(e.title)} | {_cell(e.text('cause', {}))} | "
        f"{_cell(e.text('advice', {}))} |"
        for code, e in ENTRIES.items()
    ]
    return INTRO + "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
