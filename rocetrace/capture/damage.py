"""Damage in the middle of a capture file: find where readable records resume, count what
was skipped and say where, instead of ending the decode there.

A record the scan cannot read (a caplen no snap length allows, a pcapng block length that
is not a multiple of 4 or differs from its copy at the block's end, a bad byte-order magic)
or one that runs past the end of the data while bytes follow it: the C scanner looks forward
for the next chain of plausible records (rocetrace/capture/_kernels_resync.c) and the decode
goes on from there. The skipped stretch is counted (CaptureInfo.corrupt_records,
skipped_bytes, corrupt_regions) and becomes a warning finding `corrupt_records`; a record cut
by the end of the file with nothing readable after it stays an incomplete tail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rocetrace.capture.records import DONE, PARTIAL, ScanState, resync
from rocetrace.capture.source import Windows

if TYPE_CHECKING:
    from rocetrace.capture.reader import CaptureInfo

MAX_REGIONS = 20  # corrupt stretches listed by offset (all are counted)


@dataclass
class Cursor:
    """Where the scan is: the window, the position in it, where the window starts in the
    (decompressed) file and whether it is the last."""

    windows: Windows
    window: np.ndarray
    last: bool
    pos: int
    base: int = 0

    @classmethod
    def start(cls, windows: Windows, pos: int) -> Cursor:
        window, last = windows.next(0)
        return cls(windows, window, last, pos)

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def refill(self) -> None:
        """The next window from the current position on (wider when not one record fit)."""
        self.window, self.last = self.windows.next(self.pos)
        self.base, self.pos = self.base + self.pos, 0


def skip_damage(state: ScanState, cur: Cursor, strict: bool = False) -> tuple[int, bool]:
    """After an unreadable record at the cursor: move it to where records resume, reading
    more windows as the search needs; (bytes skipped, whether records resume). `strict`
    for a record the data's end cuts: only a whole chain of records after it is damage."""
    start, first = cur.offset, cur.pos + 1
    while True:
        at, status = resync(state, cur.window, first, cur.last, strict)
        cur.pos = at
        if status != PARTIAL:
            return cur.offset - start, status == DONE
        cur.refill()
        first = 0


def note_corrupt(info: CaptureInfo, offset: int, skipped: int) -> None:
    """Count one corrupt stretch: where it starts, after which frame, how long it is."""
    info.corrupt_records += 1
    info.skipped_bytes += skipped
    if len(info.corrupt_regions) < MAX_REGIONS:
        info.corrupt_regions.append((offset, info.packets, skipped))
    info.anomaly_counts["corrupt_record"] = info.anomaly_counts.get("corrupt_record", 0) + 1


def describe(regions: list[dict[str, int]], limit: int = 3) -> str:
    """'byte 1,234 after frame 5 (1,060 bytes skipped), ...' of damage_facts' regions."""
    parts = [
        f"byte {r['offset']:,} after frame {r['after_frame']:,} ({r['skipped_bytes']:,} bytes "
        "skipped)"
        for r in regions
    ]
    more = f" and {len(parts) - limit} more" if len(parts) > limit else ""
    return ", ".join(parts[:limit]) + more


def table_anomaly_counts(packets: Any) -> dict[str, int]:
    """Frames per anomaly of a packet table (a DataFrame analysed without its file)."""
    if packets is None or "anomaly" not in packets:
        return {}
    return {
        str(k): int(v) for k, v in packets["anomaly"].dropna().astype(str).value_counts().items()
    }


def damage_facts(capture: Any, packets: Any = None) -> dict[str, Any]:
    """What the summary's capture object says about the file's damage: anomalies per
    reason (frames that are malformed, cut or unsupported; records corrupt or cut) and the
    corrupt stretches (offset in the decompressed file, frames read before, bytes skipped).
    Without a CaptureInfo the anomalies are counted from the packet table."""
    regions = [list(map(int, r)) for r in getattr(capture, "corrupt_regions", None) or []]
    counts = getattr(capture, "anomaly_counts", None)
    counts = table_anomaly_counts(packets) if counts is None else counts
    return {
        "anomalies": {str(k): int(v) for k, v in sorted(counts.items())},
        "corrupt_records": int(getattr(capture, "corrupt_records", 0) or 0),
        "skipped_bytes": int(getattr(capture, "skipped_bytes", 0) or 0),
        "corrupt_regions": [
            {"offset": o, "after_frame": f, "skipped_bytes": n} for o, f, n in regions
        ],
    }
