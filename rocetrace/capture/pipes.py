"""Reading a pipe, FIFO or stdin so that Ctrl-C always interrupts it.

A buffered file's read(n) loops over read() system calls in C. A signal that lands between
two of them (the first returned data, the second has not blocked yet) only sets Python's
flag; the second read() then blocks until more data comes, and with a writer that keeps the
pipe open and sends nothing (a FIFO, a stalled tcpdump) Ctrl-C hangs. Here every read() is
preceded by a select() that also watches the signal wakeup fd: a signal that arrives before
the wait wakes it, and Python runs its handler (KeyboardInterrupt) between two reads.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from collections.abc import Iterator

# One read() of a pipe returns at most its buffer (64 KiB on Linux); asking for more costs
# nothing, and reading to the end of the data (size < 0) grows by this much at a time.
READ_ALL_STEP = 1 << 20


def read_pipe(fd: int, size: int = -1) -> bytes | bytearray:
    """Up to `size` bytes from `fd` (all when negative): fewer only at the end of the data."""
    with _signal_wakeup() as wake:
        if size < 0:
            return _read_to_end(fd, wake)
        buf = bytearray(size)
        got = _read_into(fd, memoryview(buf), wake)
        del buf[got:]
        return buf  # not copied to bytes: the callers only read it (np.frombuffer, zlib)


def _read_into(fd: int, view: memoryview, wake: int | None) -> int:
    got = 0
    while got < len(view):
        _wait_readable(fd, wake)
        n = os.readv(fd, [view[got:]])
        if n == 0:
            break
        got += n
    return got


def _read_to_end(fd: int, wake: int | None) -> bytes:
    parts: list[bytes] = []
    while True:
        _wait_readable(fd, wake)
        part = os.read(fd, READ_ALL_STEP)
        if not part:
            return b"".join(parts)
        parts.append(part)


def _wait_readable(fd: int, wake: int | None) -> None:
    """Block until `fd` has data (or its end), or a signal arrives: then Python's handler
    runs at the next bytecode, here, and a KeyboardInterrupt leaves the read."""
    if wake is None:
        return
    while True:
        ready, _, _ = select.select([fd, wake], [], [])
        if wake in ready:
            with contextlib.suppress(BlockingIOError):
                os.read(wake, 4096)  # drained; the handler runs before the next call
        if fd in ready:
            return


@contextlib.contextmanager
def _signal_wakeup() -> Iterator[int | None]:
    """A wakeup fd for the duration of one read, the previous one restored after; None off
    the main thread, where Python lets no signal wakeup fd be set (nor runs handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    wake, poke = os.pipe()
    os.set_blocking(wake, False)
    os.set_blocking(poke, False)
    try:
        previous = signal.set_wakeup_fd(poke, warn_on_full_buffer=False)
    except ValueError:  # an interpreter without signal support in this thread
        os.close(wake)
        os.close(poke)
        yield None
        return
    try:
        yield wake
    finally:
        signal.set_wakeup_fd(previous)
        os.close(wake)
        os.close(poke)
