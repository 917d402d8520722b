"""Tables cast to their declaration: the declared columns, in order, in the declared dtypes.

Analyses build their tables with whatever numpy / pandas types suit the computation (an
internal -1 for "none", NaN for a missing float, a categorical); the `Analysis` a person
gets has each table cast here once, at the end, so every table has the same dtypes empty or
not. Columns an analysis adds without declaring them are kept after the declared ones (the
schema tests fail on them: declare every column).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.schema.column import CATEGORY, INTS, LISTS, TEXT, TIME, Column, Table


def dtypes(table: Table) -> dict[str, Any]:
    """Column -> pandas dtype of a declared table."""
    return {c.name: c.dtype for c in table.columns}


@cache
def _template(schema: tuple[tuple[str, Any], ...]) -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in schema})


def empty_frame(dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """A new empty table with these columns (in order) and dtypes; built once per schema
    and copied after (a Series per column costs ~0.5 ms, a copy ~10 us)."""
    return _template(tuple(dtypes.items())).copy()


def empty(table: Table) -> pd.DataFrame:
    """The declared table with no rows."""
    return pd.DataFrame({c.name: _null_column(c, 0) for c in table.columns})


def _null_column(col: Column, n: int) -> Any:
    if col.type in LISTS:
        return pd.Series([[] for _ in range(n)], dtype=object)
    if col.type == TIME:
        return pd.Series(pd.NaT, index=range(n), dtype=col.dtype)
    if isinstance(col.type, pa.DataType):  # no list of n Nones to convert (~2 ms per 64k)
        return pd.Series(pd.arrays.ArrowExtensionArray(pa.nulls(n, col.type)))
    return pd.Series(pd.array([None] * n, dtype=col.dtype))


def _arrow(values: pd.Series, col: Column) -> Any:
    """Any integer, float, boolean or text column as the declared Arrow type; NaN, NA and
    the column's `missing` value become null."""
    kind = col.type
    assert isinstance(kind, pa.DataType)
    if isinstance(values.dtype, pd.ArrowDtype) and values.dtype.pyarrow_dtype == kind:
        return values.array
    if isinstance(values.dtype, pd.CategoricalDtype):
        values = values.astype(object)
    if col.missing is not None and values.dtype.kind in "iu":
        raw = values.to_numpy()
        array = pa.array(raw, mask=raw == col.missing).cast(kind)
    elif col.missing is not None:
        numbers = pd.to_numeric(values.astype(object), errors="coerce")
        array = pa.array(numbers.where(numbers != col.missing), type=kind, from_pandas=True)
    else:
        array = pa.array(values, type=kind, from_pandas=True)
    return pd.arrays.ArrowExtensionArray(array)


def _lists(values: pd.Series, col: Column) -> pd.Series:
    """Python lists per row (Parquet hands back numpy arrays; null rows become [])."""
    item = int if col.type == INTS else str
    rows = [[] if v is None or v is pd.NA else [item(x) for x in v] for v in values.tolist()]
    return pd.Series(rows, dtype=object)


def cast(values: pd.Series, col: Column) -> Any:
    """One column in its declared dtype (no copy when it already is)."""
    if values.dtype == col.dtype and col.type not in LISTS:
        return values.array
    if col.type in LISTS:
        return _lists(values, col)
    if col.type == TIME:
        if isinstance(values.dtype, pd.DatetimeTZDtype):
            return values.dt.tz_convert("UTC").astype(col.dtype).array
        ns = pd.to_numeric(values, errors="coerce")
        return pd.to_datetime(ns, unit="ns", utc=True).astype(col.dtype).array
    if col.type == TEXT:
        text = values.astype(object).where(values.notna(), None)
        return pd.array(text.tolist(), dtype=col.dtype)
    if isinstance(col.type, pa.DataType):
        return _arrow(values, col)
    if col.type == CATEGORY and isinstance(values.dtype, pd.ArrowDtype):
        return _integer_category(values)
    return values.astype(col.dtype).array


def _integer_category(values: pd.Series) -> Any:
    """An integer categorical back from its Arrow integers (Parquet keeps no integer
    dictionaries), its categories in numpy's dtype as the decoder makes them."""
    dtype: Any = values.dtype
    known = values.notna().to_numpy(bool)
    numbers = values.to_numpy(dtype.numpy_dtype, na_value=0)
    categories = pd.Index(np.unique(numbers[known]))
    codes = np.where(known, np.searchsorted(categories, numbers), -1)
    return pd.Categorical.from_codes(codes, categories=categories)


def conform(df: pd.DataFrame, table: Table) -> pd.DataFrame:
    """The table with its declared columns in order and dtypes (a declared column the
    frame lacks is all null), undeclared columns after them, a fresh RangeIndex."""
    if _already(df, table):  # built in its declared form (the packet table): nothing to copy
        return df
    df = df.reset_index(drop=True)
    n = len(df)
    none = _no_rows(table) if n == 0 else {}
    data: dict[str, Any] = {}
    for col in table.columns:
        if col.name in none and (col.name not in df or df[col.name].dtype != col.dtype):
            data[col.name] = none[col.name]  # what the cast would give, without its calls
        else:
            data[col.name] = cast(df[col.name], col) if col.name in df else _null_column(col, n)
    for name in df.columns:
        if name not in data:
            data[name] = df[name].array
    out = pd.DataFrame(data, index=pd.RangeIndex(n))
    return out


@cache
def _no_rows(table: Table) -> dict[str, Any]:
    """The declared columns of an empty table, but categoricals: an empty one keeps its
    categories' type from what it was cast from. Built once per declaration (a frame made
    of them copies them): casting an empty column costs ~0.2 ms of pandas calls, and the
    analysis' empty event tables (~110 columns in a clean capture) took ~20 ms."""
    return {c.name: pd.array([], dtype=c.dtype) for c in table.columns if c.type != CATEGORY}


def _already(df: pd.DataFrame, table: Table) -> bool:
    """The frame is its declaration already: names, order, dtypes, no list column to check."""
    if tuple(df.columns) != table.names or not isinstance(df.index, pd.RangeIndex):
        return False
    if df.index.start != 0 or df.index.step != 1:
        return False
    return all(c.type not in LISTS and df[c.name].dtype == c.dtype for c in table.columns)


def mismatches(df: pd.DataFrame, table: Table) -> list[str]:
    """How a frame differs from its declaration: missing, extra and mistyped columns, and
    list columns holding something other than lists (empty when it matches)."""
    out = [f"{table.name}: no column {c}" for c in table.names if c not in df.columns]
    out += [f"{table.name}: undeclared column {c}" for c in df.columns if c not in table.names]
    if list(df.columns) != [c for c in table.names if c in df.columns] + [
        c for c in df.columns if c not in table.names
    ]:
        out.append(f"{table.name}: columns out of order")
    for col in table.columns:
        if col.name not in df.columns:
            continue
        if df[col.name].dtype != col.dtype:
            out.append(f"{table.name}.{col.name}: {df[col.name].dtype}, declared {col.dtype}")
        elif col.type in LISTS and not all(isinstance(v, list) for v in df[col.name]):
            out.append(f"{table.name}.{col.name}: a row is not a list")
    return out


def time_column(ns: Any) -> Any:
    """Integer nanoseconds as a UTC datetime column: one copy of the values, tz_localize's
    (the index over them is a view; pandas' Index copies an array by default, a second
    8 MB per million frames: ~4-5 → ~1-2 ms)."""
    values = np.asarray(ns, dtype=np.int64).view("M8[ns]")
    return pd.DatetimeIndex(values, copy=False).tz_localize("UTC").array
