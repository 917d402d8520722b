"""Streaming analysis: capture files -> segments decoded into Parquet shards partitioned by
IP pair -> each partition analysed alone -> the reduce step. Every step is a task on the
executor (scale/executor.py: this process, or Dask workers); memory is bounded by a decode
chunk and the largest partition, not by the capture.

The result equals the in-memory analysis of the same capture (tests/test_scale_streaming.py):
the partition and reduce stages are the registry's (rocetrace.analysis.stages), and the
capture-wide facts (clock, PFC pauses, CM connections, end) are measured the same way.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import cm, pfc, tolerances
from rocetrace.analysis.pipeline import reduce_partitions
from rocetrace.analysis.result import Analysis
from rocetrace.analysis.shared import Shared
from rocetrace.capture.files import expand_inputs
from rocetrace.capture.split import split_capture
from rocetrace.scale.assemble import decoded_manifest
from rocetrace.scale.balance import in_order_of, largest_first, partition_sizes, split_pairs
from rocetrace.scale.executor import Executor, executor
from rocetrace.scale.input_plan import BYTES_PER_PACKET
from rocetrace.scale.keys import LINK, partition_of_pair
from rocetrace.scale.manifest import Manifest, load_side_tables
from rocetrace.scale.partition import PartitionJob, analyze_shard, load_partition
from rocetrace.scale.progress import Stages
from rocetrace.scale.segment_decode import Decoded, DecodeJob, decode_segment
from rocetrace.scale.shards import SHARDS, partitions_in
from rocetrace.scale.verify import verified_segments

PACKETS_PER_PARTITION = 1_000_000  # a partition's analysis peaks near 300 B per packet


def analyze_streaming(
    inputs: str | Sequence[str],
    *,
    workdir: str | Path | None = None,
    workers: int = 0,
    scheduler: str | None = None,
    partitions: int | None = None,
    link_speed_bps: float = 100e9,
    roce_port: int = 4791,
    max_gzip_ratio: float = 200.0,
    stages: Stages | None = None,
) -> Analysis:
    """Analyse capture files (paths, folders, globs) in bounded memory; the shards stay in
    `workdir` when it is given (then `analyze_shards(workdir)` re-analyses them)."""
    paths = expand_inputs(inputs)
    stages = stages or Stages()
    options = {"link_speed_bps": link_speed_bps, "roce_port": roce_port}
    with shard_folder(workdir) as folder, executor(workers, scheduler) as ex:
        n = partitions or _partition_count(paths, ex.workers)
        decode(paths, folder, ex, n, roce_port, max_gzip_ratio, options, stages)
        return analyze_folder(folder, ex, stages, link_speed_bps)


def analyze_shards(
    workdir: str | Path,
    *,
    workers: int = 0,
    scheduler: str | None = None,
    link_speed_bps: float | None = None,
    stages: Stages | None = None,
) -> Analysis:
    """Re-analyse a shard folder (`--workdir` of an earlier run) without decoding again."""
    with executor(workers, scheduler) as ex:
        return analyze_folder(Path(workdir), ex, stages or Stages(), link_speed_bps)


@contextmanager
def shard_folder(workdir: str | Path | None) -> Iterator[Path]:
    """The folder the shards go to: `workdir` (emptied of earlier shards, kept after), or
    a temporary one removed afterwards."""
    if workdir is not None:
        folder = Path(workdir)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(folder / SHARDS, ignore_errors=True)
        yield folder
        return
    folder = Path(tempfile.mkdtemp(prefix="rocetrace-shards-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _partition_count(paths: list[str], workers: int) -> int:
    """Partitions for about PACKETS_PER_PARTITION packets each (guessed from file sizes),
    and at least two per worker so that every worker has work (when the IP pairs allow)."""
    size = sum(Path(p).stat().st_size for p in paths if Path(p).is_file())
    wanted = math.ceil(size / BYTES_PER_PACKET / PACKETS_PER_PARTITION)
    return max(1, wanted, 2 * workers if workers > 1 else 1)


def _segments_wanted(ex: Executor) -> int:
    """Segments to cut a large file into: two per worker (one at a time in one process)."""
    return 2 * ex.workers if ex.workers > 1 else 1


def decode(
    paths: list[str], folder: Path, ex: Executor, partitions: int, roce_port: int,
    max_gzip_ratio: float, options: dict[str, Any], stages: Stages,
) -> Manifest:  # fmt: skip
    """Every file decoded into the folder's shards (large files in segments, in parallel);
    the manifest and side tables written beside them."""
    parts = _segments_wanted(ex)
    jobs: list[DecodeJob] = []
    for f, path in enumerate(paths):
        for k, seg in enumerate(split_capture(path, parts)):
            job = DecodeJob(
                str(folder), seg, len(jobs), f, k == 0, partitions, roce_port, max_gzip_ratio,
                len(paths) > 1,
            )  # fmt: skip
            jobs.append(job)
    done: list[Decoded] = ex.map(decode_segment, jobs, stages.start("decode", len(jobs)))
    done = verified_segments(done, ex)
    manifest, mads, head = decoded_manifest(paths, done, partitions, options)
    manifest.save(folder, mads, head)
    return manifest


def shared_of(
    folder: Path, manifest: Manifest, link_speed_bps: float
) -> tuple[Shared, pd.DataFrame]:
    """The capture-wide facts, from the manifest, its side tables and the link shards; and
    the link shards' PFC columns (the PFC frames stay in the Analysis' packets)."""
    mads, head = load_side_tables(folder)
    sample = tuple(head[c].to_numpy(np.int64) for c in ("ts_ns", "src", "dst", "wire_len"))
    declared = manifest.capture.ts_resolution_ns
    tol = tolerances.measure_sample(sample, manifest.totals, declared)  # type: ignore[arg-type]
    # every column: the Analysis keeps the link-level frames as packet-table rows
    link, _ = load_partition(folder, LINK, manifest)
    shared = Shared(
        tol, pfc.pfc_table(link, link_speed_bps), cm.cm_connections(mads), manifest.end_ns,
        link_speed_bps,
    )  # fmt: skip
    return shared, link


def partition_jobs(
    folder: Path, manifest: Manifest, shared: Shared
) -> tuple[list[PartitionJob], np.ndarray]:
    """A task per partition, and its rows; a partition of more than PACKETS_PER_PARTITION
    rows (its IP pairs hashed together) is cut by IP pair into tasks within the limit, or
    as near as its largest pair allows, when the manifest counts its pairs."""
    found = partitions_in(folder) or [LINK]
    rows = {int(k): v for k, v in manifest.pair_rows.items()}
    hashes = np.array(list(rows), np.int64)
    home = partition_of_pair(hashes, manifest.partitions)
    jobs, sizes = [], []
    for p, total in zip(found, partition_sizes(folder, found), strict=True):
        mine = {int(h): rows[int(h)] for h in hashes[home == p]}
        groups = split_pairs(mine, PACKETS_PER_PARTITION) if mine else []
        if len(groups) <= 1:
            jobs.append(PartitionJob(str(folder), p, manifest, shared))
            sizes.append(int(total))
            continue
        for g in groups:
            jobs.append(PartitionJob(str(folder), p, manifest, shared, g))
            sizes.append(sum(mine[h] for h in g))
    return jobs, np.array(sizes, np.int64)


def analyze_folder(
    folder: Path, ex: Executor, stages: Stages, link_speed_bps: float | None = None
) -> Analysis:
    """The partition and reduce stages over a shard folder."""
    manifest = Manifest.load(folder)
    speed = link_speed_bps or float(manifest.options.get("link_speed_bps", 100e9))
    options = {**manifest.options, "link_speed_bps": speed}
    shared, link = shared_of(folder, manifest, speed)
    jobs, sizes = partition_jobs(folder, manifest, shared)
    tick = stages.start("partitions", len(jobs))
    order = largest_first(sizes)
    parts = in_order_of(lambda items: ex.map(analyze_shard, items, tick), jobs, order)

    def rerun(i: int, given: Shared) -> Any:
        return ex.map(analyze_shard, [dataclasses.replace(jobs[i], shared=given)])[0]

    stages.note("reduce")
    kept = link.iloc[pfc.pfc_rows(link)].reset_index(drop=True) if len(link) else link
    return reduce_partitions(parts, shared, manifest.capture, options, kept=kept, rerun=rerun)
