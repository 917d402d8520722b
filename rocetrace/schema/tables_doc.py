"""docs/tables.md, written from the declarations (never by hand): every table, every column.

    python -m rocetrace.schema.tables_doc > docs/tables.md

tests/test_schema_tables.py fails when the checked-in page differs from what this writes.
"""

from __future__ import annotations

import sys

from rocetrace.schema import MERGED_PACKET_EXTRAS, PACKET_EXTRAS, TABLES, VANTAGE_TABLES
from rocetrace.schema.column import Table

INTRO = """\
# Output tables (generated from `rocetrace/schema/`: do not edit)

Every table of `rocetrace.analyze(...)` (an `Analysis`) is declared once in
`rocetrace/schema/` and cast to that declaration at the end of the analysis, so a table has
the same columns and dtypes whether it is empty or not. Integers are Arrow-backed
(`int64[pyarrow]`: nullable, no overflow in PSN or QP arithmetic; use `rocetrace.psn` for
PSN steps across the 24-bit wrap), text is `string[pyarrow]`, each instant is an integer of
nanoseconds (`*_ns`) beside a `datetime64[ns, UTC]` column, and frame lists are Python
lists. Parquet written by rocetrace (`Analysis.save`, bundles, `rocetrace decode`) reads
back with plain `pandas.read_parquet` to these dtypes (list columns come back as arrays:
`rocetrace.load` makes them lists again). Regenerate this page with
`python -m rocetrace.schema.tables_doc > docs/tables.md`.

QPs are integers in the tables and hex wherever a person reads them (`flow` keys,
messages, the report). What the analysis does to fill them: docs/analysis.md; the summary
that carries most of them as JSON: docs/summary-schema.md.
"""

MERGED_INTRO = """\
# Merged analyses of several vantages

`rocetrace.analyze({"tx": "a.pcap", "rx": "b.pcap"})` (docs/vantages.md) gives every table
above, computed on the merged table, and these beside them. Text is `string[pyarrow]`;
numbers keep the numpy and pandas dtypes the vantage stage builds. `Analysis.save`, bundles
and `rocetrace.load` keep them.
"""


def _table(table: Table) -> list[str]:
    lines = [f"## `{table.name}`", "", f"One row per {table.row}.", ""]
    if table.about:
        lines += [table.about, ""]
    lines += ["| column | dtype | unit | meaning |", "|---|---|---|---|"]
    for c in table.columns:
        meaning = c.meaning.replace("|", "/")
        lines.append(f"| `{c.name}` | {c.type_name} | {c.unit} | {meaning} |")
    return [*lines, ""]


def render() -> str:
    """The whole page."""
    lines = [INTRO]
    for name, table in TABLES.items():
        if name == "packets":  # the decoder's columns are docs/packet-table.md's
            lines += _table(PACKET_EXTRAS)
        else:
            lines += _table(table)
    lines += [MERGED_INTRO]
    lines += _table(MERGED_PACKET_EXTRAS)
    for table in VANTAGE_TABLES.values():
        lines += _table(table)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
