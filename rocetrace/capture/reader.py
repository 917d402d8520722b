"""read_capture / iter_capture: a capture file to the packet table, whole or in chunks.

iter_packet_columns is the pandas-free core (decode writes its chunks as Arrow tables);
read_capture and iter_capture turn its chunks into pandas frames.
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rocetrace.capture.damage import Cursor, note_corrupt, skip_damage
from rocetrace.capture.gunzip import MAX_GZIP_RATIO
from rocetrace.capture.packets import PacketColumns, joined, to_pandas
from rocetrace.capture.records import DONE, LIMIT, PARTIAL, Records, ScanState, scan
from rocetrace.capture.source import Opened, Progress, Windows, open_capture
from rocetrace.capture.table import Walked, build_columns, empty_columns, walk_records
from rocetrace.capture.walk import (
    LT_ETHERNET,
    LT_IPV4,
    LT_IPV6,
    LT_RAW,
    LT_SLL,
    LT_SLL2,
    ROCE_V1,
    ROCE_V2,
    VXLAN_ROCE_V2,
)
from rocetrace.errors import NotACapture, UnsupportedLinkType
from rocetrace.schema import ANOMALIES, ENCAPS

if TYPE_CHECKING:
    import pandas as pd

    from rocetrace.capture.mads import MadRows

SUPPORTED_LINK_TYPES = frozenset({LT_ETHERNET, LT_SLL, LT_SLL2, LT_RAW, LT_IPV4, LT_IPV6})
BLOCK_BYTES = 64 << 20
# read_capture's chunk: the file pages behind it are dropped as it goes, and each chunk's
# decoding temporaries (records, header slots: ~70 B a frame) stay a few tens of MB.
READ_CHUNK_PACKETS = 1 << 18
_UNSUPPORTED = 1 + ANOMALIES.index("unsupported_link_type")


@dataclass
class CaptureInfo:
    """What the file was and what was in it; counters are running totals while iterating."""

    path: Path
    format: str
    compressed: bool
    link_types: list[int] = field(default_factory=list)
    ts_resolution_ns: int = 1000
    snaplen: int = 0
    packets: int = 0
    roce_packets: int = 0
    non_roce_packets: int = 0
    malformed_packets: int = 0
    truncated_packets: int = 0
    incomplete_tail: bool = False
    tail_bytes: int = 0
    corrupt_records: int = 0  # stretches of unreadable records skipped (rocetrace.capture.damage)
    skipped_bytes: int = 0
    corrupt_regions: list[tuple[int, int, int]] = field(
        default_factory=list
    )  # offset, frame, bytes
    first_ts_ns: int | None = None
    last_ts_ns: int | None = None
    anomaly_counts: dict[str, int] = field(default_factory=dict)
    # A capture of several files (capture/files.py): each file's path, rank, packets and
    # first capture frame; empty for one file.
    files: list[Any] = field(default_factory=list)


@dataclass
class Capture:
    """A packet table (schema: rocetrace.schema) and what is known about its file; `mads`
    is the CM MAD side table (rocetrace.capture.mads), None when not read."""

    packets: pd.DataFrame
    info: CaptureInfo
    mads: pd.DataFrame | None = None


def _new_info(o: Opened) -> CaptureInfo:
    info = CaptureInfo(o.path, o.fmt, o.compressed, snaplen=o.snaplen)
    if o.fmt == "pcap":
        info.link_types = [o.state.linktype]
        info.ts_resolution_ns = o.state.frac_ns
    return info


def _ns_per_unit(tsresol: int) -> int:
    if tsresol & 0x80:
        return max(1, 10**9 >> (tsresol & 0x7F))
    return 10 ** max(0, 9 - tsresol)


def _note_interfaces(info: CaptureInfo, o: Opened) -> None:
    """pcapng: link types and finest timestamp resolution; fail if none is decodable."""
    ifs = o.state.interfaces()
    if o.fmt != "pcapng" or not ifs:
        return
    info.link_types = sorted({lt for lt, _, _ in ifs})
    info.ts_resolution_ns = min(_ns_per_unit(res) for _, res, _ in ifs)
    info.snaplen = max(snap for _, _, snap in ifs)
    if not SUPPORTED_LINK_TYPES.intersection(info.link_types):
        raise UnsupportedLinkType(
            f"{o.path}: no interface has a supported link type {info.link_types}"
        )


def _count(info: CaptureInfo, rec: Records, w: Walked) -> None:
    """Add one chunk's frames to the running totals."""
    n = len(rec)
    info.packets += n
    per_encap = np.bincount(w.encap.view(np.uint8), minlength=len(ENCAPS))  # np.isin: 20x slower
    roce = int(per_encap[[ROCE_V2, ROCE_V1, VXLAN_ROCE_V2]].sum())
    info.roce_packets += roce
    info.non_roce_packets += n - roce
    snapped = rec.cap_len < rec.wire_len
    info.truncated_packets += int(snapped.sum())
    bad = (w.anomaly > 0) & (w.anomaly != _UNSUPPORTED) & ~snapped
    info.malformed_packets += int(bad.sum())
    for code, k in enumerate(np.bincount(w.anomaly, minlength=len(ANOMALIES) + 1)[1:], 1):
        if k:
            name = ANOMALIES[code - 1]
            info.anomaly_counts[name] = info.anomaly_counts.get(name, 0) + int(k)
    if n:
        info.first_ts_ns = int(rec.ts_ns[0]) if info.first_ts_ns is None else info.first_ts_ns
        info.last_ts_ns = int(rec.ts_ns[-1])


def _mark_tail(info: CaptureInfo, tail: int, cut: bool) -> None:
    """The file ends inside a record (or a gzip stream is cut): that record is not decoded."""
    info.incomplete_tail = tail > 0 or cut
    info.tail_bytes = tail
    if info.incomplete_tail:
        info.anomaly_counts["truncated_record"] = info.anomaly_counts.get("truncated_record", 0) + 1


Ports = tuple[int, int]


def _chunks(
    o: Opened, windows: Windows, info: CaptureInfo, chunk: int, limit: int | None, ports: Ports,
    mads: list[MadRows] | None = None, first: int = 0,
) -> Generator[PacketColumns, None, None]:  # fmt: skip
    """Scan windows, decode at most `chunk` records at a time, stop at `limit` packets;
    each chunk's CM MADs go to `mads` when given. Damage mid-file is skipped and counted
    (rocetrace.capture.damage); a record cut by the end of the data is an incomplete tail.

    Always yields at least one (possibly empty) chunk; the tail is noted after the last.
    """
    cur = Cursor.start(windows, max(o.start - first, 0))
    remaining, yielded, tail = -1 if limit is None else limit, False, False
    while remaining != 0:
        status = LIMIT
        while remaining != 0 and status == LIMIT:
            want = chunk if remaining < 0 else min(chunk, remaining)
            rec, cur.pos, status = scan(o.state, cur.window, cur.pos, want)
            _note_interfaces(info, o)
            if len(rec):
                remaining -= len(rec) if remaining > 0 else 0
                yielded = True
                yield _decode(cur.window, rec, info, ports, mads)
                windows.decoded(cur.pos)
        if remaining == 0 or (status == DONE and cur.last):
            break
        if status == DONE or (status == PARTIAL and not cur.last):
            cur.refill()
            continue
        tail = _damaged(o, cur, info, status)
        if tail or cur.pos >= len(cur.window):
            break
    if remaining != 0 and (tail or windows.cut):
        _mark_tail(info, len(cur.window) - cur.pos if tail else 0, windows.cut)
    if not yielded:
        yield empty_columns()


def _decode(
    window: np.ndarray, rec: Records, info: CaptureInfo, ports: Ports, mads: list[MadRows] | None
) -> PacketColumns:
    """One chunk of records: walked, counted, built into columns (CM MADs to `mads`)."""
    w = walk_records(window, rec, *ports)
    _count(info, rec, w)
    columns = build_columns(window, rec, info.packets - len(rec) + 1, w)
    if mads is not None:  # decode passes none: it neither imports nor runs this
        from rocetrace.capture.mads import cm_mad_rows

        mads.append(cm_mad_rows(window, rec, w, columns))
    return columns


def _damaged(o: Opened, cur: Cursor, info: CaptureInfo, status: int) -> bool:
    """A record the scan could not read (CORRUPT), or one cut by the end of the data: skip
    to where records resume, counting the damage. True when it is an incomplete tail (the
    cursor stays on the cut record)."""
    if o.fmt == "pcapng" and cur.offset == 0:
        raise NotACapture(f"{o.path}: pcapng section header is cut short or corrupt")
    at, offset = cur.pos, cur.offset
    skipped, resumed = skip_damage(o.state, cur, strict=status == PARTIAL)
    if status == PARTIAL and not resumed:
        cur.pos = at  # nothing readable after it: tcpdump was killed, not damage
        return True
    note_corrupt(info, offset, skipped)
    return False


def iter_packet_columns(
    path: str | os.PathLike[str], *, chunk_packets: int = 1_000_000, roce_port: int = 4791,
    vxlan_port: int = 4789, limit: int | None = None, progress: Progress | None = None,
    block_bytes: int | None = BLOCK_BYTES, mads: list[MadRows] | None = None,
    max_gzip_ratio: float = MAX_GZIP_RATIO, span: tuple[int, int] | None = None,
    state: ScanState | None = None,
) -> Generator[tuple[PacketColumns, CaptureInfo], None, None]:  # fmt: skip
    """iter_capture's chunks as neutral columns (rocetrace.capture.packets), without pandas.

    block_bytes None reads the whole file as one window; `mads` collects each chunk's CM
    MAD rows (rocetrace.capture.mads) as it is decoded; a gzip stream expanding beyond
    max_gzip_ratio (0: any) is refused with LimitExceeded. `span` (with the scan `state`
    at its start, for pcapng): only the records in these bytes of an uncompressed file
    (a segment, capture/split.py; frames numbered from 1, offsets from the span's start).
    """
    o, windows = open_capture(path, block_bytes, progress, max_gzip_ratio, span)
    if state is not None:
        o.state = state
    info = _new_info(o)
    first = span[0] if span else 0
    chunks = _chunks(o, windows, info, chunk_packets, limit, (roce_port, vxlan_port), mads, first)
    try:
        if o.fmt == "pcap" and o.state.linktype not in SUPPORTED_LINK_TYPES:
            raise UnsupportedLinkType(f"{o.path}: link type {o.state.linktype} is not supported")
        for columns in chunks:
            yield columns, info
    finally:
        chunks.close()  # releases its views of the mapping first
        windows.close()


def iter_capture(
    path: str | os.PathLike[str], *, chunk_packets: int = 1_000_000, roce_port: int = 4791,
    vxlan_port: int = 4789, limit: int | None = None, progress: Progress | None = None,
    block_bytes: int = BLOCK_BYTES, max_gzip_ratio: float = MAX_GZIP_RATIO,
) -> Iterator[Capture]:  # fmt: skip
    """The packet table in chunks of at most chunk_packets frames, reading bounded windows.

    Frame numbers continue across chunks; every chunk shares one CaptureInfo whose counters
    are running totals, final once the iterator is exhausted.
    """
    from rocetrace.capture.mads import mads_frame

    mads: list[MadRows] = []
    for columns, info in iter_packet_columns(
        path, chunk_packets=chunk_packets, roce_port=roce_port, vxlan_port=vxlan_port,
        limit=limit, progress=progress, block_bytes=block_bytes, mads=mads,
        max_gzip_ratio=max_gzip_ratio,
    ):  # fmt: skip
        yield Capture(to_pandas(columns), info, mads_frame(mads[-1:]))


def read_capture(
    path: str | os.PathLike[str], *, roce_port: int = 4791, vxlan_port: int = 4789,
    limit: int | None = None, progress: Progress | None = None,
    max_gzip_ratio: float = MAX_GZIP_RATIO,
) -> Capture:  # fmt: skip
    """The whole capture as one packet table (a gzip stream expanding beyond
    max_gzip_ratio, 0 for any, is refused).

    Decoded READ_CHUNK_PACKETS records at a time from one window of the whole file, the
    chunks joined without a copy of the table (packets.joined): the pages of a mapped file
    are dropped from this process once their records are decoded (MappedWindows.decoded),
    so the file is never resident whole beside the table (at 1M packets: a third of the
    peak)."""
    from rocetrace.capture.mads import mads_frame

    mads: list[MadRows] = []
    chunks = list(
        iter_packet_columns(
            path, chunk_packets=READ_CHUNK_PACKETS, roce_port=roce_port, vxlan_port=vxlan_port,
            limit=limit, progress=progress, block_bytes=None, mads=mads,
            max_gzip_ratio=max_gzip_ratio,
        )
    )  # fmt: skip
    info = chunks[-1][1]  # one CaptureInfo, its totals final
    parts = [columns for columns, _ in chunks]
    del chunks  # joined() lets go of each chunk's columns as it joins them
    return Capture(to_pandas(joined(parts)), info, mads_frame(mads))
