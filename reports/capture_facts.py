"""The report header: capture facts from `CaptureInfo` (or a summary's `capture` object).

Why tolerant: a re-rendered report may come from a saved bundle or a JSON summary, where the
capture facts are a plain mapping with fewer fields.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any

import pandas as pd

from rocetrace.capture.damage import table_anomaly_counts
from rocetrace.reports.data import seconds

LINK_TYPE_NAMES = {0: "null", 1: "Ethernet", 113: "Linux cooked", 276: "Linux cooked v2"}
COUNTS = (
    ("RoCE packets", "roce_packets"),
    ("other packets", "non_roce_packets"),
    ("malformed", "malformed_packets"),
    ("cut by snap length", "truncated_packets"),
)


def capture_mapping(capture: Any) -> dict[str, Any]:
    """CaptureInfo, a namespace or a dict as a plain dict."""
    if capture is None:
        return {}
    if isinstance(capture, dict):
        return dict(capture)
    if is_dataclass(capture) and not isinstance(capture, type):
        return asdict(capture)
    return dict(vars(capture))


def _span(c: dict[str, Any], packets: pd.DataFrame) -> tuple[float | None, float | None]:
    """First and last timestamps, epoch seconds."""
    first = seconds(c.get("first_ts_ns", c.get("first_ts")))
    last = seconds(c.get("last_ts_ns", c.get("last_ts")))
    if first is None and len(packets) and "ts_ns" in packets:
        first, last = packets["ts_ns"].min() / 1e9, packets["ts_ns"].max() / 1e9
    return first, last


def _link_types(links: Any) -> str:
    if not links:
        return "–"
    items = links if isinstance(links, list | tuple) else [links]
    return ", ".join(
        f"{LINK_TYPE_NAMES.get(v, 'DLT')} ({v})" if isinstance(v, int) else str(v) for v in items
    )


def capture_facts(capture: Any, packets: pd.DataFrame) -> list[tuple[str, str]]:
    """(label, value) pairs: file, format, link types, time span, counts, what failed to decode."""
    c = capture_mapping(capture)
    first, last = _span(c, packets)
    fmt = str(c.get("format") or "–") + (" (gzip)" if c.get("compressed") else "")
    facts = [
        ("file", str(c.get("path") or c.get("file") or "–")),
        ("format", fmt),
        ("link types", _link_types(c.get("link_types"))),
        ("duration", "–" if first is None or last is None else f"{(last - first) * 1e3:,.3f} ms"),
        ("frames", f"{int(c.get('packets') or len(packets)):,}"),
    ]
    facts += [(label, f"{int(c[key]):,}") for label, key in COUNTS if c.get(key)]
    if c.get("snaplen"):
        facts.append(("snap length", f"{int(c['snaplen']):,} bytes"))
    if c.get("incomplete_tail"):
        facts.append(("incomplete tail", "yes: the file ends inside a record (tcpdump killed?)"))
    if c.get("corrupt_records"):
        skipped = f"{int(c.get('skipped_bytes') or 0):,} bytes skipped, decoding resumed after"
        facts.append(("corrupt records", f"{int(c['corrupt_records']):,} ({skipped})"))
    bad = c.get("anomaly_counts") or table_anomaly_counts(packets)
    listed = ", ".join(f"{k}: {int(v):,}" for k, v in bad.items() if v)
    facts.append(("not decoded", listed or "nothing"))
    return facts


def headline(facts: list[tuple[str, str]]) -> str:
    """The header's one line: file, duration, frames (the rest is in the Capture section)."""
    shown = dict(facts)
    return " · ".join(f"{shown[k]}" if k == "file" else f"{k} {shown[k]}"
                      for k in ("file", "duration", "frames") if k in shown)  # fmt: skip
