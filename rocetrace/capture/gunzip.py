"""gzip decompression that survives a cut: a file truncated mid-stream ends the data early.

gzip.GzipFile raises EOFError at a cut and drops what it had decompressed in that call; this
reader hands out every byte before the cut and notes it (`cut`), so the packets before it
are kept and the reader reports an incomplete tail. Concatenated members are read in turn.

A guard against decompression bombs: past GZIP_RATIO_FLOOR of output, a stream expanding
more than `max_ratio` times its compressed bytes is refused (LimitExceeded, exit status 7;
`--max-gzip-ratio 0` lifts it). Captures compress 2-20x, synthetic ones with patterned
payloads up to ~100x; a bomb of zeros ~1000x (255 KB became 2.66 GB of analysis memory).
"""

from __future__ import annotations

import zlib
from typing import Protocol

from rocetrace.errors import LimitExceeded, NotACapture

GZIP_MAGIC = b"\x1f\x8b"
RAW_READ = 1 << 20  # compressed bytes read from the file at a time
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib parses the gzip header and checks the trailer
MAX_GZIP_RATIO = 200.0  # decompressed / compressed bytes beyond which a stream is refused
GZIP_RATIO_FLOOR = 64 << 20  # output always allowed, whatever the ratio
INFLATE_STEP = 16 << 20  # output per zlib call: the guard looks between calls


class RawFile(Protocol):
    """The compressed bytes: a file, or a pipe that counts what it read."""

    def read(self, size: int = -1, /) -> bytes: ...
    def tell(self) -> int: ...
    def close(self) -> None: ...


class GunzipReader:
    """A read-only byte stream of a gzip file's decompressed contents."""

    def __init__(self, raw: RawFile, max_ratio: float = 0.0) -> None:
        self.raw = raw
        self.inflater = zlib.decompressobj(_GZIP_WBITS)
        self.input = b""  # compressed bytes not yet handed to the inflater
        self.done = False
        self.cut = False  # the file ended inside a member
        self.max_ratio = max_ratio  # 0: no guard
        self.raw_bytes = self.out_bytes = 0

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all when negative); fewer only at the end of the data."""
        parts, want = [], size if size >= 0 else 1 << 62
        while want > 0 and not self.done:
            data = self._inflate(min(want, INFLATE_STEP))
            parts.append(data)
            want -= len(data)
        return b"".join(parts)

    def tell_raw(self) -> int:
        """Compressed bytes consumed from the file (for progress)."""
        return int(self.raw.tell())

    def close(self) -> None:
        self.raw.close()

    def _inflate(self, want: int) -> bytes:
        if self.inflater.eof and not self._next_member():
            self.done = True
            return b""
        if not self.input:
            self.input = self.raw.read(RAW_READ)
            self.raw_bytes += len(self.input)
            if not self.input:
                out = self._decompress(b"", want)  # output zlib still holds, if any
                if not out:
                    self.cut, self.done = not self.inflater.eof, True
                return out
        return self._decompress(self.input, want)

    def _decompress(self, data: bytes, want: int) -> bytes:
        try:
            out = self.inflater.decompress(data, want)
        except zlib.error as exc:
            raise NotACapture(f"corrupt gzip stream ({exc})") from None
        self.input = (
            self.inflater.unused_data if self.inflater.eof else self.inflater.unconsumed_tail
        )
        self.out_bytes += len(out)
        self._guard()
        return out

    def _guard(self) -> None:
        """Refuse a stream that expands like a decompression bomb (see the module's doc)."""
        consumed = max(self.raw_bytes - len(self.input), 1)  # compressed bytes inflated
        ratio = self.out_bytes / consumed
        if self.max_ratio and self.out_bytes > GZIP_RATIO_FLOOR and ratio > self.max_ratio:
            raise LimitExceeded(
                f"gzip stream expands {ratio:,.0f}x ({self.out_bytes:,} bytes from "
                f"{consumed:,} compressed), beyond the gzip ratio guard of "
                f"{self.max_ratio:g}x: a decompression bomb? --max-gzip-ratio 0 lifts it"
            )

    def _next_member(self) -> bool:
        """After a member's trailer: start the next member, if the file has one."""
        if len(self.input) < 2:
            more = self.raw.read(RAW_READ)
            self.raw_bytes += len(more)
            self.input += more
        if self.input[:2] != GZIP_MAGIC:
            return False  # the end, or padding after the last member (ignored like gzip -d)
        self.inflater = zlib.decompressobj(_GZIP_WBITS)
        return True
