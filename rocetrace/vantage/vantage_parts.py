"""The vantage tasks of a streamed merge, one per partition (run in the caller or as Dask
tasks): every vantage's shards are partitioned by the same connection key, so partition p
of each vantage holds every sighting of the packets of its connections.

`sighting_part` keys a partition's frames as sightings (narrow columns: what the clock fit
and the matching need); `match_part` matches them by aligned time; `carried_rows` reads
back the full packet rows the merged table carries. The heavy packet tables are read one
partition at a time and never held for the whole capture.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

import numpy as np
import pandas as pd

from rocetrace.scale.manifest import Manifest
from rocetrace.scale.partition import load_partition
from rocetrace.vantage.match import match, sightings
from rocetrace.vantage.vantage_inputs import Vantage, VantageTable


@dataclass(frozen=True)
class VantageShards:
    """One vantage decoded into a shard folder (rocetrace.scale), its files ranked."""

    vantage: Vantage
    folder: str
    manifest: Manifest


@dataclass(frozen=True)
class PartJob:
    """A partition of every vantage; `rows`: per vantage, the frames wanted (carried_rows)."""

    shards: tuple[VantageShards, ...]
    partition: int
    rows: tuple[np.ndarray, ...] = field(default_factory=tuple)


@dataclass
class SightingPart:
    """A partition's sightings (match.SIGHTING_COLUMNS, `row` = the vantage's frame - 1,
    src/dst coded in `space`) and per sighting its ECN, file index and frame in that file."""

    s: pd.DataFrame
    space: pd.Index
    ecn: np.ndarray
    file: np.ndarray
    file_frame: np.ndarray


# What keying a frame as a sighting reads (match.sightings), and where it is in its files.
SIGHTING_COLUMNS = [
    "frame", "ts_ns", "src_ip", "dst_ip", "dest_qp", "psn", "opcode", "icrc", "encap",
    "anomaly", "ecn", "src_mac", "pfc_class_enable", *(f"pfc_quanta_{k}" for k in range(8)),
]  # fmt: skip


def _vantage_rows(
    vs: VantageShards, partition: int, columns: list[str] | None = None
) -> pd.DataFrame:
    """The partition's rows of one vantage by frame (a vantage's rows are its frames, its
    files one after another as `mergecap -a` numbers them); `columns`: only these."""
    if columns is not None and len(vs.vantage.files) > 1:
        columns = [*columns, "file", "file_frame"]
    packets, _ = load_partition(Path(vs.folder), partition, vs.manifest, columns)
    by = np.argsort(packets["frame"].to_numpy(np.int64), kind="stable")
    return packets.take(by).reset_index(drop=True)


def _file_index(packets: pd.DataFrame, vs: VantageShards) -> tuple[np.ndarray, np.ndarray]:
    """Per row, its file's index in the vantage's (ranked) files and its frame in that file."""
    if "file" not in packets or len(vs.vantage.files) == 1:
        return np.zeros(len(packets), np.int16), packets["frame"].to_numpy(np.int64)
    names = [str(f) for f in vs.vantage.files]
    index = pd.Index(names).get_indexer(pd.Index(packets["file"].astype(str)))
    return index.astype(np.int16), packets["file_frame"].to_numpy(np.int64)


def _table(vs: VantageShards, packets: pd.DataFrame) -> VantageTable:
    file, file_frame = _file_index(packets, vs)
    return VantageTable(vs.vantage, packets, file, file_frame, vs.manifest.capture)


def sighting_part(job: PartJob) -> SightingPart:
    """The partition's frames of every vantage as sightings (keys are recomputed over the
    whole capture by the caller: they number packets across partitions)."""
    tables = [_table(vs, _vantage_rows(vs, job.partition, SIGHTING_COLUMNS)) for vs in job.shards]
    s, space = sightings(tables)
    frames = np.concatenate([t.packets["frame"].to_numpy(np.int64) for t in tables])
    s["row"] = frames - 1
    ecn = np.concatenate([_ints(t.packets["ecn"]) for t in tables])
    file = np.concatenate([t.file for t in tables])
    file_frame = np.concatenate([t.file_frame for t in tables])
    return SightingPart(s.drop(columns=["key", "occurrence", "conn"]), space, ecn, file, file_frame)


def _ints(col: pd.Series) -> np.ndarray:
    return col.astype("Int64").to_numpy(dtype=np.int64, na_value=-1)


@dataclass(frozen=True)
class MatchJob:
    """A partition's sightings (whole connections) and what the capture-wide fit decided."""

    s: pd.DataFrame
    aligned: np.ndarray
    order: tuple[int, ...]
    window_ns: int


class MatchJobs(Sequence[MatchJob]):
    """The partitions' match jobs, each cut from the sighting table when it is taken: in
    this process one partition's copy exists at a time (Dask takes them all to ship them)."""

    def __init__(
        self, s: pd.DataFrame, aligned: np.ndarray, groups: list[np.ndarray],
        how: tuple[tuple[int, ...], int],
    ) -> None:  # fmt: skip
        self.s, self.aligned, self.groups, self.how = s, aligned, groups, how

    def __len__(self) -> int:
        return len(self.groups)

    @overload
    def __getitem__(self, i: int) -> MatchJob: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[MatchJob]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        rows = self.groups[i]
        return MatchJob(self.s.iloc[rows], self.aligned[rows], *self.how)


def match_part(job: MatchJob) -> np.ndarray:
    """rocetrace.vantage.match.match on one partition: packet ids numbered from 0."""
    return match(job.s.reset_index(drop=True), job.aligned, list(job.order), job.window_ns)


def carried_rows(job: PartJob) -> list[pd.DataFrame | None]:
    """Per vantage, the packet rows of the frames in `job.rows` (sorted frames - 1), every
    packet column: what the merged table carries."""
    out: list[pd.DataFrame | None] = []
    for vs, rows in zip(job.shards, job.rows, strict=True):
        if not len(rows):
            out.append(None)
            continue
        packets = _vantage_rows(vs, job.partition)
        at = np.searchsorted(packets["frame"].to_numpy(np.int64) - 1, rows)
        out.append(packets.take(at).reset_index(drop=True))
    return out
