"""The vantages of a multi-point capture: a name per capture point, one or more files each
(the rotated pieces of one capture), read into one packet table per vantage.

Why a table per vantage and not one merged read: each point has its own clock, so nothing
may be ordered across vantages before the clocks are aligned (rocetrace.vantage.clocks).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.capture import CaptureInfo, read_capture
from rocetrace.capture.gunzip import MAX_GZIP_RATIO

PathLike = str | os.PathLike[str]
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")  # a name is also a column suffix


@dataclass(frozen=True)
class Vantage:
    """One capture point: its name and its files, in the order given."""

    name: str
    files: tuple[Path, ...]


def _checked_name(name: str) -> str:
    if not NAME.match(name):
        raise ValueError(
            f"vantage name {name!r}: use a letter, then letters, digits, '_' or '-' (max 32)"
        )
    return name


def parse_vantage(text: str) -> Vantage:
    """'NAME=PATH' or 'NAME=PATH1,PATH2' (the rotated pieces of one capture)."""
    name, eq, paths = text.partition("=")
    pieces = [p for p in paths.split(",") if p]
    if not eq or not pieces:
        raise ValueError(f"{text!r}: expected NAME=PATH or NAME=PATH1,PATH2")
    return Vantage(_checked_name(name.strip()), tuple(Path(p) for p in pieces))


def vantages_of(spec: Mapping[str, Any] | Sequence[Vantage]) -> list[Vantage]:
    """Vantages from {"name": path or [paths]} (or Vantage objects): names unique, at least
    one file each, no file in two vantages (one capture cannot be two points)."""
    if isinstance(spec, Mapping):
        items = [
            Vantage(
                _checked_name(str(k)),
                tuple(Path(p) for p in ([v] if isinstance(v, str | os.PathLike) else v)),
            )
            for k, v in spec.items()
        ]
    else:
        items = list(spec)
    if not items:
        raise ValueError("no vantage given")
    names = [v.name for v in items]
    if len(set(names)) != len(names):
        raise ValueError(f"vantage names must be distinct: {names}")
    files = [os.path.realpath(f) for v in items for f in v.files]
    if any(not v.files for v in items) or len(set(files)) != len(files):
        raise ValueError("each vantage needs its own files (one file cannot be two vantages)")
    return items


@dataclass
class VantageTable:
    """A vantage's frames: its files one after the other (earliest first), frames numbered
    on through the pieces as `mergecap -a` would; `file` and `file_frame` say where each
    frame is in its own file."""

    vantage: Vantage
    packets: pd.DataFrame
    file: np.ndarray  # per row: index into vantage.files
    file_frame: np.ndarray  # per row: frame number within that file
    info: CaptureInfo
    mads: pd.DataFrame | None = None
    infos: list[CaptureInfo] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.vantage.name


def read_vantage(
    v: Vantage, *, roce_port: int = 4791, max_gzip_ratio: float = MAX_GZIP_RATIO
) -> VantageTable:
    """Decode every file of one vantage; pieces ordered by their first timestamp."""
    caps = [read_capture(f, roce_port=roce_port, max_gzip_ratio=max_gzip_ratio) for f in v.files]
    order = sorted(range(len(caps)), key=lambda k: caps[k].info.first_ts_ns or 0)
    v = Vantage(v.name, tuple(v.files[k] for k in order))
    caps = [caps[k] for k in order]
    if len(caps) == 1:
        c = caps[0]
        n = len(c.packets)
        frames = np.arange(1, n + 1, dtype=np.int64)
        return VantageTable(v, c.packets, np.zeros(n, np.int16), frames, c.info, c.mads, [c.info])
    sizes = [len(c.packets) for c in caps]
    packets = concat_tables([c.packets for c in caps])
    packets["frame"] = np.arange(1, len(packets) + 1, dtype=np.uint32)
    file = np.repeat(np.arange(len(caps), dtype=np.int16), sizes)
    file_frame = np.concatenate([np.arange(1, n + 1, dtype=np.int64) for n in sizes])
    infos = [c.info for c in caps]
    info = combined_info(infos, ",".join(str(f) for f in v.files))
    return VantageTable(v, packets, file, file_frame, info, _mads(caps), infos)


def concat_tables(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Packet tables one after another; categoricals keep one category (union) each."""
    from pandas.api.types import union_categoricals

    out = pd.concat(tables, ignore_index=True)
    for name, dtype in tables[0].dtypes.items():
        if isinstance(dtype, pd.CategoricalDtype):
            out[name] = union_categoricals([t[name] for t in tables], ignore_order=True)
    return out


def _mads(caps: list[Any]) -> pd.DataFrame | None:
    """The pieces' CM MAD tables, frames numbered on through the pieces."""
    parts, base = [], 0
    for c in caps:
        if c.mads is not None:
            parts.append(c.mads.assign(frame=c.mads["frame"] + base))
        base += len(c.packets)
    return pd.concat(parts, ignore_index=True) if parts else None


def combined_info(infos: list[CaptureInfo], path: str) -> CaptureInfo:
    """One CaptureInfo for several files: counts summed, the coarsest clock resolution."""
    first = [i.first_ts_ns for i in infos if i.first_ts_ns is not None]
    last = [i.last_ts_ns for i in infos if i.last_ts_ns is not None]
    counts: dict[str, int] = {}
    for i in infos:
        for k, n in i.anomaly_counts.items():
            counts[k] = counts.get(k, 0) + n
    summed = (
        "packets",
        "roce_packets",
        "non_roce_packets",
        "malformed_packets",
        "truncated_packets",
        "corrupt_records",
        "skipped_bytes",
        "tail_bytes",
    )
    return CaptureInfo(
        Path(path),
        "+".join(sorted({i.format for i in infos})),
        any(i.compressed for i in infos),
        link_types=sorted({lt for i in infos for lt in i.link_types}),
        ts_resolution_ns=max(i.ts_resolution_ns for i in infos),
        snaplen=max(i.snaplen for i in infos),
        incomplete_tail=any(i.incomplete_tail for i in infos),
        first_ts_ns=min(first) if first else None,
        last_ts_ns=max(last) if last else None,
        anomaly_counts=counts,
        **{k: sum(getattr(i, k) for i in infos) for k in summed},
    )
