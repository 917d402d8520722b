"""Issue 18, defect 8: a gzip capture expanding like a decompression bomb is refused (exit
status 7, one line naming the option that lifts the guard) before analyze's memory follows
it: a 0.5 MB .gz of 263 MB took analyze to 2.6 GB."""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from rocetrace.capture import gunzip, read_capture
from rocetrace.cli import main
from rocetrace.commands.options import MAX_GZIP_RATIO as OPTION_DEFAULT
from rocetrace.errors import ExitStatus, LimitExceeded

ROCETRACE = str(Path(sys.executable).with_name("rocetrace"))
PCAP_HEADER = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)


def gzip_bomb(path: Path, mebibytes: int) -> Path:
    """A pcap of empty 60-byte-frame records, `mebibytes` MiB of them, gzip-compressed
    (~500x: one 16-byte record header repeated)."""
    records = struct.pack("<IIII", 1, 0, 0, 60) * 65536  # 1 MiB
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [packer.compress(PCAP_HEADER)]
    parts += [packer.compress(records) for _ in range(mebibytes)]
    path.write_bytes(b"".join([*parts, packer.flush()]))
    return path


def test_the_option_default_is_the_readers() -> None:
    assert OPTION_DEFAULT == gunzip.MAX_GZIP_RATIO


def test_a_gzip_bomb_is_refused_by_analyze_in_bounded_memory(tmp_path: Path) -> None:
    bomb = gzip_bomb(tmp_path / "bomb.pcap.gz", 251)
    assert bomb.stat().st_size < 600_000
    measure = (
        "import resource, subprocess, sys; "
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
        "print(r.stderr, end='')"
    )
    argv = [ROCETRACE, "analyze", str(bomb), "--json", str(tmp_path / "s.json")]
    run = subprocess.run(
        [sys.executable, "-c", measure, *argv], capture_output=True, text=True, check=True
    )
    head, err = run.stdout.split("\n", 1)
    status, peak_kib = map(int, head.split())
    assert status == ExitStatus.LIMIT_EXCEEDED == 7
    assert err.count("\n") == 1 and "gzip ratio guard" in err and "--max-gzip-ratio 0" in err
    assert peak_kib < 700_000, f"peak RSS {peak_kib / 1024:.0f} MiB"
    assert not (tmp_path / "s.json").exists()


@pytest.fixture
def small_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard from 1 MiB of output on, so a small bomb shows it."""
    monkeypatch.setattr(gunzip, "GZIP_RATIO_FLOOR", 1 << 20)


@pytest.mark.usefixtures("small_floor")
def test_the_guard_refuses_and_its_option_lifts_it(tmp_path: Path) -> None:
    bomb = gzip_bomb(tmp_path / "bomb.pcap.gz", 4)
    with pytest.raises(LimitExceeded, match="gzip ratio guard of 200x"):
        read_capture(bomb)
    assert read_capture(bomb, max_gzip_ratio=0).info.packets == 4 * 65536
    out = tmp_path / "pk.parquet"
    assert main(["decode", str(bomb), "-o", str(out)]) == ExitStatus.LIMIT_EXCEEDED
    assert not out.exists() and not list(tmp_path.glob(".*.part"))
    assert main(["decode", str(bomb), "--max-gzip-ratio", "0"]) == 0
    assert main(["decode", str(bomb), "--max-gzip-ratio", "1000"]) == 0
    args = ["analyze", str(bomb), "--json", str(tmp_path / "s.json")]
    assert main(args) == 7 and main([*args, "--max-gzip-ratio", "0"]) == 0


@pytest.mark.usefixtures("small_floor")
def test_an_ordinary_gzip_capture_passes_the_guard(tmp_path: Path) -> None:
    import gzip

    sample = Path(__file__).resolve().parent.parent / "samples" / "go-back-0-livelock.pcap"
    data = sample.read_bytes()
    path = tmp_path / "x.pcap.gz"
    path.write_bytes(gzip.compress(data[:24] + data[24:] * 8))  # 1.5 MiB, ~18x
    info = read_capture(path).info
    assert info.packets == 8 * read_capture(sample).info.packets and info.corrupt_records == 0
