"""Open a capture file: find it, detect gzip and the format by magic, and hand out windows of
bytes (the whole file at once, or bounded blocks that carry a partial record over)."""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from rocetrace.capture.records import ScanState
from rocetrace.capture.writer import PCAP_MAGIC_NS, PCAP_MAGIC_US
from rocetrace.errors import CaptureNotFound, NotACapture

GZIP_MAGIC = b"\x1f\x8b"
PCAPNG_SHB = b"\x0a\x0d\x0d\x0a"
Progress = Callable[[int, int], None]


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


def _open_raw(path: Path) -> tuple[BinaryIO, bool]:
    """The decompressed byte stream and whether it was gzip (by magic, not by name)."""
    try:
        fh: BinaryIO = open(path, "rb")  # noqa: SIM115  (returned to the caller)
    except FileNotFoundError:
        raise CaptureNotFound(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotACapture(f"{path}: is a directory, not a capture file") from None
    except OSError as exc:
        raise CaptureNotFound(f"{path}: cannot open ({exc.strerror})") from None
    if fh.read(2) == GZIP_MAGIC:
        fh.seek(0)
        return gzip.GzipFile(fileobj=fh, mode="rb"), True  # type: ignore[return-value]
    fh.seek(0)
    return fh, False


def _header_state(head: bytes, path: Path) -> tuple[str, ScanState, int, int]:
    """Format, scan state, first record offset and snap length from the file's first bytes."""
    if len(head) == 0:
        raise NotACapture(f"{path}: empty file, not a pcap or pcapng capture")
    if head[:4] == PCAPNG_SHB:
        return "pcapng", ScanState("pcapng"), 0, 0
    for order in ("<", ">"):
        magic = int.from_bytes(head[:4], "little" if order == "<" else "big")
        if magic in (PCAP_MAGIC_US, PCAP_MAGIC_NS):
            if len(head) < 24:
                raise NotACapture(f"{path}: pcap global header is cut short")
            big = order == ">"
            words = np.frombuffer(head[:24], dtype=np.dtype(order + "u4"))
            frac = 1 if magic == PCAP_MAGIC_NS else 1000
            state = ScanState("pcap", big=big, frac_ns=frac, linktype=int(words[5]) & 0xFFFF)
            return "pcap", state, 24, int(words[4])
    raise NotACapture(f"{path}: not a pcap or pcapng capture (unknown magic {head[:4].hex()})")


def open_capture(path: str | os.PathLike[str]) -> tuple[Opened, BinaryIO]:
    """Identify a capture; returns it with a stream positioned at the file's start."""
    p = Path(path)
    stream, compressed = _open_raw(p)
    try:
        head = stream.read(24)
    except (OSError, EOFError) as exc:
        stream.close()
        raise NotACapture(f"{p}: unreadable gzip stream ({exc})") from None
    try:
        fmt, state, start, snaplen = _header_state(head, p)
    except NotACapture:
        stream.close()
        raise
    stream.seek(0)
    return Opened(p, fmt, compressed, state, start, snaplen, p.stat().st_size), stream


def _raw_position(stream: BinaryIO, compressed: bool) -> int:
    """Bytes consumed from the file on disk (for progress)."""
    raw = getattr(stream, "fileobj", None) if compressed else stream
    return int(raw.tell()) if raw is not None else 0


class BlockReader:
    """Hands out windows: the carried-over tail of the last window plus the next block."""

    def __init__(
        self, opened: Opened, stream: BinaryIO, block: int | None, progress: Progress | None
    ) -> None:
        self.opened, self.stream, self.block, self.progress = opened, stream, block, progress

    def next(self, carry: np.ndarray) -> tuple[np.ndarray, bool]:
        """(window, is_last): is_last when the file has no bytes beyond this window."""
        data = _read_block(self.stream, self.block)
        last = self.block is None or len(data) < self.block
        window = data if len(carry) == 0 else np.concatenate([carry, data])
        if self.progress is not None:
            self.progress(_raw_position(self.stream, self.opened.compressed), self.opened.size)
        return window, last


def _read_block(stream: BinaryIO, block: int | None) -> np.ndarray:
    """Up to `block` bytes (all remaining when None) as a uint8 array."""
    try:
        if block is None:
            if isinstance(stream, io.BufferedReader):
                return np.fromfile(stream, dtype=np.uint8)
            return np.frombuffer(stream.read(), dtype=np.uint8)
        buf = np.empty(block, np.uint8)
        got = stream.readinto(buf)  # type: ignore[attr-defined]
        return buf[: got or 0]
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise NotACapture(f"corrupt compressed stream ({exc})") from None
