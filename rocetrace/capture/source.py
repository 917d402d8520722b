"""Open a capture file: find it, detect gzip and the format by magic, and hand out windows of
bytes, the whole file at once or bounded ones.

An uncompressed file is memory-mapped: windows are views of the mapping (no copy, no fresh
pages) and the next one starts at the first record the last did not hold whole. A gzip
file is decompressed in blocks; only a record cut by a block's end is copied over. A pipe,
FIFO or stdin ('-') is read as a stream, never seeked (rocetrace.capture.streams).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

import numpy as np

from rocetrace.capture.gunzip import GZIP_MAGIC, MAX_GZIP_RATIO, GunzipReader
from rocetrace.capture.records import MAX_RECORD, ScanState, max_caplen
from rocetrace.capture.streams import PlainStream, Prefixed, Progress, StreamWindows
from rocetrace.capture.writer import PCAP_MAGIC_NS, PCAP_MAGIC_US
from rocetrace.errors import CaptureNotFound, NotACapture

PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"
BYTE_ORDER_MAGICS = (b"\x1a\x2b\x3c\x4d", b"\x4d\x3c\x2b\x1a")  # big-, little-endian
MADV_POPULATE_READ = 22  # Linux >= 5.14: map a range's cached pages in one call
# A whole-file window maps its pages this far ahead of the records decoded, not all at
# once: the file is never resident whole beside the packet table being built (read_capture
# decodes a chunk of 2^18 records at a time, ~35 MB of a 1M-packet capture of 128-byte
# records, which the scan would otherwise fault in page by page).
POPULATE_AHEAD = 64 << 20


@dataclass
class Opened:
    """A capture file's identity and the scan state its header implies."""

    path: Path
    fmt: str
    compressed: bool
    state: ScanState
    start: int  # first record (pcap: after the 24-byte global header)
    snaplen: int
    size: int  # bytes on disk


class Windows(Protocol):
    """Hands out the file's bytes as windows, each starting where the last was consumed."""

    @property
    def cut(self) -> bool:
        """The compressed stream ended early: the data stops before the file's end."""

    def next(self, consumed: int) -> tuple[np.ndarray, bool]: ...
    def decoded(self, upto: int) -> None: ...
    def close(self) -> None: ...


def _open_file(path: Path) -> BinaryIO:
    """The capture file, or stdin for '-' (a duplicate: closing it leaves fd 0 open)."""
    try:
        if str(path) == "-":
            return open(os.dup(0), "rb")
        return open(path, "rb")
    except FileNotFoundError:
        raise CaptureNotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotACapture(f"{path}: is a directory, not a capture file") from None
    except OSError as exc:
        raise CaptureNotFound(f"{path}: cannot open ({exc.strerror})") from None


def _section_header(head: bytes, path: Path) -> None:
    """A pcapng file must open with a whole, sane section header block, as a pcap file with
    its 24-byte header: a file cut or garbled there is not a capture (exit status 4)."""
    if len(head) < 12:
        raise NotACapture(f"{path}: pcapng section header is cut short")
    if head[8:12] not in BYTE_ORDER_MAGICS:
        raise NotACapture(f"{path}: pcapng section header has no byte-order magic")
    length = int.from_bytes(head[4:8], "big" if head[8:12] == BYTE_ORDER_MAGICS[0] else "little")
    if length < 28 or length % 4 or length > MAX_RECORD:
        raise NotACapture(f"{path}: pcapng section header of impossible length {length}")


def _header_state(head: bytes, path: Path) -> tuple[str, ScanState, int, int]:
    """Format, scan state, first record offset and snap length from the file's first bytes."""
    if len(head) == 0:
        raise NotACapture(f"{path}: empty file, not a pcap or pcapng capture")
    if head[:4] == PCAPNG_SHB:
        _section_header(head, path)
        return "pcapng", ScanState("pcapng"), 0, 0
    for order in ("<", ">"):
        magic = int.from_bytes(head[:4], "little" if order == "<" else "big")
        if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            if len(head) < 24:
                raise NotACapture(f"{path}: pcap global header is cut short")
            big = order == ">"
            words = np.frombuffer(head[:24], dtype=np.dtype(order + "u4"))
            frac = 1 if magic == PCAP_MAGIC_NS else 1000
            snaplen = int(words[4])
            state = ScanState("pcap", big=big, frac_ns=frac, linktype=int(words[5]) & 0xFFFF)
            state.max_cap = max_caplen(snaplen)
            return "pcap", state, 24, snaplen
    raise NotACapture(f"{path}: not a pcap or pcapng capture (unknown magic {head[:4].hex()})")


def _gunzip_head(reader: GunzipReader, path: Path) -> bytes:
    """The first 24 decompressed bytes; a gzip stream that gives none is not a capture."""
    try:
        head = reader.read(24)
    except NotACapture as exc:
        raise NotACapture(f"{path}: unreadable gzip stream ({exc})") from None
    if not head:
        raise NotACapture(f"{path}: gzip stream holds no data (cut short or corrupt)")
    return head


def _head(fh: BinaryIO, path: Path) -> tuple[bytes, bool]:
    """The first 24 bytes of the capture (decompressed if gzip) and whether it is gzip."""
    if fh.read(2) != GZIP_MAGIC:
        fh.seek(0)
        return fh.read(24), False
    fh.seek(0)
    return _gunzip_head(GunzipReader(fh), path), True


def open_capture(
    path: str | os.PathLike[str], block: int | None, progress: Progress | None,
    max_gzip_ratio: float = MAX_GZIP_RATIO, span: tuple[int, int] | None = None,
) -> tuple[Opened, Windows]:  # fmt: skip
    """Identify a capture; returns it with its windows (blocks of `block` bytes, or whole).
    A file is read in place; a pipe, FIFO or '-' (stdin) as a stream, never seeking. A gzip
    stream expanding beyond `max_gzip_ratio` (0: any) is refused (rocetrace.capture.gunzip).
    `span`: only these bytes of an uncompressed file (capture/split.py)."""
    p = Path(path)
    fh = _open_file(p)
    try:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return _open_stream(fh, p, block, progress, max_gzip_ratio)
        head, compressed = _head(fh, p)
        fmt, state, start, snaplen = _header_state(head, p)
        fh.seek(0)
        opened = Opened(p, fmt, compressed, state, start, snaplen, os.fstat(fh.fileno()).st_size)
        return opened, _windows(fh, opened, block, progress, max_gzip_ratio, span)
    except BaseException:
        fh.close()
        raise


def _open_stream(
    fh: BinaryIO, path: Path, block: int | None, progress: Progress | None, max_ratio: float
) -> tuple[Opened, Windows]:
    """A capture that cannot seek: the bytes read to identify it are handed out again."""
    plain = PlainStream(fh)
    magic = bytes(plain.read(2))
    raw = Prefixed(plain, magic)
    stream: GunzipReader | Prefixed = raw
    if magic == GZIP_MAGIC:
        stream = GunzipReader(raw, max_ratio)
        head = _gunzip_head(stream, path)
    else:
        head = raw.read(24)
    fmt, state, start, snaplen = _header_state(head, path)
    opened = Opened(path, fmt, magic == GZIP_MAGIC, state, start, snaplen, 0)
    return opened, StreamWindows(Prefixed(stream, head), 0, block, progress)


def _windows(
    fh: BinaryIO,
    o: Opened,
    block: int | None,
    progress: Progress | None,
    max_ratio: float,
    span: tuple[int, int] | None = None,
) -> Windows:
    if o.compressed:
        return StreamWindows(GunzipReader(fh, max_ratio), o.size, block, progress)
    try:
        mapping = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # not a regular file: read it like a stream
        return StreamWindows(PlainStream(fh), o.size, block, progress)
    fh.close()  # the mapping holds its own reference to the file
    return MappedWindows(mapping, block, progress, span)


class MappedWindows:
    """Windows that are views of the file's memory map; pages behind the current window are
    dropped from this process (the page cache keeps them), so memory stays bounded. `span`:
    only these bytes of the file (a segment, capture/split.py)."""

    cut = False

    def __init__(
        self,
        mapping: mmap.mmap,
        block: int | None,
        progress: Progress | None,
        span: tuple[int, int] | None = None,
    ):
        self.mapping, self.block, self.progress = mapping, block, progress
        lo, hi = span or (0, len(mapping))
        self.data = np.frombuffer(mapping, np.uint8)[: max(hi, lo)]
        self.start = self.end = lo  # the current window in the file
        self.released = lo - lo % mmap.PAGESIZE  # pages before this offset were dropped
        self.populated = lo  # pages before this offset were mapped (populate)
        if block is not None and hasattr(mmap, "MADV_SEQUENTIAL"):
            mapping.madvise(mmap.MADV_SEQUENTIAL)

    def next(self, consumed: int) -> tuple[np.ndarray, bool]:
        """The window from the first unconsumed byte; wider when not one record fit."""
        size = len(self.data)
        start = self.start + consumed
        if self.block is None:
            end = size
        else:
            grow = consumed == 0 and self.end > self.start
            end = min(size, (self.end if grow else start) + self.block)
            self._release(start)
        self.start, self.end = start, end
        self._populate(start, end if self.block is not None else start + POPULATE_AHEAD)
        if self.progress is not None:
            self.progress(end, size)
        return self.data[start:end], end >= size

    def decoded(self, upto: int) -> None:
        """The current window's records before `upto` (an offset in it) are decoded: a
        whole-file window drops their pages now, as a bounded one does when it moves on
        (read_capture decodes a whole file a chunk of records at a time, so the file is
        never resident whole beside the packet table)."""
        if self.block is None:
            self._release(self.start + upto)
            self._populate(self.start + upto, self.start + upto + POPULATE_AHEAD)

    def _populate(self, start: int, end: int) -> None:
        """Map the range's pages at once (~2x cheaper than faulting them in one by one),
        but those mapped already."""
        end = min(end, len(self.data))
        first = max(start, self.populated)
        first -= first % mmap.PAGESIZE
        if end <= first:
            return
        self.populated = end
        with contextlib.suppress(OSError, ValueError, AttributeError):  # fault them in instead
            self.mapping.madvise(MADV_POPULATE_READ, first, end - first)

    def _release(self, start: int) -> None:
        done = start - start % mmap.PAGESIZE
        if done > self.released and hasattr(mmap, "MADV_DONTNEED"):
            self.mapping.madvise(mmap.MADV_DONTNEED, self.released, done - self.released)
            self.released = done

    def close(self) -> None:
        del self.data
        # A window still referenced (by a traceback, say) keeps the mapping: GC unmaps it.
        with contextlib.suppress(BufferError):
            self.mapping.close()
