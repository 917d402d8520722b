"""One large capture file cut into segments at record boundaries, for decoding them in
parallel (rocetrace.scale). pcap and pcapng, uncompressed and seekable only: a gzip stream
or a pipe is one segment.

A cut is placed near an even share of the file where the resync kernel finds a whole chain
of plausible records (capture/damage.py's search, strict). That is a guess until verified:
the segment before it must end exactly there (its last record not cut by the boundary),
which the scale engine checks once it was decoded (rocetrace.scale.segment_decode); a segment
whose start was a false boundary is decoded again from where the one before it ended.

pcapng: a segment starts with the interfaces the file declared in its first blocks (where
tcpdump writes them all); a segment that meets another interface block makes the segments
after it be decoded again from its end.
"""

from __future__ import annotations

import copy
import itertools
import mmap
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rocetrace.capture.records import DONE, ScanState, resync, scan
from rocetrace.capture.source import _head, _header_state

MIN_SEGMENT = 32 << 20  # bytes: smaller segments cost more in tasks than they save
_PROBE = 8 << 20  # bytes searched for a boundary after each cut
_HEAD = 4 << 20  # bytes of a pcapng file scanned for its interfaces


@dataclass(frozen=True)
class Segment:
    """Bytes [start, end) of a capture file; `state`: the scan state at `start` (pcapng)."""

    path: str
    start: int
    end: int
    state: ScanState | None = None

    @property
    def span(self) -> tuple[int, int] | None:
        """The bytes to read; None: the whole file, whatever its kind (end -1)."""
        return None if self.end < 0 else (self.start, self.end)


def whole(path: str | os.PathLike[str]) -> Segment:
    """The file as one segment (read to its end, whatever its kind)."""
    return Segment(str(path), 0, -1)


def split_capture(path: str | os.PathLike[str], parts: int) -> list[Segment]:
    """About `parts` segments of the file (fewer when it is small, one when it cannot be cut)."""
    p = Path(path)
    if parts <= 1 or str(p) == "-" or not p.is_file():
        return [whole(p)]
    size = p.stat().st_size
    parts = min(parts, max(1, size // MIN_SEGMENT))
    with open(p, "rb") as fh:
        head, compressed = _head(fh, p)
        if compressed or parts <= 1:
            return [whole(p)]
        fmt, state, start, _ = _header_state(head, p)
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapping:
            data = np.frombuffer(mapping, np.uint8)
            if fmt == "pcapng":
                scan(state, data[:_HEAD], start, 1 << 30)  # registers the interfaces
            cuts = [_boundary(state, data, k * size // parts) for k in range(1, parts)]
            del data
    bounds = [0, *sorted({c for c in cuts if c is not None and c > start}), size]
    seg_state = state if fmt == "pcapng" else None
    return [
        Segment(str(p), a, b, copy.deepcopy(seg_state) if a else None)
        for a, b in itertools.pairwise(bounds)
    ]


def _boundary(state: ScanState, data: np.ndarray, at: int) -> int | None:
    """The first offset at or after `at` where a chain of whole records starts (None: none
    within the probe)."""
    probe = data[at : at + _PROBE]
    found, status = resync(copy.deepcopy(state), probe, 0, at + _PROBE >= len(data), True)
    return at + found if status == DONE else None
