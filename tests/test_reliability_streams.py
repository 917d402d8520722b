"""Issue 18, defect 4: pipes, FIFOs and '-' (stdin) are read as streams, never seeked, with
the same results as the file; and a real SIGINT mid-read exits 130 leaving no output."""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from test_capture_formats import _pcapng, bth, roce_v2
from test_capture_fuzz import rows

from rocetrace.capture import iter_capture, read_capture

REPO = Path(__file__).resolve().parent.parent
ROCETRACE = str(Path(sys.executable).with_name("rocetrace"))
SAMPLE = REPO / "samples" / "gbn-loss.pcap"


def _variants() -> dict[str, bytes]:
    plain = SAMPLE.read_bytes()
    ng = _pcapng("<", [(1, 9)], [(0, 10 * k, roce_v2(bth(psn=k))) for k in range(50)])
    return {"pcap": plain, "pcap.gz": gzip.compress(plain), "pcapng": ng}


VARIANTS = _variants()


@contextmanager
def fifo_fed(tmp_path: Path, data: bytes) -> Iterator[Path]:
    """A FIFO a thread writes `data` into once a reader opens it."""
    fifo = tmp_path / "capture.fifo"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as w:
            w.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    try:
        yield fifo
    finally:
        writer.join(timeout=30)


@pytest.mark.parametrize("kind", list(VARIANTS))
def test_a_fifo_reads_like_the_file(tmp_path: Path, kind: str) -> None:
    """The old reader seeked back after sniffing the magic: io.UnsupportedOperation."""
    path = tmp_path / f"x.{kind}"
    path.write_bytes(VARIANTS[kind])
    expected = read_capture(path)
    with fifo_fed(tmp_path, VARIANTS[kind]) as fifo:
        got = read_capture(fifo)
    pd.testing.assert_frame_equal(got.packets, expected.packets)
    assert got.info.packets == expected.info.packets and not got.info.incomplete_tail
    (tmp_path / "chunked").mkdir()
    with fifo_fed(tmp_path / "chunked", VARIANTS[kind]) as fifo:  # small windows, chunks
        chunks = [c.packets for c in iter_capture(fifo, chunk_packets=7, block_bytes=512)]
    assert rows(pd.concat(chunks, ignore_index=True)) == rows(expected.packets)


def _run(args: list[str], stdin: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """rocetrace with `stdin` through a pipe (not a file: a file could seek)."""
    return subprocess.run(
        [ROCETRACE, *args], input=stdin, capture_output=True, cwd=cwd, timeout=300, check=False
    )


@pytest.mark.parametrize("kind", ["pcap", "pcap.gz"])
def test_decode_from_a_pipe_writes_the_files_table(tmp_path: Path, kind: str) -> None:
    path = tmp_path / f"x.{kind}"
    path.write_bytes(VARIANTS[kind])
    assert _run(["decode", str(path), "-o", "file.parquet"], b"", tmp_path).returncode == 0
    piped = _run(["decode", "-", "-o", "pipe.parquet"], VARIANTS[kind], tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert pq.read_table(tmp_path / "pipe.parquet").equals(pq.read_table(tmp_path / "file.parquet"))


def test_analyze_from_a_pipe_gives_the_files_summary(tmp_path: Path) -> None:
    from_file = _run(["analyze", str(SAMPLE), "--json", "-"], b"", tmp_path)
    piped = _run(["analyze", "-", "--json", "-", "-o", "r.html"], SAMPLE.read_bytes(), tmp_path)
    assert from_file.returncode == 0 and piped.returncode == 0, piped.stderr
    assert json.loads(piped.stdout) == json.loads(from_file.stdout)
    assert (tmp_path / "r.html").is_file()


def test_sigint_mid_read_exits_130_and_leaves_no_output(tmp_path: Path) -> None:
    """A real Ctrl-C while decode waits on a FIFO (it has opened it: past its imports)."""
    fifo = tmp_path / "in.pcap"
    os.mkfifo(fifo)
    out = tmp_path / "pk.parquet"
    proc = subprocess.Popen(
        [ROCETRACE, "decode", str(fifo), "-o", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    with open(fifo, "wb") as w:  # returns once decode has opened the FIFO
        w.write(SAMPLE.read_bytes()[:4000])
        w.flush()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.decode().strip() == "rocetrace: interrupted"
    assert not out.exists() and not list(tmp_path.glob(".*.part"))


def _sigint_from_another_thread(after_s: float, then_close: int) -> threading.Thread:
    """SIGINT sent by a thread that alone accepts it (the main thread blocks it), so the
    signal never interrupts the main thread's read() system call: only the signal wakeup fd
    can end that wait. The pipe's write end is closed later, so a read that missed the
    signal returns at the end of the data instead of hanging the test."""

    def fire() -> None:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        threading.Event().wait(after_s)
        os.kill(os.getpid(), signal.SIGINT)
        threading.Event().wait(5)
        os.close(then_close)

    return threading.Thread(target=fire, daemon=True)


def test_a_pipe_read_is_interrupted_by_a_signal_its_system_call_never_saw() -> None:
    """The race behind a Ctrl-C that hung `decode` on a FIFO: the signal landed between two
    read() calls of one buffered read, so nothing interrupted the second; the wakeup fd
    ends the wait (rocetrace.capture.pipes)."""
    from rocetrace.capture.pipes import read_pipe

    r, w = os.pipe()
    os.write(w, b"x" * 100)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        _sigint_from_another_thread(0.2, w).start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            read_pipe(r, 1000)
        assert time.monotonic() - start < 4, "woken by the signal, not by the pipe's end"
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        os.close(r)
    assert signal.set_wakeup_fd(-1) == -1, "the wakeup fd before the read is restored"


def test_a_pipe_read_gathers_pieces_and_stops_short_only_at_the_end() -> None:
    from rocetrace.capture.pipes import read_pipe

    r, w = os.pipe()

    def write_pieces() -> None:
        for k in range(5):
            os.write(w, bytes([k]) * 3000)
            threading.Event().wait(0.02)
        os.close(w)

    writer = threading.Thread(target=write_pieces)
    writer.start()
    try:
        assert bytes(read_pipe(r, 7000)) == b"\0" * 3000 + b"\1" * 3000 + b"\2" * 1000
        assert bytes(read_pipe(r, 100_000)) == b"\2" * 2000 + b"\3" * 3000 + b"\4" * 3000
        assert read_pipe(r, -1) == b""
    finally:
        writer.join()
        os.close(r)
