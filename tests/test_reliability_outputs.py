"""Issue 18, defects 1 and 3: no output can overwrite the input (same path, symlink, hard
link), and an output appears whole or not at all (a failed or interrupted write leaves no
partial file, and the first error is the one reported)."""

from __future__ import annotations

import errno
import os
import zlib
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_capture_formats import bth, frames_ts, roce_v2

from rocetrace.capture import export as export_module
from rocetrace.capture import write_capture
from rocetrace.cli import main
from rocetrace.errors import ExitStatus, NotACapture

CAPTURE_FRAMES = 400


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    frames = [roce_v2(bth(psn=p)) for p in range(CAPTURE_FRAMES)]
    return write_capture(tmp_path / "cap.pcap", frames_ts(CAPTURE_FRAMES), frames)


def _alias(capture: Path, how: str, name: str) -> Path:
    """The capture under another name: itself, a symlink to it or a hard link."""
    if how == "same":
        return capture
    alias = capture.with_name(name)
    (os.symlink if how == "symlink" else os.link)(capture, alias)
    return alias


def _no_leftovers(folder: Path) -> bool:
    return not list(folder.glob(".*.part"))


OUTPUT_ARGS: dict[str, Callable[[Path], list[str]]] = {
    "analyze -o": lambda out: ["analyze", "-o", str(out)],
    "analyze --json": lambda out: ["analyze", "--json", str(out)],
    "analyze --save-bundle": lambda out: ["analyze", "--save-bundle", str(out)],
    "decode -o": lambda out: ["decode", "-o", str(out)],
    "report -o": lambda out: ["report", "-o", str(out)],
    "report --save-bundle": lambda out: ["report", "--save-bundle", str(out)],
}


@pytest.mark.parametrize("how", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize("option", list(OUTPUT_ARGS))
def test_no_output_can_overwrite_the_input(
    tmp_path: Path, how: str, option: str, capsys: pytest.CaptureFixture
) -> None:
    frames = [roce_v2(bth(psn=p)) for p in range(3)]
    capture = write_capture(tmp_path / "cap.csv", frames_ts(3), frames)  # decode -o wants .csv
    before = capture.read_bytes()
    out = _alias(capture, how, "alias.csv")
    args = OUTPUT_ARGS[option](out)
    assert main([*args, str(capture)]) == ExitStatus.OUTPUT_ERROR
    assert capture.read_bytes() == before
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refusing to overwrite" in err


def test_two_outputs_of_one_command_must_differ(capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    assert main(["analyze", str(capture), "--json", str(out), "-o", str(out)]) == 6
    assert not out.exists()


def test_an_output_behind_a_symlink_replaces_its_target(capture: Path, tmp_path: Path) -> None:
    target, link = tmp_path / "real.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    assert main(["analyze", str(capture), "--json", str(link)]) == 0
    assert link.is_symlink() and target.read_text().startswith("{")


def _gzip_corrupt_after(capture: Path, tmp_path: Path) -> Path:
    """The capture gzip-compressed up to its middle, then a deflate block of the invalid
    type 3 ("invalid block type" from zlib)."""
    data = capture.read_bytes()
    packer = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    packed = packer.compress(data[: len(data) // 2]) + packer.flush(zlib.Z_FULL_FLUSH)
    path = tmp_path / "bad.pcap.gz"
    path.write_bytes(packed + b"\x07" + bytes(64))
    return path


def test_a_corrupt_gzip_mid_decode_leaves_no_parquet_and_says_so(
    capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    """Defect 3: chunks written, then the gzip stream breaks: the typed error, not pyarrow's
    traceback from closing under a running write, and no Parquet file without a footer."""
    monkeypatch.setattr(export_module, "BLOCK_BYTES", 2048)  # several windows, several chunks
    bad = _gzip_corrupt_after(capture, tmp_path)
    out = tmp_path / "pk.parquet"
    with pytest.raises(NotACapture, match="corrupt gzip stream"):
        export_module.decode_capture(bad, out, chunk_packets=16)
    assert not out.exists() and _no_leftovers(tmp_path)
    assert main(["decode", str(bad), "-o", str(out), "--chunk-packets", "16"]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "corrupt gzip stream" in err
    assert not out.exists() and _no_leftovers(tmp_path)


@pytest.mark.parametrize("output", ["pk.parquet", "pk.csv"])
def test_an_interrupted_decode_keeps_the_previous_output(
    capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, output: str
) -> None:
    monkeypatch.setattr(export_module, "BLOCK_BYTES", 2048)
    out = tmp_path / output
    out.write_bytes(b"the previous table")
    calls = 0
    add_chunk = export_module._add_chunk

    def interrupt_later(*args: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 3:
            raise KeyboardInterrupt
        return add_chunk(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(export_module, "_add_chunk", interrupt_later)
    assert main(["decode", str(capture), "-o", str(out), "--chunk-packets", "16"]) == 130
    assert out.read_bytes() == b"the previous table" and _no_leftovers(tmp_path)
    monkeypatch.setattr(export_module, "_add_chunk", add_chunk)
    assert main(["decode", str(capture), "-o", str(out), "--chunk-packets", "16"]) == 0
    if output.endswith(".parquet"):
        assert pq.read_table(out).num_rows == CAPTURE_FRAMES


def test_a_full_disk_leaves_no_partial_report(
    capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's write fails half-way (ENOSPC): exit 6, the old report untouched."""
    out = tmp_path / "r.html"
    out.write_text("the previous report")
    real_write = Path.write_bytes

    def disk_full(self: Path, data: bytes) -> int:  # type: ignore[override]
        real_write(self, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(Path, "write_bytes", disk_full)
    assert main(["analyze", str(capture), "-o", str(out)]) == ExitStatus.OUTPUT_ERROR
    assert out.read_text() == "the previous report" and _no_leftovers(tmp_path)


def test_a_full_disk_during_decode_is_an_output_error(
    capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export_module, "BLOCK_BYTES", 2048)
    writes = 0
    real_write = export_module.ParquetSink.write

    def fill_up(self: export_module.ParquetSink, table: object) -> None:
        nonlocal writes
        writes += 1
        if writes == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_write(self, table)  # type: ignore[arg-type]

    monkeypatch.setattr(export_module.ParquetSink, "write", fill_up)
    out = tmp_path / "pk.parquet"
    assert main(["decode", str(capture), "-o", str(out), "--chunk-packets", "16"]) == 6
    assert not out.exists() and _no_leftovers(tmp_path)
