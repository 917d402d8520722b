"""Several vantages at scale: each vantage's files decoded into Parquet shards partitioned
by the same connection key (rocetrace.scale), so one connection's sightings at every
vantage fall in the same partition; per partition (a task: this process or Dask) its
frames keyed as sightings; the clocks fitted capture-wide on the anchors (a sample above
match.MAX_ANCHORS); per partition the sightings matched; then the merged table read back
from the partitions' carried rows and analysed as the in-memory merge does.

The result equals `analyze_vantages` in memory (tests/test_vantage_streaming.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import tolerances
from rocetrace.capture.files import expand_inputs
from rocetrace.scale.engine import _partition_count, decode, shard_folder
from rocetrace.scale.executor import Executor, executor
from rocetrace.scale.keys import LINK
from rocetrace.scale.manifest import load_side_tables
from rocetrace.scale.progress import Stages
from rocetrace.scale.shards import SHARDS, partitions_in
from rocetrace.vantage.match import keyed
from rocetrace.vantage.merge import assembled, carried_by, merged_ids
from rocetrace.vantage.merged_analysis import MergedAnalysis
from rocetrace.vantage.merged_partitions import analyze_by_partition
from rocetrace.vantage.vantage_api import Matched, clocks_and_window, merged_analysis, per_vantage
from rocetrace.vantage.vantage_inputs import Vantage, VantageTable, concat_tables
from rocetrace.vantage.vantage_parts import (
    MatchJobs,
    PartJob,
    SightingPart,
    VantageShards,
    carried_rows,
    match_part,
    sighting_part,
)


def analyze_vantages_streaming(
    vantages: Sequence[Vantage],
    *,
    workdir: str | Path | None = None,
    workers: int = 0,
    scheduler: str | None = None,
    partitions: int | None = None,
    link_speed_bps: float = 100e9,
    roce_port: int = 4791,
    max_gzip_ratio: float = 200.0,
    stages: Stages | None = None,
) -> MergedAnalysis:
    """The merged analysis of several vantages, decoded and matched partition by partition
    (`workers`/`scheduler`: as Dask tasks); shards kept in `workdir` when given."""
    stages = stages or Stages()
    options = {"link_speed_bps": link_speed_bps, "roce_port": roce_port}
    paths = [str(f) for v in vantages for f in v.files]
    with shard_folder(workdir) as folder, executor(workers, scheduler) as ex:
        n = partitions or _partition_count(paths, ex.workers)
        shards = []
        for k, v in enumerate(vantages):
            sub = folder / f"vantage{k}"
            sub.mkdir(exist_ok=True)
            shutil.rmtree(sub / SHARDS, ignore_errors=True)
            files = expand_inputs([str(f) for f in v.files])
            manifest = decode(files, sub, ex, n, roce_port, max_gzip_ratio, options, stages)
            shards.append(VantageShards(_ranked(v, manifest), str(sub), manifest))
        return _merge(tuple(shards), ex, link_speed_bps, roce_port, stages)


def _ranked(v: Vantage, manifest: Any) -> Vantage:
    """The vantage with its files in capture order (ranked by first timestamp)."""
    ranked = sorted(manifest.capture.files, key=lambda f: f.rank)
    if len(ranked) != len(v.files):
        return v
    return Vantage(v.name, tuple(Path(f.path) for f in ranked))


def _merge(
    shards: tuple[VantageShards, ...], ex: Executor, bps: float, roce_port: int, stages: Stages
) -> MergedAnalysis:
    """Sightings per partition, the clocks capture-wide, matching per partition, then the
    merged table and its analysis."""
    found = sorted({p for vs in shards for p in partitions_in(Path(vs.folder))} | {LINK})
    jobs = [PartJob(shards, p) for p in found]
    got = ex.map(sighting_part, jobs, stages.start("sightings", len(jobs)))
    s, extra = _joined(got, found)
    del got  # the joined table holds them
    tols = [_tolerances(vs) for vs in shards]
    stages.note("clocks")
    fits, aligned, order, window = clocks_and_window(s, tols)
    packet = _matched(s, aligned, extra["part"], (order, window), ex, stages)
    tables = [_light_table(vs, s, extra, k) for k, vs in enumerate(shards)]
    options: dict[str, Any] = {"roce_port": roce_port}
    pv = per_vantage([vs.vantage for vs in shards], bps, options)
    matched = Matched(tables, s, packet, aligned, fits, tols)

    part_of_row: list[np.ndarray] = []

    def build(carrier: np.ndarray, when: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
        ids, when = merged_ids(s, carrier, when)
        parts = _carried(shards, s, carrier, ids, extra["part"], ex, stages)
        names = [vs.vantage.name for vs in shards]
        part_of_row.append(extra["part"].to_numpy()[carrier[ids]])
        return assembled(parts, names, s, packet, (carrier, ids, when), extra["ecn"].to_numpy())

    def analyse(merged: pd.DataFrame, info: Any, mads: Any, opts: dict[str, Any]) -> Any:
        stages.note("analysis")
        return analyze_by_partition(merged, info, mads, part_of_row[0], ex, opts)

    return merged_analysis(matched, build, bps, options, pv, analyse=analyse)


def _joined(got: list[SightingPart], found: list[int]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The partitions' sightings as one table in one IP code space, in (vantage, row)
    order, keyed over the whole capture (as match.sightings keys it in memory); beside it
    per sighting its partition, ECN, file and frame in its file."""
    space = pd.Index(np.concatenate([g.space.astype(str).to_numpy() for g in got])).unique()
    frames = []
    for p, g in zip(found, got, strict=True):
        lut = np.append(space.get_indexer(g.space.astype(str)), -1).astype(np.int32)
        s = g.s.assign(src=lut[g.s["src"].to_numpy()], dst=lut[g.s["dst"].to_numpy()])
        frames.append(s.assign(_part=p, _ecn=g.ecn, _file=g.file, _file_frame=g.file_frame))
    s = pd.concat(frames, ignore_index=True)
    s = s.sort_values(["vantage", "row"], kind="stable").reset_index(drop=True)
    cols = ["part", "ecn", "file", "file_frame"]
    extra_out = pd.DataFrame({k: s.pop(f"_{k}").to_numpy() for k in cols})
    lo, hi = np.minimum(s["src"], s["dst"]), np.maximum(s["src"], s["dst"])
    s["conn"] = np.where(lo >= 0, lo.astype(np.int64) * max(len(space), 1) + hi, -1)
    return keyed(s), extra_out


def _tolerances(vs: VantageShards) -> tolerances.Tolerances:
    """A vantage's clock from its decode: the head sample and the totals of every record."""
    _, head = load_side_tables(Path(vs.folder))
    sample = tuple(head[c].to_numpy(np.int64) for c in ("ts_ns", "src", "dst", "wire_len"))
    declared = vs.manifest.capture.ts_resolution_ns
    return tolerances.measure_sample(sample, vs.manifest.totals, declared)  # type: ignore[arg-type]


def _matched(
    s: pd.DataFrame,
    aligned: np.ndarray,
    part: pd.Series,
    how: tuple[list[int], int],
    ex: Executor,
    stages: Stages,
) -> np.ndarray:
    """Packet ids per sighting: each partition matched alone (a task), ids numbered on."""
    order, window = how
    by = pd.Series(np.arange(len(s))).groupby(part.to_numpy()).indices
    groups = [np.asarray(rows) for rows in by.values()]
    jobs = MatchJobs(s, aligned, groups, (tuple(order), window))
    ids = ex.map(match_part, jobs, stages.start("matching", len(jobs)))
    packet = np.empty(len(s), np.int64)
    base = 0
    for rows, got in zip(groups, ids, strict=True):
        packet[rows] = got + base
        base += int(got.max(initial=-1)) + 1
    return packet


def _light_table(vs: VantageShards, s: pd.DataFrame, extra: pd.DataFrame, v: int) -> VantageTable:
    """A vantage's table without its packet columns (those stay in the shards): its
    frames' files and frames in them, its capture facts and CM MADs."""
    at = np.flatnonzero(s["vantage"].to_numpy() == v)  # its frames, in row order
    mads, _ = load_side_tables(Path(vs.folder))
    return VantageTable(
        vs.vantage,
        pd.DataFrame(index=pd.RangeIndex(len(at))),
        extra["file"].to_numpy()[at].astype(np.int16),
        extra["file_frame"].to_numpy()[at],
        vs.manifest.capture,
        mads if len(mads) else None,
    )


def _carried(
    shards: tuple[VantageShards, ...],
    s: pd.DataFrame,
    carrier: np.ndarray,
    ids: np.ndarray,
    part: pd.Series,
    ex: Executor,
    stages: Stages,
) -> list[pd.DataFrame]:
    """Per vantage, the packet rows the merged table carries (merge.carried_by order), read
    back from the shards one partition at a time."""
    of_row = part.to_numpy()
    vantage = s["vantage"].to_numpy()
    wanted = []
    for v in range(len(shards)):
        rows = carried_by(s, carrier, ids, v)
        where = of_row[np.flatnonzero(vantage == v)][rows]  # a vantage's rows are 0..n-1
        wanted.append((rows, where))
    found = sorted({int(p) for _, w in wanted for p in np.unique(w)})
    jobs = [
        PartJob(shards, p, tuple(np.sort(rows[where == p]) for rows, where in wanted))
        for p in found
    ]
    got = ex.map(carried_rows, jobs, stages.start("merged rows", len(jobs)))
    template = _empty_like(got)
    out = []
    for v in range(len(shards)):
        pieces = [t for g in got if (t := g[v]) is not None]
        for g in got:
            g[v] = None  # each piece held once: by `pieces`, then by the joined table
        if not pieces:
            out.append(template)
            continue
        table = concat_tables(pieces)
        del pieces
        table = table.drop(columns=[c for c in ("file", "file_frame") if c in table])
        by = np.argsort(table["frame"].to_numpy(np.int64), kind="stable")
        out.append(table.take(by).reset_index(drop=True))
    return out


def _empty_like(got: list[list[pd.DataFrame | None]]) -> pd.DataFrame:
    for g in got:
        for t in g:
            if t is not None:
                return t.iloc[:0].drop(columns=[c for c in ("file", "file_frame") if c in t])
    return pd.DataFrame()
