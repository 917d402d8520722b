"""Streams a capture is read from when it is not memory-mapped: a gzip file's decompressed
bytes, or a pipe, FIFO or stdin, which cannot seek (the bytes read to recognise the format
are handed out again), cut into windows that each start where the last was consumed."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import BinaryIO

import numpy as np

from rocetrace.capture.gunzip import GunzipReader
from rocetrace.capture.pipes import read_pipe

Progress = Callable[[int, int], None]


class PlainStream:
    """An unmappable file (a pipe) read as a stream, in the GunzipReader's terms; counts
    what it read (a pipe has no position to tell). A pipe, FIFO or terminal is read from
    its descriptor so that Ctrl-C interrupts a read that waits (rocetrace.capture.pipes);
    it must be the file's only reader from its first byte."""

    cut = False

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.consumed = 0
        self.pipe = not stat.S_ISREG(os.fstat(fh.fileno()).st_mode)

    def read(self, size: int = -1) -> bytes | bytearray:
        data = read_pipe(self.fh.fileno(), size) if self.pipe else self.fh.read(size)
        self.consumed += len(data)
        return data

    def tell_raw(self) -> int:
        return self.consumed

    tell = tell_raw  # the GunzipReader's raw file asks for tell()

    def close(self) -> None:
        self.fh.close()


class Prefixed:
    """A stream whose first bytes were read already (to identify the capture without
    seeking): they are handed out again before the rest."""

    def __init__(self, stream: GunzipReader | PlainStream | Prefixed, prefix: bytes) -> None:
        self.stream, self.prefix = stream, prefix

    @property
    def cut(self) -> bool:
        return self.stream.cut

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all when negative); fewer only at the end of the data."""
        if size < 0:
            data, self.prefix = self.prefix + self.stream.read(-1), b""
            return data
        taken, self.prefix = self.prefix[:size], self.prefix[size:]
        return taken + self.stream.read(size - len(taken)) if size > len(taken) else taken

    def tell_raw(self) -> int:
        return self.stream.tell_raw()

    tell = tell_raw

    def close(self) -> None:
        self.stream.close()


class StreamWindows:
    """Windows of a decompressed (or unmappable) stream: the unconsumed end of the last
    window, then the next `block` bytes."""

    def __init__(
        self, stream: GunzipReader | PlainStream | Prefixed, size: int, block: int | None,
        progress: Progress | None,
    ) -> None:  # fmt: skip
        self.stream, self.size, self.block, self.progress = stream, size, block, progress
        self.window = np.empty(0, np.uint8)

    @property
    def cut(self) -> bool:
        return self.stream.cut

    def next(self, consumed: int) -> tuple[np.ndarray, bool]:
        """(window, is_last): is_last when the stream has no bytes beyond this window."""
        data = np.frombuffer(self.stream.read(-1 if self.block is None else self.block), np.uint8)
        carry = self.window[consumed:]
        self.window = data if len(carry) == 0 else np.concatenate([carry, data])
        if self.progress is not None:
            self.progress(self.stream.tell_raw(), self.size)
        return self.window, self.block is None or len(data) < self.block

    def decoded(self, upto: int) -> None:
        """Nothing to drop: a window read from a stream is freed as a whole."""

    def close(self) -> None:
        self.stream.close()
