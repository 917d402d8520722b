"""Many files as one capture: `rocetrace analyze DIR/ | FILE... | 'glob*'`.

Files are ranked by their first timestamp (then name): tcpdump's rotated pieces (`-C`/`-W`)
come out in the order they were written. Capture order merges them by time: a record goes
after every record of any file whose running maximum of timestamps is lower (within a file
records keep their order, even where its clock steps back), ties to the lower rank.

Frame numbers stay meaningful: the capture frame of a packet is its file's first frame
(the packets of the files ranked before it, plus one) plus its frame number in the file,
as if the files were concatenated in rank order (`mergecap -a`); `CaptureFile` tells
which file a capture frame is in, and the packet table of a capture of several files has
`file` and `file_frame` columns.
"""

from __future__ import annotations

import copy
import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rocetrace.capture.damage import MAX_REGIONS
from rocetrace.errors import CaptureNotFound, NotACapture

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz", ".gz")


@dataclass(frozen=True)
class CaptureFile:
    """One file of a capture: its path, rank, packets and first capture frame."""

    path: str
    rank: int
    packets: int = 0
    first_frame: int = 1


def expand_inputs(inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The capture files named: a file, a folder (its capture files, tcpdump's rotated
    pieces `x.pcap`, `x.pcap1`, ... included), a glob pattern, or a list of these."""
    items = [inputs] if isinstance(inputs, str | os.PathLike) else list(inputs)
    out: list[str] = []
    for item in items:
        text = str(item)
        if text == "-" or Path(text).is_file():
            out.append(text)
        elif Path(text).is_dir():
            found = [str(p) for p in sorted(Path(text).iterdir()) if _is_capture_name(p)]
            if not found:
                raise NotACapture(f"{text}: is a directory without capture files")
            out += found
        elif glob.has_magic(text):
            out += sorted(glob.glob(text))
        else:
            raise CaptureNotFound(f"{text}: no such file")
    if not out:
        raise CaptureNotFound(f"{', '.join(map(str, items))}: no capture files there")
    return list(dict.fromkeys(out))


def _is_capture_name(path: Path) -> bool:
    """A capture file by its name (tcpdump -C appends a number: x.pcap1, x.pcap2, ...)."""
    name = path.name.lower()
    return path.is_file() and (any(s in name for s in (".pcap", ".cap")) or name.endswith(".gz"))


def ranked(paths: Sequence[str], first_ts: Sequence[int | None]) -> list[int]:
    """The files' ranks: by first timestamp (files without a packet last), then path."""
    keys = [(ts is None, ts or 0, p) for p, ts in zip(paths, first_ts, strict=True)]
    order = sorted(range(len(paths)), key=lambda i: keys[i])
    rank = [0] * len(paths)
    for r, i in enumerate(order):
        rank[i] = r
    return rank


def first_frames(packets_by_rank: Iterable[int]) -> np.ndarray:
    """Each ranked file's first capture frame."""
    counts = np.asarray(list(packets_by_rank), np.int64)
    return np.concatenate(([1], 1 + np.cumsum(counts)))[: len(counts)]


def merge_keys(ts: np.ndarray, carried: int | None = None) -> np.ndarray:
    """A file's merge keys: the running maximum of its timestamps (from `carried`, the
    maximum before these records)."""
    keys = np.maximum.accumulate(ts) if len(ts) else ts.astype(np.int64)
    return np.maximum(keys, carried) if carried is not None else keys


def capture_order(order_ts: np.ndarray, rank: np.ndarray, frame: np.ndarray) -> np.ndarray:
    """The permutation into capture order of rows with these merge keys, file ranks and
    frames in their files."""
    return np.lexsort((frame, rank, order_ts))


def joined_info(
    parts: Sequence[Any], frame_offsets: Sequence[int], byte_offsets: Sequence[int]
) -> Any:
    """One CaptureInfo of consecutive parts of a record sequence (segments of one file, in
    file order; or ranked files): counters summed, damage placed at its capture frame and
    byte, the first part's first timestamp and the last part's last."""
    out = copy.deepcopy(parts[0])
    for info, frames, offset in zip(parts[1:], frame_offsets[1:], byte_offsets[1:], strict=True):
        for key in _COUNTERS:
            setattr(out, key, getattr(out, key) + getattr(info, key))
        out.link_types = sorted(set(out.link_types) | set(info.link_types))
        out.compressed |= info.compressed
        out.ts_resolution_ns = min(out.ts_resolution_ns, info.ts_resolution_ns)
        out.snaplen = max(out.snaplen, info.snaplen)
        out.incomplete_tail |= info.incomplete_tail
        regions = [(o + offset, f + frames, n) for o, f, n in info.corrupt_regions]
        out.corrupt_regions = (out.corrupt_regions + regions)[:MAX_REGIONS]
        for name, k in info.anomaly_counts.items():
            out.anomaly_counts[name] = out.anomaly_counts.get(name, 0) + k
        if out.first_ts_ns is None:
            out.first_ts_ns = info.first_ts_ns
        if info.last_ts_ns is not None:
            out.last_ts_ns = info.last_ts_ns
    return out


_COUNTERS = (
    "packets", "roce_packets", "non_roce_packets", "malformed_packets", "truncated_packets",
    "tail_bytes", "corrupt_records", "skipped_bytes",
)  # fmt: skip


def files_info(infos: Sequence[Any], ranks: Sequence[int], max_ts: Sequence[int | None]) -> Any:
    """The CaptureInfo of several files merged by time (infos in any order, with each
    file's rank and latest timestamp): as joined_info over the ranked files, with the
    earliest first timestamp and the last record's (the latest running maximum's) last."""
    by_rank = sorted(range(len(infos)), key=lambda i: ranks[i])
    ranked_infos = [infos[i] for i in by_rank]
    starts = first_frames(i.packets for i in ranked_infos)
    out = joined_info(ranked_infos, [int(s) - 1 for s in starts], [0] * len(infos))
    firsts = [i.first_ts_ns for i in ranked_infos if i.first_ts_ns is not None]
    out.first_ts_ns = min(firsts) if firsts else None
    last = [(m, r) for r, m in enumerate(max_ts[i] for i in by_rank) if m is not None]
    out.last_ts_ns = ranked_infos[max(last)[1]].last_ts_ns if last else None
    out.files = [
        CaptureFile(str(i.path), r, i.packets, int(s))
        for r, (i, s) in enumerate(zip(ranked_infos, starts, strict=True))
    ]
    out.path = Path(str(ranked_infos[0].path))
    return out


def read_files(paths: Sequence[str], **options: Any) -> Any:
    """Several capture files as one Capture (read_capture's options): merged by time into
    capture order, frames numbered as the ranked files concatenated, with each packet's
    `file` (its path, categorical) and `file_frame`; MADs in (time, rank, frame) order."""
    import pandas as pd

    from rocetrace.capture.reader import Capture, read_capture

    caps = [read_capture(p, **options) for p in paths]
    rank = ranked(paths, [c.info.first_ts_ns for c in caps])
    max_ts = [int(c.packets["ts_ns"].max()) if len(c.packets) else None for c in caps]
    info = files_info([c.info for c in caps], rank, max_ts)
    by_rank = [caps[i] for i in sorted(range(len(caps)), key=rank.__getitem__)]
    starts = first_frames(c.info.packets for c in by_rank)
    tables, keys = [], []
    for r, c in enumerate(by_rank):
        t = c.packets
        keys.append(merge_keys(t["ts_ns"].to_numpy(np.int64)))
        frame = t["frame"].to_numpy(np.int64)
        tables.append(
            t.assign(
                frame=(frame + starts[r] - 1).astype(np.uint32),
                file=np.full(len(t), r, np.int16),
                file_frame=t["frame"],
            )
        )
    whole = _concat(tables)
    order = capture_order(np.concatenate(keys), whole["file"].to_numpy(), whole["file_frame"])
    whole = whole.take(order).reset_index(drop=True)
    names = pd.Index([f.path for f in info.files])
    whole["file"] = pd.Categorical.from_codes(whole["file"].to_numpy(), categories=names)
    mads = [c.mads.assign(_rank=r) for r, c in enumerate(by_rank) if c.mads is not None]
    return Capture(whole, info, merged_mads(mads, starts))


def _concat(tables: list[Any]) -> Any:
    """Packet tables one after the other, categoricals unified (concat makes them text)."""
    import pandas as pd
    from pandas.api.types import union_categoricals

    whole = pd.concat(tables, ignore_index=True)
    for col in tables[0].columns:
        if isinstance(tables[0][col].dtype, pd.CategoricalDtype):
            whole[col] = union_categoricals([t[col] for t in tables])
    return whole


def merged_mads(mads: list[Any], starts: np.ndarray) -> Any:
    """The files' MAD tables (each with its file's `_rank`) as one, frames as capture
    frames, in (time, rank, frame) order: the order CM retries are deduplicated in."""
    import pandas as pd

    if not mads:
        return None
    whole = pd.concat(mads, ignore_index=True)
    rank = whole.pop("_rank").to_numpy(np.int64)
    frame = whole["frame"].to_numpy(np.int64)
    by = np.lexsort((frame, rank, whole["ts_ns"].to_numpy(np.int64)))
    whole["frame"] = frame + starts[rank] - 1
    return whole.take(by).reset_index(drop=True)


def read_inputs(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], **options: Any
) -> Any:
    """One capture file (read_capture), or several (a list, a folder, a glob) merged."""
    from rocetrace.capture.reader import read_capture

    one = isinstance(inputs, str | os.PathLike) and not Path(inputs).is_dir()
    if one and (str(inputs) == "-" or not glob.has_magic(str(inputs))):
        return read_capture(inputs, **options)  # type: ignore[arg-type]
    paths = expand_inputs(inputs)
    return read_capture(paths[0], **options) if len(paths) == 1 else read_files(paths, **options)
