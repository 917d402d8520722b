"""The findings table, declared once: what went wrong, why, and what to do about it."""

from __future__ import annotations

from rocetrace.schema.column import F64, I64, INTS, TEXT, TEXTS, TIME, Column, Table

SEVERITIES = ("info", "warning", "critical")
MAX_FRAMES = 20  # evidence frames kept per finding

FINDINGS = Table(
    "findings",
    "finding: one per kind of problem, aggregated over every QP and host pair it affects",
    (
        Column("severity", TEXT, "info, warning or critical"),
        Column("code", TEXT, "the finding's stable name (docs/findings.md)"),
        Column("title", TEXT, "the finding's name in words"),
        Column("message", TEXT, "what the capture shows, with counts, one line"),
        Column("cause", TEXT, "the probable cause, one line"),
        Column("advice", TEXT, "what to check or change"),
        Column("flow", TEXT, "the flow's key when the finding is about exactly one flow"),
        Column("flow_id", I64, "that flow's id"),
        Column("flows", TEXTS, "keys of every affected flow, most affected first"),
        Column("count", I64, "events counted (NAKs, resends, CNPs, pauses, ...)"),
        Column("first_ts", F64, "first evidence (the summary's first_ts)", "s since the epoch"),
        Column("first_ts_ns", I64, "the same instant", "ns since the epoch"),
        Column("first_time", TIME, "the same instant as a UTC timestamp"),
        Column(
            "frames",
            INTS,
            f"evidence frame numbers (at most {MAX_FRAMES}), earliest evidence first",
        ),
        Column(
            "loss_location",
            TEXT,
            "for losses: upstream (before the capture point: a PSN gap here), downstream "
            "(after it: the capture saw what was resent), both; null otherwise",
        ),
    ),
)
