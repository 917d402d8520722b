"""Analysis benchmark: `rocetrace analyze --json` as a whole process beside tshark's decode pass,
and, in process, the analysis after decoding beside the decoding itself.

    python benchmarks/bench_analyze.py [--packets 1000000] [--workdir DIR]

Reuses the decode benchmark's capture generator and process timer (bench_decode.py).
Targets (issue 4): whole process >= 10x faster than tshark; analysis <= decode.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_decode import TSHARK_FIELDS, Run, measure, rocetrace_argv  # noqa: E402
from benchmarks.synth import synth_capture  # noqa: E402


def in_process(capture: Path) -> tuple[float, float]:
    """(decode seconds, analysis seconds), best of 3 after a warm-up."""
    from rocetrace.analysis.pipeline import analyze_packets
    from rocetrace.capture import read_capture

    read_capture(capture)
    decode = analysis = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        cap = read_capture(capture)
        t1 = time.perf_counter()
        analyze_packets(cap.packets, cap.info).summary()
        t2 = time.perf_counter()
        decode, analysis = min(decode, t1 - t0), min(analysis, t2 - t1)
    return decode, analysis


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocetrace-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    capture = work / "bench.pcap"
    if not capture.exists():
        synth_capture(capture, n=args.packets)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(work / "numba-cache"))
    analyze = [*rocetrace_argv(), "analyze", str(capture), "--json", str(work / "summary.json")]
    runs = [Run("rocetrace analyze --json (first run)", analyze, env)]
    runs.append(Run("rocetrace analyze --json (warm cache)", analyze, env))
    tshark = shutil.which("tshark")
    if tshark:
        fields = [a for f in TSHARK_FIELDS for a in ("-e", f)]
        argv = [tshark, "-r", str(capture), "-T", "fields", *fields]
        runs.append(Run("tshark -T fields (decode only)", argv, dict(os.environ)))
    print(f"capture: {capture} ({capture.stat().st_size / 1e6:.0f} MB, {args.packets} packets)")
    for r in map(measure, runs):
        print(
            f"  {r.name:40s} {r.seconds:7.2f} s  peak RSS {r.peak_rss_mb:6.0f} MB  exit {r.status}"
        )
    if tshark:
        print(
            f"  speed-up vs tshark (warm): {runs[2].seconds / runs[1].seconds:.1f}x (target >= 10x)"
        )
    decode, analysis = in_process(capture)
    print(
        f"  in process: decode {decode:.2f} s, analysis {analysis:.2f} s "
        "(target analysis <= decode)"
    )


if __name__ == "__main__":
    main()
