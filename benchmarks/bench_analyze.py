"""Analysis benchmark: `rocetrace analyze --json` as a whole process beside tshark's decode pass,
and, in process, the analysis after decoding beside the decoding itself.

    python benchmarks/bench_analyze.py [--packets 1000000] [--runs 3] [--workdir DIR]

Generates the benchmarks' capture (bulk_capture.py: `rocetrace generate bulk`, RC WRITE /
SEND / READ mix, 16 QPs, snap length 128) and reuses bench_decode.py's process timer: every
process runs N times round-robin, and the targets are judged on medians.
Targets (issue 4): whole process >= 10x faster than tshark; analysis <= decode.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_decode import (  # noqa: E402
    Run,
    Timings,
    load,
    print_processes,
    rocetrace_argv,
    setup_bench,
    time_processes,
    tshark_run,
)

TARGET_SPEEDUP = 10.0
TSHARK_RUN = "tshark -T fields (decode only)"


def in_process(capture: Path, runs: int) -> tuple[list[float], list[float]]:
    """Seconds of each warm decode and of the analysis after it (one warm-up first)."""
    from rocetrace.analysis.pipeline import analyze_packets
    from rocetrace.capture import read_capture

    read_capture(capture)
    decode, analysis = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        cap = read_capture(capture)
        t1 = time.perf_counter()
        analyze_packets(cap.packets, cap.info, mads=cap.mads).summary()
        t2 = time.perf_counter()
        decode.append(t1 - t0)
        analysis.append(t2 - t1)
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


def process_runs(capture: Path, work: Path) -> tuple[Run, list[Run]]:
    """The first analyze run, then analyze and tshark's decode pass, repeated round-robin."""
    analyze = [*rocetrace_argv(), "analyze", str(capture), "--json", str(work / "summary.json")]
    first = Run("rocetrace analyze --json (first)", analyze, dict(os.environ))
    repeated = [Run("rocetrace analyze --json", analyze, dict(os.environ))]
    return first, repeated + tshark_run(capture, TSHARK_RUN)


def print_verdicts(timings: list[Timings], decode: list[float], analysis: list[float]) -> None:
    by_name = {t.name: t for t in timings}
    ours, tshark = by_name["rocetrace analyze --json"], by_name.get(TSHARK_RUN)
    if tshark:
        on_medians = tshark.median / ours.median
        met = "met" if on_medians >= TARGET_SPEEDUP else "NOT met"
        print(
            f"\nrocetrace analyze --json vs tshark: {on_medians:.1f}x faster on medians "
            f"(target >= {TARGET_SPEEDUP:.0f}x: {met}), {tshark.best / ours.best:.1f}x on bests"
        )
    d, a = statistics.median(decode), statistics.median(analysis)
    print(
        f"in process ({len(decode)} runs, medians): decode {d:.3f} s, analysis {a:.3f} s "
        f"(target analysis <= decode: {'met' if a <= d else 'NOT met'}); "
        f"bests: decode {min(decode):.3f} s, analysis {min(analysis):.3f} s"
    )


def main() -> None:
    bench = setup_bench(__doc__.splitlines()[0])
    capture, work = bench.capture, bench.work
    first, repeated = process_runs(capture, work)
    print(f"\nrocetrace: {first.argv[0]}; before the runs: {load()}", flush=True)
    timings = time_processes(first, repeated, bench.runs)
    decode, analysis = in_process(capture, bench.runs)
    print_processes(timings, bench.packets)
    print(f"{truth_check(work / 'summary.json', capture.with_suffix('.truth.json'))}")
    print_verdicts(timings, decode, analysis)
    print(f"after the runs: {load()}")


if __name__ == "__main__":
    main()
