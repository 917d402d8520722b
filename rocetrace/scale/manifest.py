"""The shard folder's manifest: what was decoded from which files, how its segments are
numbered, and the capture-wide facts an analysis of the folder needs without decoding
again (`rocetrace analyze WORKDIR`). JSON, beside the shards; the CM MADs and the clock's
head sample are Parquet files beside it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.tolerances import ClockTotals
from rocetrace.capture.files import CaptureFile
from rocetrace.capture.reader import CaptureInfo
from rocetrace.scale.shard_folder import MANIFEST

FORMAT = "rocetrace.shards/1"
MADS = "mads.parquet"
CLOCK = "clock.parquet"


@dataclass
class SegmentEntry:
    """One decoded segment: where its frames go in the capture."""

    index: int
    file: int  # the file's rank
    start: int
    end: int
    packets: int
    frame_offset: int  # its first frame's capture frame, less one
    file_offset: int  # its first frame's frame in its file, less one
    key_floor: int  # the latest timestamp of its file's earlier segments (merge keys)


@dataclass
class Manifest:
    """Everything about a shard folder but its rows."""

    partitions: int
    ordered: bool  # several files: rows carry merge keys (order_ts)
    segments: list[SegmentEntry]
    capture: CaptureInfo
    totals: ClockTotals
    end_ns: int | None
    options: dict[str, Any] = field(default_factory=dict)
    inputs: list[dict[str, Any]] = field(default_factory=list)  # path, size, mtime
    pair_rows: dict[str, int] = field(default_factory=dict)  # rows per IP pair hash
    format: str = FORMAT

    def segment_table(self) -> dict[str, np.ndarray]:
        """Per segment number, its offsets, floor and file rank (arrays indexed by segment)."""
        n = max((s.index for s in self.segments), default=-1) + 1
        out = {k: np.zeros(n, np.int64) for k in ("frame_offset", "file_offset", "key_floor")}
        out["rank"] = np.zeros(n, np.int64)
        for s in self.segments:
            out["frame_offset"][s.index] = s.frame_offset
            out["file_offset"][s.index] = s.file_offset
            out["key_floor"][s.index] = s.key_floor
            out["rank"][s.index] = s.file
        return out

    def save(self, workdir: Path, mads: pd.DataFrame, head: pd.DataFrame) -> None:
        data = dataclasses.asdict(self)
        data["capture"]["path"] = str(self.capture.path)
        (workdir / MANIFEST).write_text(json.dumps(data, indent=1, default=_plain))
        mads.to_parquet(workdir / MADS)
        head.to_parquet(workdir / CLOCK)

    @classmethod
    def load(cls, workdir: Path) -> Manifest:
        data = json.loads((workdir / MANIFEST).read_text())
        if data.get("format") != FORMAT:
            raise ValueError(f"{workdir}: not a rocetrace shard folder ({data.get('format')})")
        info = data["capture"]
        info["path"] = Path(info["path"])
        info["files"] = [CaptureFile(**f) for f in info.get("files", [])]
        info["corrupt_regions"] = [tuple(r) for r in info["corrupt_regions"]]
        data["capture"] = CaptureInfo(**info)
        data["totals"] = ClockTotals(**data["totals"])
        data["segments"] = [SegmentEntry(**s) for s in data["segments"]]
        return cls(**data)


def load_side_tables(workdir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The folder's CM MADs and clock head sample."""
    return pd.read_parquet(workdir / MADS), pd.read_parquet(workdir / CLOCK)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON: {type(value)}")
