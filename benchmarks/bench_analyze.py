"""Analysis benchmark: `rocetrace analyze --json` as a whole process beside tshark's decode pass,
and, in process, the analysis after decoding beside the decoding itself.

    python benchmarks/bench_analyze.py [--packets 1000000] [--workdir DIR]

Generates the benchmarks' capture (bulk_capture.py: `rocetrace generate bulk`, RC WRITE /
SEND / READ mix, 16 QPs, snap length 128) and reuses bench_decode.py's process timer.
Targets (issue 4): whole process >= 10x faster than tshark; analysis <= decode.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_decode import TSHARK_FIELDS, Run, measure, rocetrace_argv  # noqa: E402
from benchmarks.bulk_capture import generate_in_child  # noqa: E402


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


def truth_check(summary: Path, truth: Path) -> str:
    """Whether the analysis found exactly what the generator put in the capture, per flow."""
    keys = ("role", "peer_qp", "packets", "retransmitted_packets", "psn_gaps", "naks")

    def flows(path: Path) -> dict[tuple[str, str, int], dict[str, Any]]:
        data = json.loads(path.read_text()) if path.exists() else {"flows": []}
        return {(f["src_ip"], f["dst_ip"], f["dest_qp"]): {k: f[k] for k in keys}
                for f in data["flows"]}  # fmt: skip

    got, want = flows(summary), flows(truth)
    wrong = sum(got.get(k) != v for k, v in want.items()) + len(set(got) - set(want))
    resent = sum(f["retransmitted_packets"] for f in got.values())
    verdict = "equals the truth" if not wrong else f"differs from the truth on {wrong} flows"
    return f"summary {verdict} ({len(want)} flows; {resent} retransmitted packets found)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocetrace-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    capture = work / "bench.pcap"
    generate_in_child(capture, args.packets)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(work / "numba-cache"))
    analyze = [*rocetrace_argv(), "analyze", str(capture), "--json", str(work / "summary.json")]
    runs = [Run("rocetrace analyze --json (first run)", analyze, env)]
    runs.append(Run("rocetrace analyze --json (second run)", analyze, env))
    tshark = shutil.which("tshark")
    if tshark:
        fields = [a for f in TSHARK_FIELDS for a in ("-e", f)]
        argv = [tshark, "-r", str(capture), "-T", "fields", *fields]
        runs.append(Run("tshark -T fields (decode only)", argv, dict(os.environ)))
    for r in map(measure, runs):
        print(
            f"  {r.name:40s} {r.seconds:7.2f} s  peak RSS {r.peak_rss_mb:6.0f} MB  exit {r.status}"
        )
    print(f"  {truth_check(work / 'summary.json', capture.with_suffix('.truth.json'))}")
    if tshark:
        print(
            f"  speed-up vs tshark (second run): {runs[2].seconds / runs[1].seconds:.1f}x "
            "(target >= 10x)"
        )
    decode, analysis = in_process(capture)
    print(
        f"  in process: decode {decode:.2f} s, analysis {analysis:.2f} s "
        "(target analysis <= decode)"
    )


if __name__ == "__main__":
    main()
