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
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

from rocetrace.analysis.naks import NAK_KINDS
from rocetrace.analysis.result import Analysis
from rocetrace.errors import CaptureNotFound, NotACapture, OutputError
from rocetrace.output import atomic_path
from rocetrace.reports.header import capture_mapping

BUNDLE_SCHEMA = "rocetrace.bundle/1"
TABLES = ("packets", "flows", "retransmissions", "naks", "cnps", "pfc", "findings")


def save_bundle(analysis: Analysis, path: str | Path) -> Path:
    """Write the analysis tables and capture facts to one zip file; return its path."""
    path = Path(path)
    manifest = {
        "schema": BUNDLE_SCHEMA,
        "tables": list(TABLES),
        "capture": capture_mapping(analysis.capture),
        "options": analysis.options,
        "categories": {n: _category_columns(getattr(analysis, n)) for n in TABLES},
    }
    with atomic_path(path) as tmp:  # whole or not at all: rocetrace.output
        try:
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:
                z.writestr("manifest.json", json.dumps(manifest, default=str, indent=1))
                for name in TABLES:
                    buf = io.BytesIO()
                    getattr(analysis, name).to_parquet(buf, index=False)
                    z.writestr(f"{name}.parquet", buf.getvalue())
        except OSError as exc:
            raise OutputError(f"cannot write bundle {path}: {exc.strerror or exc}") from exc
    return path


def _category_columns(df: pd.DataFrame) -> list[str]:
    """Parquet reads an all-null categorical back as object: the manifest remembers them."""
    return [str(c) for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)]


def _read_table(z: zipfile.ZipFile, name: str, categories: list[str]) -> pd.DataFrame:
    df = pd.read_parquet(io.BytesIO(z.read(f"{name}.parquet")))
    for col in categories:
        if col in df and not isinstance(df[col].dtype, pd.CategoricalDtype):
            df[col] = df[col].astype("category")
    return df


def is_bundle(path: str | Path) -> bool:
    """A zip with our manifest (captures, even gzip-compressed ones, are never zips)."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        return "manifest.json" in z.namelist()


def load_bundle(path: str | Path) -> Analysis:
    """The Analysis saved by save_bundle (capture facts as a namespace)."""
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        if manifest.get("schema") != BUNDLE_SCHEMA:
            raise NotACapture(f"{path}: unknown bundle schema {manifest.get('schema')!r}")
        cats = manifest.get("categories", {})
        tables: dict[str, Any] = {n: _read_table(z, n, cats.get(n, [])) for n in TABLES}
    return Analysis(
        capture=SimpleNamespace(**manifest.get("capture", {})),
        options=manifest.get("options", {}),
        **tables,
    )


def is_summary(path: str | Path) -> bool:
    """A JSON file whose schema is rocetrace.summary/<n>."""
    with open(path, "rb") as f:
        head = f.read(1)
    if head not in (b"{", b"[", b" ", b"\n"):
        return False
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return isinstance(data, dict) and str(data.get("schema", "")).startswith("rocetrace.summary/")


def _flows_from_summary(flows: list[dict[str, Any]]) -> pd.DataFrame:
    """The flows table from the summary's flows[] (NAK counts broken out as columns)."""
    rows = []
    for i, f in enumerate(flows):
        row = {k: v for k, v in f.items() if k != "naks"}
        naks = f.get("naks") or {}
        row.update({f"naks_{k}": int(naks.get(k, 0)) for k in NAK_KINDS})
        rows.append({"flow_id": i, **row})
    return pd.DataFrame(rows)


def analysis_from_summary(summary: dict[str, Any]) -> Analysis:
    """An Analysis with the summary's flows, episodes and findings, and no packets."""
    flows = _flows_from_summary(summary.get("flows", []))
    keys = {
        (f["src_ip"], f["dst_ip"], f["dest_qp"]): f["flow_id"] for f in flows.to_dict("records")
    }
    retx = pd.DataFrame(summary.get("retransmissions", []))
    if len(retx):
        key_cols = zip(retx["src_ip"], retx["dst_ip"], retx["dest_qp"], strict=True)
        retx["flow_id"] = [keys.get(k) for k in key_cols]
    findings = pd.DataFrame(summary.get("findings", []))
    if len(findings) and "frames" not in findings:
        findings["frames"] = [[] for _ in range(len(findings))]
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
        capture=SimpleNamespace(**summary.get("capture", {})),
        options={"from_summary": True},
    )


def load_summary(path: str | Path) -> Analysis:
    return analysis_from_summary(json.loads(Path(path).read_text(encoding="utf-8")))


def load_analysis(source: str | Path, **options: Any) -> Analysis:
    """What `rocetrace report` accepts: a bundle, a JSON summary, or a capture (analysed)."""
    source = Path(source)
    if source.is_dir():
        raise NotACapture(f"{source}: is a directory, not a capture, summary or bundle")
    if not source.is_file():
        raise CaptureNotFound(f"{source}: no such file")
    if is_bundle(source):
        return load_bundle(source)
    if is_summary(source):
        return load_summary(source)
    from rocetrace import analyze

    return analyze(source, **options)
