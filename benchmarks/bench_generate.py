"""Generation speed of `rocetrace generate bulk` (the vectorized path), in packets per second.

    python benchmarks/bench_generate.py [PACKETS] [OUTDIR]

Prints one line per configuration: full frames (1 KiB payloads, disk-bound: ~1.1 GB per
million packets) and header-only captures (snap length 128, as mirror captures are taken).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from rocetrace.generate import generate

QPS, PACKETS_PER_MESSAGE = 8, 64  # bulk preset: 64 KiB messages, MTU 1024


def run(packets: int, out: Path, **overrides: object) -> tuple[int, float]:
    messages = max(1, packets // (QPS * PACKETS_PER_MESSAGE))
    start = time.perf_counter()
    truth = generate("bulk", out, seed=0, messages=messages, **overrides)
    return truth.data["capture"]["packets"], time.perf_counter() - start


def main(argv: list[str]) -> None:
    packets = int(argv[0]) if argv else 1_000_000
    outdir = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp())
    run(1000, outdir / "warmup.pcap")  # numba kernels load or compile once
    for label, overrides in (("snaplen 128", {"snaplen": 128}), ("full frames", {})):
        n, seconds = run(packets, outdir / "bench.pcap", **overrides)
        size = (outdir / "bench.pcap").stat().st_size / 1e6
        print(f"generate bulk, {label:<12} {n:>9} packets {seconds:6.2f} s "
              f"{n / seconds:>10,.0f} packets/s  ({size:,.0f} MB)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
