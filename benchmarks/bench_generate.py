"""Generation speed of `rocetrace generate bulk` (the vectorized path), in packets per second,
on the benchmarks' capture (bulk_capture.py: RC WRITE / SEND / READ mix on 16 QPs).

    python benchmarks/bench_generate.py [PACKETS] [OUTDIR]

Prints one line per configuration: header-only captures (snap length 128, as mirror captures
are taken) and full frames (1 KiB payloads, disk-bound: ~1.1 GB per million packets).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bulk_capture import bulk_capture  # noqa: E402


def run(packets: int, out: Path, snaplen: int) -> tuple[int, float]:
    start = time.perf_counter()
    truth = bulk_capture(out, packets, snaplen=snaplen)
    return truth.data["capture"]["packets"], time.perf_counter() - start


def main(argv: list[str]) -> None:
    packets = int(argv[0]) if argv else 1_000_000
    outdir = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp())
    outdir.mkdir(parents=True, exist_ok=True)
    run(1000, outdir / "warmup.pcap", 128)  # numba kernels load or compile once
    for label, snaplen in (("snaplen 128", 128), ("full frames", 65535)):
        n, seconds = run(packets, outdir / "bench.pcap", snaplen)
        size = (outdir / "bench.pcap").stat().st_size / 1e6
        print(f"generate bulk, {label:<12} {n:>9} packets {seconds:6.2f} s "
              f"{n / seconds:>10,.0f} packets/s  ({size:,.0f} MB)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
