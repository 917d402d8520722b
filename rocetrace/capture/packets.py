"""The packet table in a neutral form, and its two faces: an Arrow table and a pandas frame.

The decoder yields plain numpy columns, Arrow arrays (nullable integers, flags) and coded
categoricals; the Arrow table (decode's Parquet / CSV) and the pandas frame (read_capture)
are each made from them without re-encoding, so `rocetrace decode` never imports pandas.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
import pyarrow as pa

from rocetrace.capture.layers import COLUMN_SOURCES
from rocetrace.schema import CATEGORY, PACKET_COLUMNS

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Coded:
    """A categorical column: codes into categories, -1 where null."""

    codes: np.ndarray
    categories: Sequence[str] | np.ndarray  # text, or uint64 values (integer categoricals)


Value: TypeAlias = "np.ndarray | pa.Array | pa.ChunkedArray | Coded"


@dataclass
class PacketColumns:
    """One chunk of the packet table: every schema column, in schema order."""

    columns: dict[str, Value]
    rows: int

    def __len__(self) -> int:
        return self.rows


def joined(parts: list[PacketColumns]) -> PacketColumns:
    """Chunks decoded window by window as one table, without a second copy of it: Arrow
    columns become chunked arrays of the chunks' own buffers (the analysis reads them
    chunk by chunk, prepared.py); numpy columns and category codes are concatenated (a few
    narrow columns); coded columns get their categories joined in first-appearance order,
    the order one decode of the whole file gives them. `parts` is emptied as it goes, so
    each chunk's columns are let go of once joined."""
    if len(parts) == 1:
        return parts.pop()
    rows = sum(p.rows for p in parts)
    out: dict[str, Value] = {}
    for name in list(parts[0].columns):
        values = [p.columns.pop(name) for p in parts]
        first = values[0]
        if isinstance(first, Coded):
            out[name] = _joined_coded(values)  # type: ignore[arg-type]
        elif isinstance(first, np.ndarray):
            out[name] = np.concatenate(values)  # type: ignore[arg-type]
        else:
            out[name] = pa.chunked_array(values, first.type)
    parts.clear()
    return PacketColumns(out, rows)


def _joined_coded(values: list[Coded]) -> Coded:
    """Coded chunks as one: fixed category lists (tuples) are the same in every chunk; the
    others (addresses, integer categoricals) are joined in first-appearance order and each
    chunk's codes mapped into the joined list (-1, null, stays -1)."""
    cats = values[0].categories
    if isinstance(cats, tuple):
        return Coded(np.concatenate([v.codes for v in values]), cats)
    # Category lists are short (distinct addresses, atomics' values): loops are fine.
    keys: list[list[object]] = [np.asarray(v.categories).tolist() for v in values]
    position: dict[object, int] = {}
    for k in keys:
        for c in k:
            position.setdefault(c, len(position))
    joined_cats: Sequence[str] | np.ndarray = (
        np.array(list(position), cats.dtype)
        if isinstance(cats, np.ndarray)
        else [str(c) for c in position]
    )
    # The narrowest codes (pandas' own choice for this many categories: it keeps them).
    narrow = next(t for t in (np.int8, np.int16, np.int32) if len(position) < np.iinfo(t).max)
    order = list(position)
    codes = [v.codes if k == order[: len(k)] else _recoded(v.codes, k, position, narrow)
             for v, k in zip(values, keys, strict=True)]  # fmt: skip
    return Coded(np.concatenate(codes, dtype=narrow, casting="unsafe"), joined_cats)


def _recoded(
    codes: np.ndarray, keys: list[object], position: dict[object, int], narrow: type
) -> np.ndarray:
    """A chunk's codes into the joined categories, where its own list is not their start
    (a chunk whose categories are, as they mostly are, the first ones of the joined list
    keeps its codes: only narrowed, in the one pass that concatenates them)."""
    to_joined: np.ndarray = np.array([position[c] for c in keys] + [-1], narrow)
    return to_joined[codes]  # code -1 reads the appended -1


def _arrow_type(name: str, declared: object) -> pa.DataType:
    if isinstance(declared, pa.DataType):
        return declared
    if declared == CATEGORY:
        # Text as large_string (what pandas 3 makes of str categories, so files stay as
        # they were); integer categoricals (atomics) keep their integers; int32 indices.
        value = pa.uint64() if name in COLUMN_SOURCES else pa.large_string()
        return pa.dictionary(pa.int32(), value)
    return pa.from_numpy_dtype(np.dtype(str(declared)))


@cache
def arrow_schema() -> pa.Schema:
    """The packet table's Arrow schema: the same for every chunk and every capture."""
    return pa.schema(pa.field(c.name, _arrow_type(c.name, c.type)) for c in PACKET_COLUMNS)


def dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns a Parquet writer gives dictionary pages: the categorical ones only.
    Integers (PSNs, times) rarely repeat: a dictionary tried on each took a third of the
    writing and made the files larger (1M rows: 0.36 s and 20 MB against 0.22 s and 14 MB)."""
    return [f.name for f in schema if pa.types.is_dictionary(f.type)]


# Arrays are built from their buffers: pa.array() would import pandas to inspect its input.


def numeric_array(
    values: np.ndarray, pa_type: pa.DataType, valid: np.ndarray | None = None
) -> pa.Array:
    """Numpy values (and a bool validity, None: all valid) as Arrow, values not copied."""
    bitmap = None if valid is None else pa.py_buffer(np.packbits(valid, bitorder="little"))
    data = pa.py_buffer(np.ascontiguousarray(values))
    return pa.Array.from_buffers(pa_type, len(values), [bitmap, data])


def _text_array(strings: Sequence[str]) -> pa.Array:
    """Arrow large strings (category lists are short: a loop over them is fine)."""
    encoded = [s.encode() for s in strings]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.large_string(), len(encoded), buffers)


@cache
def _fixed_dictionary(categories: tuple[str, ...]) -> pa.Array:
    """A fixed category list (encap, opcode names, ...) as Arrow, built once."""
    return _text_array(categories)


def _dictionary_array(coded: Coded) -> pa.DictionaryArray:
    """Arrow dictionary array (int32 indices) of coded values."""
    codes, cats = coded.codes, coded.categories
    if isinstance(cats, tuple):
        dictionary = _fixed_dictionary(cats)
    elif isinstance(cats, np.ndarray):
        dictionary = numeric_array(cats.astype(np.uint64), pa.uint64())
    else:
        dictionary = _text_array(cats)
    null, n = codes < 0, len(codes)
    if n and null.all():  # atomics, mostly: indices and validity are lazily zeroed pages
        zeros = pa.py_buffer(np.zeros(4 * n, np.uint8))
        indices = pa.Array.from_buffers(pa.int32(), n, [zeros, zeros], null_count=n)
    else:
        indices = numeric_array(codes.astype(np.int32), pa.int32(), ~null if null.any() else None)
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def to_arrow(packets: PacketColumns) -> pa.Table:
    """The chunk as an Arrow table of arrow_schema() (numpy and Arrow columns not copied)."""
    schema = arrow_schema()
    arrays = []
    for f in schema:
        value = packets.columns[f.name]
        if isinstance(value, Coded):
            arrays.append(_dictionary_array(value))
        elif isinstance(value, np.ndarray):
            arrays.append(numeric_array(value, f.type))
        else:
            arrays.append(value)
    return pa.Table.from_arrays(arrays, schema=schema)


def to_pandas(packets: PacketColumns) -> pd.DataFrame:
    """The chunk as a pandas frame in the dtypes of rocetrace.schema (values not copied)."""
    import pandas as pd

    data: dict[str, object] = {}
    for name, value in packets.columns.items():
        if isinstance(value, Coded):
            cats = value.categories
            index = pd.Index(cats if isinstance(cats, np.ndarray) else list(cats))
            data[name] = pd.Categorical.from_codes(value.codes, categories=index, validate=False)
        elif isinstance(value, np.ndarray):
            data[name] = value
        else:
            data[name] = pd.arrays.ArrowExtensionArray(value)
    return pd.DataFrame(data, copy=False)


def arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
    """A packet table read back from Arrow (Parquet shards) in the dtypes read_capture
    gives: categoricals for dictionaries (chunks' dictionaries unified), numpy for the
    columns that are never null, Arrow-backed nullable columns for the rest."""
    import pandas as pd

    data: dict[str, object] = {}
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_dictionary(column.type):
            data[name] = column.to_pandas().array
        elif column.null_count == 0 and name in _NUMPY_COLUMNS:
            data[name] = column.to_numpy()
        else:
            data[name] = pd.arrays.ArrowExtensionArray(column)
    return pd.DataFrame(data, copy=False)


_NUMPY_COLUMNS = frozenset({"frame", "ts_ns", "cap_len", "wire_len", "order_ts"})
