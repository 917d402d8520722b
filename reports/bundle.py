"""Saved analysis results: what `rocetrace report` re-renders without the capture.

A bundle is ONE zip file (suggested suffix `.rocetrace`) holding `manifest.json` (schema,
capture facts, options) and one Parquet file per analysis table. Every table is kept, so a
report re-rendered from a bundle is identical to one rendered right after the analysis, and a
notebook can load it too. Parquet is already compressed: the zip only stores.

A plain JSON summary (`rocetrace analyze --json`) is accepted as well; it has no packets, so
the report it gives has findings and tables but no graphs.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rocetrace import schema
from rocetrace.analysis.result import Analysis
from rocetrace.errors import (
    CaptureNotFound,
    InvalidResults,
    LimitExceeded,
    NotACapture,
    OutputError,
)
from rocetrace.output import atomic_path
from rocetrace.reports.inputs import (
    FINDING,
    SUMMARY_EPISODE,
    SUMMARY_FLOW,
    TABLES_V1,
    checked_manifest,
    checked_summary,
    checked_tables,
)
from rocetrace.reports.validate import typed_frame
from rocetrace.schema import NAK_KINDS
from rocetrace.schema.conform import conform, empty
from rocetrace.store import (
    MANIFEST,
    STORE_SCHEMA,
    analysis_of,
    manifest,
    saved_tables,
    table_to_parquet,
    vantage_tables,
)

BUNDLE_SCHEMAS = ("rocetrace.bundle/1", STORE_SCHEMA)  # /1: seven tables, no clock
TABLES = tuple(schema.TABLES)  # what a bundle holds: one Parquet file each
SUMMARY_PREFIX = "rocetrace.summary/"
ZIP_MAGIC = b"PK\x03\x04"
# A member expanding beyond this ratio and size is a zip bomb: bundles store, never deflate.
MAX_MEMBER_RATIO, MEMBER_FLOOR = 200, 64 << 20


def save_bundle(analysis: Analysis, path: str | Path) -> Path:
    """Write every table and the capture's info (rocetrace.store) to one zip; return its path."""
    path = Path(path)
    with atomic_path(path) as tmp:  # whole or not at all: rocetrace.output
        try:
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:
                z.writestr(MANIFEST, json.dumps(manifest(analysis), default=str, indent=1))
                for name, table in saved_tables(analysis).items():
                    buf = io.BytesIO()
                    table_to_parquet(getattr(analysis, name), table, buf)
                    z.writestr(f"{name}.parquet", buf.getvalue())
        except OSError as exc:
            raise OutputError(f"cannot write bundle {path}: {exc.strerror or exc}") from exc
    return path


def _member(z: zipfile.ZipFile, name: str, where: str) -> bytes:
    """One file of the bundle's zip; a missing, unreadable or bomb-like one is named."""
    try:
        info = z.getinfo(name)
    except KeyError:
        raise InvalidResults(f"{where}: the bundle holds no {name}") from None
    if info.file_size > max(MAX_MEMBER_RATIO * info.compress_size, MEMBER_FLOOR):
        raise LimitExceeded(f"{where}: {name} expands {info.file_size:,} bytes: not a bundle")
    try:
        return z.read(info)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise InvalidResults(f"{where}: {name} is unreadable ({exc})") from None
    except (NotImplementedError, RuntimeError) as exc:  # compression method, encryption
        raise InvalidResults(f"{where}: {name} cannot be read ({exc})") from None


def _json(data: bytes, where: str) -> Any:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidResults(f"{where}: not JSON ({type(exc).__name__})") from None


def _text_columns_valid(data: bytes) -> None:
    """Raise unless the table's text is valid UTF-8 (pandas would find out only when a
    report reads the column)."""
    schema = pq.read_schema(io.BytesIO(data))
    text = [f.name for f in schema if _is_text(f.type)]
    if text:
        pq.read_table(io.BytesIO(data), columns=text).validate(full=True)


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        return _is_text(kind.value_type)
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _read_table(z: zipfile.ZipFile, name: str, where: str) -> pd.DataFrame:
    """One table of the bundle as plain pandas; an absent one (a bundle/1 holds seven) is
    the declared table with no rows."""
    if f"{name}.parquet" not in z.namelist() and name in schema.TABLES and name not in TABLES_V1:
        return empty(schema.TABLES[name])
    data = _member(z, f"{name}.parquet", where)
    try:
        _text_columns_valid(data)
        return pd.read_parquet(io.BytesIO(data))
    # pyarrow and pandas raise a zoo of types (ArrowInvalid, OSError, ValueError, TypeError,
    # KeyError from damaged pandas metadata...) for bytes that are not a table: all of them
    # mean this member is unreadable, and only this one call is guarded.
    except Exception as exc:
        raise InvalidResults(f"{where}: {name}.parquet is not a readable table ({exc})") from None


def _declared(tables: dict[str, pd.DataFrame], where: str) -> dict[str, pd.DataFrame]:
    """Every checked table cast to its declaration; a value that cannot be is named."""
    out = {}
    declared = {**schema.TABLES, **schema.VANTAGE_TABLES}
    for name, df in tables.items():
        try:
            out[name] = conform(df, declared[name])
        except (ValueError, TypeError, OverflowError, pa.ArrowException) as exc:
            raise InvalidResults(f"{where}: table {name} does not fit its schema ({exc})") from None
    return out


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    # NotImplementedError: a zip version or method zipfile does not know (a flipped byte)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        raise InvalidResults(f"{path}: not a readable bundle (zip: {exc})") from None


def is_bundle(path: str | Path) -> bool:
    """A zip with our manifest (captures, even gzip-compressed ones, are never zips); a file
    that starts as a zip but cannot be read as one is a broken bundle."""
    path = Path(path)
    with open(path, "rb") as f:
        starts_as_zip = f.read(4) == ZIP_MAGIC
    try:
        if not zipfile.is_zipfile(path):
            if starts_as_zip:
                raise zipfile.BadZipFile("cut short or damaged: no central directory")
            return False
        with zipfile.ZipFile(path) as z:
            return MANIFEST in z.namelist()
    # NotImplementedError: a zip version or method zipfile does not know (a flipped byte)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as exc:
        if starts_as_zip:
            raise InvalidResults(f"{path}: not a readable bundle (zip: {exc})") from None
        return False


def load_bundle(path: str | Path) -> Analysis:
    """The Analysis saved by save_bundle, every part checked (reports/inputs.py): a damaged
    or foreign bundle is an InvalidResults naming the part."""
    where = str(path)
    with _open_zip(Path(path)) as z:
        raw = _json(_member(z, MANIFEST, where), f"{where}: {MANIFEST}")
        meta = checked_manifest(raw, BUNDLE_SCHEMAS, f"{where}: {MANIFEST}")
        # the seven tables of bundle/1 first: a damaged one of them is named as before
        names = (*TABLES_V1, *(n for n in schema.TABLES if n not in TABLES_V1))
        tables = {n: _read_table(z, n, where) for n in names}
        extra = {n: _read_table(z, n, where) for n in vantage_tables(raw, where)}
    tables = checked_tables(tables, where) | extra
    return analysis_of(_declared(tables, where), meta)


def _summary_data(path: Path) -> Any:
    """The JSON object of a file that looks like a summary (starts with '{'), else None."""
    with open(path, "rb") as f:
        head = f.read(4096).lstrip()
    if not head.startswith(b"{"):
        return None
    data = _json(path.read_bytes(), str(path))
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(schema, str) or not schema.startswith(SUMMARY_PREFIX):
        raise InvalidResults(f"{path}: JSON, but not a rocetrace summary (schema {schema!r})")
    return data


def is_summary(path: str | Path) -> bool:
    """A JSON file whose schema is rocetrace.summary/<n>."""
    try:
        return _summary_data(Path(path)) is not None
    except InvalidResults:
        return False


def _flows_from_summary(flows: list[dict[str, Any]]) -> pd.DataFrame:
    """The flows table from the summary's flows[] (NAK counts broken out as columns), flow
    ids by position; every column there, typed, even without flows."""
    table = typed_frame(flows, {k: v for k, v in SUMMARY_FLOW.items() if k != "naks"})
    naks = [f.get("naks") or {} for f in flows]
    for kind in NAK_KINDS:
        table[f"naks_{kind}"] = pd.array([int(n.get(kind, 0)) for n in naks], dtype="Int64")
    table.insert(0, "flow_id", pd.RangeIndex(len(flows)))
    return table


def analysis_from_summary(summary: dict[str, Any], where: str = "summary") -> Analysis:
    """An Analysis with the summary's flows, episodes and findings, and no packets; the
    summary is checked first (reports/inputs.py)."""
    summary = checked_summary(summary, where)
    flows = _flows_from_summary(summary["flows"])
    keys: dict[tuple[Any, ...], int] = {}
    for f in flows.to_dict("records"):
        keys.setdefault((f["src_ip"], f["dst_ip"], f["dest_qp"]), f["flow_id"])
    retx = typed_frame(summary["retransmissions"], SUMMARY_EPISODE)
    retx["flow_id"] = _episode_flows(retx, keys, where)
    findings = typed_frame(summary["findings"], FINDING)
    findings["frames"] = [f if f is not None else [] for f in findings["frames"]]
    empty = pd.DataFrame({"ts_ns": pd.Series(dtype="int64"), "flow_id": pd.Series(dtype="Int32")})
    none = pd.DataFrame({"flow_id": pd.Series(dtype="Int32"), "ts_ns": pd.Series(dtype="int64")})
    return Analysis(
        packets=empty,
        flows=flows,
        retransmissions=retx,
        naks=none.assign(frame=0, kind="", psn=0).iloc[0:0],
        cnps=none.iloc[0:0],
        pfc=pd.DataFrame(),
        findings=findings,
        capture=SimpleNamespace(**summary["capture"]),
        options={"from_summary": True},
    )


def _episode_flows(retx: pd.DataFrame, keys: dict[tuple[Any, ...], int], where: str) -> list[int]:
    """Each episode's flow id: the flow of its (src_ip, dst_ip, dest_qp) in flows[]."""
    ids = []
    for k, key in enumerate(zip(retx["src_ip"], retx["dst_ip"], retx["dest_qp"], strict=True)):
        if key not in keys:
            raise InvalidResults(f"{where}.retransmissions[{k}]: no flow {key} in flows[]")
        ids.append(keys[key])
    return ids


def load_summary(path: str | Path) -> Analysis:
    path = Path(path)
    data = _summary_data(path)
    if data is None:
        raise InvalidResults(f"{path}: not a JSON summary")
    return analysis_from_summary(data, f"{path}: summary")


def load_analysis(source: str | Path, **options: Any) -> Analysis:
    """What `rocetrace report` accepts: a bundle, a JSON summary, or a capture (analysed)."""
    source = Path(source)
    if source.is_dir():
        raise NotACapture(f"{source}: is a directory, not a capture, summary or bundle")
    if not source.is_file():
        raise CaptureNotFound(f"{source}: no such file")
    if is_bundle(source):
        return load_bundle(source)
    data = _summary_data(source)
    if data is not None:
        return analysis_from_summary(data, f"{source}: summary")
    from rocetrace import analyze

    return analyze(source, **options)
