"""What `rocetrace report` reads must hold what the report needs.

A JSON summary or a bundle comes from anywhere (edited by hand, cut short, crafted): before
anything is drawn, its fields (a summary's objects; a bundle's manifest and the columns of its
tables that the report reads) are checked against their kinds, and the first that does not fit
is named, e.g. "summary.flows[3].dest_qp: must be an integer, not 'x'" (InvalidResults, exit
status 4). Whatever passes renders like the output of `analyze`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.errors import InvalidResults

INT64 = 1 << 63
# Seconds since the epoch that a calendar can show (or nanoseconds, |v| > 1e14: data.seconds).
MAX_SECONDS, NS_FROM = 2.5e11, 1e14

Field = tuple[str, bool]  # a JSON field: (kind, required: present and not null)
# A table column: (kind, when it must be there: ALWAYS, WITH_ROWS or OPTIONAL, nulls allowed)
Column = tuple[str, str, bool]
ALWAYS, WITH_ROWS, OPTIONAL = "always", "with rows", "optional"


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -INT64 <= v < INT64


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and _finite(float(v))


def _finite(v: float) -> bool:
    return math.isfinite(v) and abs(v) < INT64


def _is_time(v: Any) -> bool:
    return _is_num(v) and (abs(v) < MAX_SECONDS or abs(v) > NS_FROM)


CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "int": (_is_int, "an integer"),
    "count": (lambda v: _is_int(v) and v >= 0, "a count (an integer >= 0)"),
    "num": (_is_num, "a finite number"),
    "time": (_is_time, "a time (seconds or nanoseconds since the epoch)"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "ints": (lambda v: isinstance(v, list) and all(map(_is_int, v)), "a list of integers"),
    "int_or_ints": (
        lambda v: _is_int(v) or (isinstance(v, list) and all(map(_is_int, v))),
        "an integer or a list of integers",
    ),
    "counts": (
        lambda v: isinstance(v, dict) and all(_is_int(n) and n >= 0 for n in v.values()),
        "an object of counts",
    ),
}


COLUMN_KINDS = {
    "int": "integers", "count": "counts (integers >= 0)", "num": "finite numbers",
    "time": "times", "bool": "booleans", "str": "strings", "ints": "lists of integers",
}  # fmt: skip


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def check_object(
    value: Any, fields: Mapping[str, Field], where: str, keep_unknown: bool = False
) -> dict[str, Any]:
    """The object with each known field checked. Absent or null fields are None (unless
    required), or, with `keep_unknown`, left as they are with every other field."""
    if not isinstance(value, dict):
        raise InvalidResults(f"{where}: must be an object, not {_show(value)}")
    out = dict(value) if keep_unknown else {}
    for name, (kind, required) in fields.items():
        v = value.get(name)
        if v is None:
            if required:
                raise InvalidResults(f"{where}.{name}: missing (or null)")
            if not keep_unknown:
                out[name] = None
            continue
        holds, what = CHECKS[kind]
        if not holds(v):
            raise InvalidResults(f"{where}.{name}: must be {what}, not {_show(v)}")
        out[name] = v
    return out


def check_list(value: Any, fields: Mapping[str, Field], where: str) -> list[dict[str, Any]]:
    """A list of objects (null or absent: none), each checked with check_object."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidResults(f"{where}: must be a list, not {_show(value)}")
    return [check_object(item, fields, f"{where}[{i}]") for i, item in enumerate(value)]


# ---- DataFrame columns (a bundle's tables) ----


def _values(col: pd.Series) -> list[Any]:
    """The column's non-null values as Python objects."""
    return [v for v in col.astype(object).tolist() if v is not None and v is not pd.NA and v == v]


def _numbers(col: pd.Series) -> np.ndarray | None:
    """The non-null values as floats, or None when one is not a number (bools neither)."""
    if pd.api.types.is_bool_dtype(col.dtype):
        return None
    if pd.api.types.is_numeric_dtype(col.dtype) and not isinstance(col.dtype, pd.CategoricalDtype):
        floats = col.to_numpy(dtype=float, na_value=np.nan)
        return floats[~np.isnan(floats)]
    values = _values(col)
    if not all(isinstance(v, int | float | np.integer | np.floating) for v in values):
        return None
    if any(isinstance(v, bool | np.bool_) for v in values):
        return None
    return np.asarray(values, dtype=float)


def _column_numbers(col: pd.Series, kind: str) -> bool:
    numbers = _numbers(col)
    if numbers is None or not np.isfinite(numbers).all() or (np.abs(numbers) >= INT64).any():
        return False
    if kind in ("int", "count") and (numbers != np.round(numbers)).any():
        return False
    if kind == "count":
        return bool((numbers >= 0).all())
    if kind == "time":
        size = np.abs(numbers)
        return bool(((size < MAX_SECONDS) | (size > NS_FROM)).all())
    return True


def _column_holds(col: pd.Series, kind: str) -> bool:
    if kind in ("int", "count", "num", "time"):
        return _column_numbers(col, kind)
    if kind == "bool":
        return pd.api.types.is_bool_dtype(col.dtype) or all(
            isinstance(v, bool | np.bool_) for v in _values(col)
        )
    if kind == "str":
        return all(isinstance(v, str) for v in _values(col))
    if kind == "ints":  # lists of frame numbers (Parquet gives them back as arrays)
        return all(_integer_list(v) for v in _values_of_lists(col))
    raise ValueError(f"unknown column kind {kind}")


def _values_of_lists(col: pd.Series) -> list[Any]:
    return [v for v in col.astype(object).tolist() if v is not None]


def _integer_list(v: Any) -> bool:
    if not isinstance(v, list | tuple | np.ndarray):
        return False
    items = list(v)
    return all(
        isinstance(x, int | np.integer)
        and not isinstance(x, bool | np.bool_)
        and -INT64 <= x < INT64
        for x in items
    )


def check_table(df: Any, columns: Mapping[str, Column], where: str) -> pd.DataFrame:
    """A table holding the columns it must (some only when it has rows), each listed column
    of its kind, and no nulls where none are allowed."""
    if not isinstance(df, pd.DataFrame):
        raise InvalidResults(f"{where}: not a table")
    if not df.columns.is_unique:
        raise InvalidResults(f"{where}: a column name appears twice")
    for name, (kind, need, nulls) in columns.items():
        if name not in df.columns:
            if need == ALWAYS or (need == WITH_ROWS and len(df)):
                raise InvalidResults(f"{where}: no column {name!r}")
            continue
        col = df[name]
        if not _column_holds(col, kind):
            raise InvalidResults(f"{where}.{name}: must hold {COLUMN_KINDS[kind]}, not {col.dtype}")
        if not nulls and col.isna().any():
            raise InvalidResults(f"{where}.{name}: has nulls")
        if kind in ("int", "count") and (col.dtype.kind in "fO" or col.dtype == object):
            df[name] = pd.array(_values_or_na(col), dtype="Int64")  # NaN: pd.NA, as int() wants
    return df


def _values_or_na(col: pd.Series) -> list[Any]:
    return [None if v is None or v is pd.NA or v != v else int(v) for v in col.tolist()]


def check_unique(df: pd.DataFrame, column: str, where: str) -> None:
    """An identifier column (a flow's flow_id) names each row once."""
    if column in df.columns and df[column].duplicated().any():
        raise InvalidResults(f"{where}.{column}: the same value on two rows")


def typed_frame(records: list[dict[str, Any]], fields: Mapping[str, Field]) -> pd.DataFrame:
    """Checked JSON objects as a table whose columns have their kinds' dtypes (nullable
    integers: a null is pd.NA, never a float NaN that int() refuses), every field a column."""
    data: dict[str, Any] = {}
    for name, (kind, _) in fields.items():
        values = [r.get(name) for r in records]
        data[name] = pd.array(values, dtype=_DTYPES[kind]) if kind in _DTYPES else values
    return pd.DataFrame(data, index=pd.RangeIndex(len(records)))


_DTYPES: dict[str, Any] = {"int": "Int64", "count": "Int64", "num": "Float64", "bool": "boolean"}
