"""A column of a declared table: name, type, unit, meaning; and a table as a tuple of them.

Types are Arrow types (pandas: `ArrowDtype`, one validity bit per row, the same dtype
whether a table is empty or not) or one of a few tags for what Arrow-backed pandas does
not round-trip through Parquet: categoricals (the packet table), UTC timestamps and lists.
Only `Column.dtype` imports pandas, so `rocetrace decode` never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

U8, U16, U32, U64 = pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()
I64 = pa.int64()  # every integer of an analysis table: PSN arithmetic never overflows
F64 = pa.float64()
FLAG = pa.bool_()
CATEGORY = "category"  # pandas categorical (packet table: addresses, names, statuses)
TEXT = "string"  # Arrow-backed pandas string (NA for missing)
TIME = "datetime64[ns, UTC]"  # a timestamp, beside the same instant as integer `*_ns`
INTS = "list<int64>"  # a Python list of ints per row (frame numbers); object dtype
TEXTS = "list<string>"  # a Python list of str per row (flow keys); object dtype
LISTS = (INTS, TEXTS)


@dataclass(frozen=True)
class Column:
    """One column. `missing` is the value an analysis uses inside for "none" (e.g. -1 for
    a DSCP never seen): it becomes null in the table."""

    name: str
    type: object  # an Arrow type, or one of the tags above, or a numpy dtype name
    meaning: str
    unit: str = ""
    missing: int | None = None

    @property
    def dtype(self) -> Any:
        """The column's pandas dtype (imports pandas: only pandas users pay for it)."""
        import pandas as pd

        if isinstance(self.type, pa.DataType):
            return pd.ArrowDtype(self.type)
        if self.type == TEXT:
            return pd.StringDtype("pyarrow")
        if self.type == TIME:
            return pd.DatetimeTZDtype("ns", "UTC")
        if self.type in LISTS:
            return object
        return self.type

    @property
    def type_name(self) -> str:
        """The type as the docs print it: the pandas dtype's name."""
        if isinstance(self.type, pa.DataType):
            return f"{self.type}[pyarrow]"
        if self.type == TEXT:
            return "string[pyarrow]"
        return str(self.type)


@dataclass(frozen=True)
class Table:
    """A declared table: its name (the `Analysis` attribute and the Parquet file's stem),
    what one row is, and its columns in order."""

    name: str
    row: str
    columns: tuple[Column, ...]
    about: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


def pandas_metadata(columns: tuple[Column, ...], schema: pa.Schema) -> bytes:
    """The `pandas` key of an Arrow schema's metadata for these columns, written without
    pandas (the decoder never imports it): with it, plain `pandas.read_parquet` gives the
    declared dtypes back (Arrow-backed integers stay nullable integers, not float64).
    Parquet keeps dictionaries only for text: an integer categorical comes back as its
    Arrow integers."""
    import json

    def entry(c: Column) -> dict[str, object]:
        kind = schema.field(c.name).type
        if c.type == CATEGORY and pa.types.is_integer(getattr(kind, "value_type", kind)):
            value = kind.value_type
            return {"pandas_type": str(value), "numpy_type": f"{value}[pyarrow]", "metadata": None}
        if c.type == CATEGORY:
            meta = {"num_categories": 0, "ordered": False}
            return {"pandas_type": "categorical", "numpy_type": "int8", "metadata": meta}
        name = str(c.type)
        numpy_type = f"{name}[pyarrow]" if isinstance(c.type, pa.DataType) else name
        return {"pandas_type": name, "numpy_type": numpy_type, "metadata": None}

    described = [{"name": c.name, "field_name": c.name, **entry(c)} for c in columns]
    meta = {"index_columns": [], "column_indexes": [], "columns": described, "attributes": {}}
    return json.dumps(meta | {"creator": {"library": "rocetrace"}}).encode()
