"""An analysis saved and loaded whole: every declared table as Parquet, and a manifest
with the capture's info, the capture facts, the clock and the options.

`Analysis.save(folder)` writes a folder, `rocetrace.load(folder)` reads it back equal to
what was saved (tests/test_notebook_api.py); a report bundle (`--save-bundle`) is the same
files in one zip (rocetrace.reports.bundle). Each Parquet file reads back with plain
`pandas.read_parquet` to the declared dtypes (docs/tables.md).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import IO, TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rocetrace import schema
from rocetrace.errors import InvalidResults, OutputError
from rocetrace.schema.conform import conform

if TYPE_CHECKING:
    from rocetrace.analysis.result import Analysis

STORE_SCHEMA = "rocetrace.bundle/2"
MANIFEST = "manifest.json"
TABLE_NAMES = tuple(schema.TABLES)


def _arrow(df: pd.DataFrame) -> pa.Table:
    """The frame as Arrow; integer categoricals as their integers (Parquet keeps
    dictionaries only for text, so a reader gets back the integers either way)."""
    plain = {
        c: df[c].astype(pd.ArrowDtype(pa.from_numpy_dtype(df[c].cat.categories.dtype)))
        for c in df.columns
        if isinstance(df[c].dtype, pd.CategoricalDtype)
        and pd.api.types.is_integer_dtype(df[c].cat.categories.dtype)
    }
    return pa.Table.from_pandas(df.assign(**plain) if plain else df, preserve_index=False)


def table_to_parquet(df: pd.DataFrame, table: schema.Table, sink: str | Path | IO[bytes]) -> None:
    """One table as Parquet (snappy), cast to its declaration first (no copy when it is)."""
    pq.write_table(_arrow(conform(df, table)), sink, compression="snappy")


def table_from_parquet(source: str | Path | IO[bytes], table: schema.Table) -> pd.DataFrame:
    """A declared table read back (plain read_parquet, then cast to its declaration:
    lists become lists again, integer categoricals categoricals)."""
    return conform(pd.read_parquet(source), table)


def _plain(value: Any) -> Any:
    """The capture info or the clock as JSON-ready data (paths as text, tuples as lists)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__, **dataclasses.asdict(value)}
    if isinstance(value, SimpleNamespace):
        return dict(vars(value))
    return value


def saved_tables(a: Analysis) -> dict[str, schema.Table]:
    """The tables an analysis is saved with: every declared one, and the vantage tables of
    a merged analysis of several vantages (schema.VANTAGE_TABLES)."""
    merged = all(hasattr(a, name) for name in schema.VANTAGE_TABLES)
    return {**schema.TABLES, **(schema.VANTAGE_TABLES if merged else {})}


def manifest(a: Analysis) -> dict[str, Any]:
    """What the tables do not hold: the capture's info and facts, the clock, the options
    (and which vantage tables the analysis has)."""
    out = {
        "schema": STORE_SCHEMA,
        "tables": list(TABLE_NAMES),
        "capture": _plain(a.capture) or {},
        "capture_facts": a.capture_facts,
        "tolerances": _plain(a.tolerances),
        "options": a.options,
        "packets_sampled": a.packets_sampled,
    }
    vantage_tables = [n for n in saved_tables(a) if n in schema.VANTAGE_TABLES]
    return out | ({"vantage_tables": vantage_tables} if vantage_tables else {})


def save(a: Analysis, folder: str | Path) -> Path:
    """Write the analysis to a folder (created; files in it replaced); return its path."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MANIFEST).write_text(json.dumps(manifest(a), default=str, indent=1))
        for name, table in saved_tables(a).items():
            table_to_parquet(getattr(a, name), table, folder / f"{name}.parquet")
    except OSError as exc:
        raise OutputError(f"cannot save the analysis to {folder}: {exc.strerror or exc}") from exc
    return folder


def restore_capture(data: Any) -> Any:
    """A manifest's capture info as a CaptureInfo when it was one, else a namespace."""
    from rocetrace.capture import CaptureInfo

    if not isinstance(data, dict) or not data:
        return None
    fields = {k: v for k, v in data.items() if k != "type"}
    if data.get("type") == "CaptureInfo":
        try:
            regions = [tuple(r) for r in fields.get("corrupt_regions") or []]
            return CaptureInfo(
                **fields | {"path": Path(fields["path"]), "corrupt_regions": regions}
            )
        except (TypeError, KeyError):
            pass  # a CaptureInfo of another version: its facts are still worth showing
    return SimpleNamespace(**fields)


def restore_tolerances(data: Any) -> Any:
    """A manifest's clock as Tolerances, None when it is not one."""
    from rocetrace.analysis.tolerances import Tolerances

    if not isinstance(data, dict):
        return None
    fields = {k: v for k, v in data.items() if k != "type"}
    numbers = all(isinstance(v, int | float) or v is None for v in fields.values())
    try:
        return Tolerances(**fields) if numbers else None
    except TypeError:
        return None


def analysis_of(tables: dict[str, pd.DataFrame], meta: dict[str, Any]) -> Analysis:
    """An Analysis from conformed tables and a manifest's parts; with vantage tables, a
    merged analysis (each vantage's own analysis decodes its files again on first use)."""
    from rocetrace.analysis.result import Analysis

    parts: dict[str, Any] = {
        "capture": restore_capture(meta.get("capture")),
        "options": dict(meta.get("options") or {}),
        "capture_facts": dict(meta.get("capture_facts") or {}),
        "tolerances": restore_tolerances(meta.get("tolerances")),
        "packets_sampled": bool(meta.get("packets_sampled", False)),
    }
    given: dict[str, Any] = {**tables, **parts}
    if not any(name in tables for name in schema.VANTAGE_TABLES):
        return Analysis(**given)
    from rocetrace.vantage.merged_analysis import MergedAnalysis
    from rocetrace.vantage.vantage_api import saved_per_vantage

    per_vantage = saved_per_vantage(tables["vantages"], parts["options"])
    return MergedAnalysis(**given, per_vantage=per_vantage)


def load(folder: str | Path) -> Analysis:
    """An analysis saved with `Analysis.save` (or `rocetrace.store.save`)."""
    folder = Path(folder)
    if not (folder / MANIFEST).is_file():
        raise InvalidResults(f"{folder}: no {MANIFEST}: not a saved analysis")
    meta = json.loads((folder / MANIFEST).read_text())
    if meta.get("schema") != STORE_SCHEMA:
        raise InvalidResults(f"{folder}: {meta.get('schema')!r} is not {STORE_SCHEMA!r}")
    wanted = {**schema.TABLES, **vantage_tables(meta, str(folder))}
    tables = {
        name: table_from_parquet(folder / f"{name}.parquet", table)
        for name, table in wanted.items()
    }
    return analysis_of(tables, meta)


def vantage_tables(meta: dict[str, Any], where: str) -> dict[str, schema.Table]:
    """The vantage tables a manifest says were saved (none for a single capture)."""
    names = meta.get("vantage_tables") or []
    if not isinstance(names, list) or not all(n in schema.VANTAGE_TABLES for n in names):
        raise InvalidResults(f"{where}: vantage_tables {names!r} are not all known tables")
    return {n: schema.VANTAGE_TABLES[n] for n in names}
