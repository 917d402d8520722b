"""The decode tasks' results put together: the files ranked, every segment's frames and
merge keys placed in the capture, one CaptureInfo, clock totals, CM MADs and clock head
sample, as the manifest of the shard folder (scale/manifest.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import tolerances
from rocetrace.capture.files import (
    capture_order,
    files_info,
    first_frames,
    joined_info,
    merge_keys,
    merged_mads,
    ranked,
)
from rocetrace.scale.manifest import Manifest, SegmentEntry
from rocetrace.scale.segment_decode import Decoded


def decoded_manifest(
    paths: list[str], done: list[Decoded], partitions: int, options: dict[str, Any]
) -> tuple[Manifest, pd.DataFrame, pd.DataFrame]:
    """The manifest, CM MADs and clock head of the decoded segments of `paths`."""
    by_file = [[d for d in done if d.job.file == f] for f in range(len(paths))]
    infos, totals, entries, mads, heads, max_ts = [], [], [], [], [], []
    rank = ranked(paths, [segs[0].info.first_ts_ns for segs in by_file])
    starts = first_frames(
        sum(d.info.packets for d in by_file[f])
        for f in sorted(range(len(paths)), key=rank.__getitem__)
    )
    for f, segs in enumerate(by_file):
        counts = np.cumsum([0, *(d.info.packets for d in segs)])
        infos.append(
            joined_info(
                [d.info for d in segs], list(counts[:-1]), [d.job.segment.start for d in segs]
            )
        )
        file_totals = tolerances.ClockTotals()
        floor = np.iinfo(np.int64).min
        for d, before in zip(segs, counts, strict=False):
            offset = int(starts[rank[f]]) - 1 + int(before)
            entries.append(
                SegmentEntry(
                    d.job.index,
                    rank[f],
                    d.job.segment.start,
                    d.job.segment.end,
                    d.info.packets,
                    offset,
                    int(before),
                    int(floor),
                )
            )
            floor = max(floor, d.max_ts) if d.max_ts is not None else floor
            file_totals = file_totals.join(d.totals)
            mads.append(d.mads.assign(frame=d.mads["frame"] + int(before), _rank=rank[f]))
        totals.append(file_totals)
        heads.append(segs[0].head)
        maxes = [d.max_ts for d in segs if d.max_ts is not None]
        max_ts.append(max(maxes) if maxes else None)
    info = infos[0] if len(paths) == 1 else files_info(infos, rank, max_ts)
    joined = tolerances.ClockTotals()
    for t in totals:
        joined = joined.join(t, adjacent=False)
    ends = [m for m in max_ts if m is not None]
    manifest = Manifest(partitions, len(paths) > 1, entries, info, joined,
                        max(ends) if ends else None, options,
                        [{"path": p} for p in paths], _pair_rows(done))  # fmt: skip
    return manifest, _mads(mads, starts, len(paths)), merged_head(heads, rank)


def _pair_rows(done: list[Decoded]) -> dict[str, int]:
    """Rows per IP pair hash over every segment (JSON keys: text)."""
    rows: dict[str, int] = {}
    for d in done:
        for pair, n in d.pair_rows.items():
            rows[str(pair)] = rows.get(str(pair), 0) + n
    return rows


def _mads(mads: list[pd.DataFrame], starts: np.ndarray, files: int) -> pd.DataFrame:
    if files == 1:
        whole = pd.concat(mads, ignore_index=True).drop(columns="_rank")
        return whole
    return merged_mads(mads, starts)


def merged_head(heads: list[pd.DataFrame | None], ranks: list[int]) -> pd.DataFrame:
    """The clock's head sample of files merged by time: their heads in capture order."""
    keyed = [
        h.assign(_key=merge_keys(h["ts_ns"].to_numpy(np.int64)), _rank=r)
        for h, r in zip(heads, ranks, strict=True)
        if h is not None
    ]
    if not keyed:
        return pd.DataFrame(
            {c: np.zeros(0, np.int64) for c in ("ts_ns", "src", "dst", "wire_len", "frame")}
        )
    whole = pd.concat(keyed, ignore_index=True)
    by = capture_order(
        whole["_key"].to_numpy(), whole["_rank"].to_numpy(), whole["frame"].to_numpy()
    )
    out = whole.take(by[: tolerances.SAMPLE]).drop(columns=["_key", "_rank"])
    return out.reset_index(drop=True)
