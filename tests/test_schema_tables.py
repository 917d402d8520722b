"""Every output table matches its declaration in rocetrace/schema/, empty and not; Parquet
written by rocetrace reads back with plain pandas.read_parquet; docs/tables.md is current."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rocetrace
from rocetrace import schema
from rocetrace.capture import read_capture
from rocetrace.schema.conform import conform, empty, mismatches
from rocetrace.schema.tables_doc import render
from rocetrace.store import table_to_parquet

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"
# Between them every table has rows in one and none in another.
CASES = ("clean", "gbn-loss", "ecn-cnp", "pfc-storm", "rnr", "tail-timeout")


@pytest.fixture(scope="module")
def analyses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from rocetrace.generate import generate

    out = {name: rocetrace.analyze(SAMPLES / f"{name}.pcap") for name in CASES}
    folder = tmp_path_factory.mktemp("generated")
    generate("qp-reuse", folder / "qp-reuse.pcap", seed=1)  # anomalies, CM connections
    out["qp-reuse"] = rocetrace.analyze(folder / "qp-reuse.pcap")
    bare = read_capture(SAMPLES / "gbn-loss.pcap").packets
    out["bare packet table"] = rocetrace.analyze(bare)
    out["no rows at all"] = rocetrace.analyze(bare.iloc[0:0])
    return out


def test_every_table_matches_its_declaration_empty_and_not(analyses: dict[str, Any]) -> None:
    problems = [
        f"{case}: {p}"
        for case, a in analyses.items()
        for name, table in schema.TABLES.items()
        for p in mismatches(getattr(a, name), table)
    ]
    assert problems == []
    for name in schema.TABLES:  # the cases hold each table both with rows and without
        sizes = {len(getattr(a, name)) > 0 for a in analyses.values()}
        assert sizes == {True, False}, name


def test_flow_id_is_the_same_integer_dtype_in_every_table(analyses: dict[str, Any]) -> None:
    a = analyses["gbn-loss"]
    kinds = {
        str(getattr(a, n)["flow_id"].dtype) for n in schema.TABLES if "flow_id" in getattr(a, n)
    }
    assert kinds == {"int64[pyarrow]"}


@pytest.mark.parametrize("name", list(schema.TABLES))
def test_parquet_reads_back_with_plain_read_parquet(analyses: dict[str, Any], name: str) -> None:
    for case in ("gbn-loss", "clean"):
        df = getattr(analyses[case], name)
        buf = io.BytesIO()
        table_to_parquet(df, schema.TABLES[name], buf)
        back = pd.read_parquet(io.BytesIO(buf.getvalue()))
        table = schema.TABLES[name]
        expected = {c.name: c.dtype for c in table.columns if c.type != schema.CATEGORY}
        got = {c: back[c].dtype for c in expected}
        assert got == expected, case
        assert mismatches(conform(back, table), table) == []


def test_decoded_parquet_reads_back_with_plain_read_parquet(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from rocetrace.cli import cli

    out = tmp_path / "packets.parquet"
    done = CliRunner().invoke(cli, ["decode", str(SAMPLES / "gbn-loss.pcap"), "-o", str(out)])
    assert done.exit_code == 0, done.output
    back = pd.read_parquet(out)
    for c in schema.PACKET_COLUMNS:
        want = "uint64[pyarrow]" if c.name.startswith("atomic_") else str(c.dtype)
        assert str(back[c.name].dtype) == want, c.name  # atomics: Parquet keeps no int dicts


def test_conform_gives_one_dtype_per_column_whatever_comes_in() -> None:
    table = schema.NAKS
    raw = pd.DataFrame({"frame": [1.0, None], "psn": pd.array([3, None], "Int32")})
    assert mismatches(conform(raw, table), table) == []
    assert mismatches(empty(table), table) == []
    assert conform(raw, table)["psn"].tolist() == [3, pd.NA]


def test_docs_tables_md_is_generated_from_the_schema() -> None:
    page = (REPO / "docs" / "tables.md").read_text()
    assert page == render(), "regenerate: python -m rocetrace.schema.tables_doc > docs/tables.md"
    for table in schema.TABLES.values():
        for column in table.columns:
            if table.name != "packets" or column.name not in schema.PACKET_COLUMN_NAMES:
                assert f"| `{column.name}` |" in page
