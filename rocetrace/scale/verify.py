"""Segment boundaries verified (capture/split.py): a segment must end exactly where the
next begins. One that ran into a cut record there (the boundary was a false guess) makes
the next be decoded again from where it really ended."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rocetrace.scale.executor import Executor
from rocetrace.scale.segment_decode import Decoded, decode_segment
from rocetrace.scale.shards import SHARDS


def verified_segments(done: list[Decoded], ex: Executor) -> list[Decoded]:
    """The decoded segments, those after a false boundary decoded again; a segment that is
    not its file's last loses the incomplete tail its boundary noted."""
    out = list(done)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if a.job.file != b.job.file or a.job.segment.end < 0:
            continue
        if a.ended_at != b.job.segment.start:
            out[i + 1] = _again(b, a.ended_at, ex)
        _untail(out[i])
    return out


def _again(seg: Decoded, start: int, ex: Executor) -> Decoded:
    """The segment decoded again from `start` (its old shards removed first)."""
    for path in Path(seg.job.workdir, SHARDS).glob(f"*/s{seg.job.index:05d}.parquet"):
        path.unlink()
    segment = dataclasses.replace(seg.job.segment, start=start)
    return ex.map(decode_segment, [dataclasses.replace(seg.job, segment=segment)])[0]


def _untail(seg: Decoded) -> None:
    """A segment's end is not its file's: no incomplete tail there."""
    info = seg.info
    if info.incomplete_tail:
        info.incomplete_tail, info.tail_bytes = False, 0
        left = info.anomaly_counts.get("truncated_record", 0) - 1
        if left > 0:
            info.anomaly_counts["truncated_record"] = left
        else:
            info.anomaly_counts.pop("truncated_record", None)
