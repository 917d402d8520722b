"""Decode benchmark: rocetrace vs tshark vs a dpkt loop on one generated capture, N runs each.

    python benchmarks/bench_decode.py [--packets 1000000] [--runs 3] [--workdir DIR]

Generates a RoCEv2 capture with `rocetrace generate bulk` (bulk_capture.py: RC WRITE, SEND
and READ with ACKs and READ responses on 16 QPs at line rate, snap length 128), then times,
each as a whole process with its peak RSS: `rocetrace decode -o x.parquet` once first (cold OS
caches; the decoder is compiled C, nothing is JIT-compiled), then N times warm, interleaved
with N runs of `tshark -T fields` extracting the same fields
and N runs of a dpkt loop; plus N in-process decodes after a warm-up.
The machine may be shared: every figure is given as best and median of its runs, and the
issue-2 target (>= 20x tshark) is judged on the medians. The load average is printed too.
rocetrace runs as the console script next to this interpreter (a pyenv shim in front of it
would add ~0.1 s of bash that is not rocetrace). More processes go in `process_runs`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bulk_capture import generate_in_child  # noqa: E402

TARGET_SPEEDUP = 20.0
TARGET_RATE = 5e6  # packets/s, in-process decode once warm
TSHARK_FIELDS = (
    "frame.number", "ip.src", "ip.dst", "ip.dsfield.dscp", "ip.dsfield.ecn", "udp.srcport",
    "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt",
    "infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a",
    "infiniband.bth.psn", "infiniband.reth.va", "infiniband.reth.r_key",
    "infiniband.reth.dmalen", "infiniband.aeth.syndrome", "infiniband.aeth.msn",
)  # fmt: skip

DPKT_LOOP = """
import struct, sys, dpkt
rows = []
with open(sys.argv[1], "rb") as fh:
    for ts, buf in dpkt.pcap.Reader(fh):
        eth = dpkt.ethernet.Ethernet(buf)
        ip = eth.data
        if not isinstance(ip, dpkt.ip.IP) or not isinstance(ip.data, dpkt.udp.UDP):
            continue
        udp = ip.data
        if udp.dport != 4791 or len(udp.data) < 12:
            continue
        op, flags, pkey, _, qp, ack, psn = struct.unpack(">BBHBHBBHB", udp.data[:12])[:7]
        b = udp.data
        rows.append((ts, ip.src, ip.dst, b[0], int.from_bytes(b[5:8], "big"),
                     int.from_bytes(b[9:12], "big"), b[8] >> 7, pkey))
print(len(rows))
"""


@dataclass
class Run:
    """One measured process."""

    name: str
    argv: list[str]
    env: dict[str, str]
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    status: int = 0


@dataclass
class Timings:
    """The runs of one process: wall seconds of each, peak RSS of the largest."""

    name: str
    seconds: list[float] = field(default_factory=list)
    peak_rss_mb: float = 0.0
    failed: int = 0

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


def measure(run: Run) -> Run:
    """Wall time and peak RSS of one child process (wait4 gives that child's rusage)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        run.argv, env=run.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    run.seconds = time.perf_counter() - start
    run.peak_rss_mb = usage.ru_maxrss / 1024
    run.status = os.waitstatus_to_exitcode(status)
    if run.status:
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        print(f"{run.name}: exit {run.status}: {err[-400:]}", file=sys.stderr)
    return run


def rocetrace_argv() -> list[str]:
    """The rocetrace console script of this interpreter's environment, not a shim found on
    PATH (pyenv's runs bash and `pyenv exec` first); `python -c` if there is none."""
    beside = Path(sys.executable).parent / "rocetrace"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    exe = shutil.which("rocetrace")
    return (
        [exe]
        if exe
        else [sys.executable, "-c", "from rocetrace.cli import entry_point; entry_point()"]
    )


def tshark_run(capture: Path, name: str) -> list[Run]:
    """`tshark -T fields` extracting the fields rocetrace decodes, if tshark is installed."""
    tshark = shutil.which("tshark")
    if not tshark:
        return []
    fields = [a for f in TSHARK_FIELDS for a in ("-e", f)]
    return [Run(name, [tshark, "-r", str(capture), "-T", "fields", *fields], dict(os.environ))]


def process_runs(capture: Path, work: Path) -> tuple[Run, list[Run]]:
    """The first run, then the processes repeated round-robin (noise hits each alike)."""
    decode = [*rocetrace_argv(), "decode", str(capture), "-o", str(work / "out.parquet")]
    first = Run("rocetrace decode (first run)", decode, dict(os.environ))
    repeated = [Run("rocetrace decode (warm)", decode, dict(os.environ))]
    repeated += tshark_run(capture, "tshark -T fields")
    dpkt = [sys.executable, "-c", DPKT_LOOP, str(capture)]
    repeated.append(Run("dpkt loop", dpkt, dict(os.environ)))
    return first, repeated


def time_processes(first: Run, repeated: list[Run], runs: int) -> list[Timings]:
    """The first run once, then `runs` rounds of every repeated process."""
    timings = {r.name: Timings(r.name) for r in (first, *repeated)}
    for run in (first, *(r for _ in range(runs) for r in repeated)):
        done = measure(Run(run.name, run.argv, run.env))
        t = timings[run.name]
        t.seconds.append(done.seconds)
        t.peak_rss_mb = max(t.peak_rss_mb, done.peak_rss_mb)
        t.failed += done.status != 0
    return list(timings.values())


def in_process(capture: Path, runs: int) -> tuple[list[float], float]:
    """Seconds of each warm in-process decode (after one to load the kernels) and the
    table's bytes per packet."""
    from rocetrace.capture import read_capture  # imported late: keeps forks small

    df = read_capture(capture).packets
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        df = read_capture(capture).packets
        seconds.append(time.perf_counter() - start)
    return seconds, df.memory_usage(deep=True).sum() / len(df)


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def print_processes(timings: list[Timings], packets: int) -> None:
    print(
        f"\n{'process':34} {'runs':>4} {'best s':>7} {'median s':>9} {'median packets/s':>17} "
        f"{'peak RSS MB':>12}"
    )
    for t in timings:
        failed = f"  ({t.failed} failed)" if t.failed else ""
        print(
            f"{t.name:34} {len(t.seconds):4} {t.best:7.2f} {t.median:9.2f} "
            f"{packets / t.median:17,.0f} {t.peak_rss_mb:12.0f}{failed}"
        )


def print_verdicts(timings: list[Timings], rates: list[float], per_packet: float) -> None:
    by_name = {t.name: t for t in timings}
    warm, tshark = by_name["rocetrace decode (warm)"], by_name.get("tshark -T fields")
    if tshark:
        on_medians = tshark.median / warm.median
        print(
            f"\nrocetrace decode (warm) vs tshark: {on_medians:.1f}x faster on medians "
            f"(target >= {TARGET_SPEEDUP:.0f}x: {_verdict(on_medians >= TARGET_SPEEDUP)}), "
            f"{tshark.best / warm.best:.1f}x on bests"
        )
    median_rate = statistics.median(rates)
    print(
        f"in-process decode (warm, {len(rates)} runs): median {median_rate:,.0f} packets/s "
        f"(target >= {TARGET_RATE / 1e6:.0f} M: {_verdict(median_rate >= TARGET_RATE)}), "
        f"best {max(rates):,.0f}; table: {per_packet:.1f} bytes/packet"
    )


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"


@dataclass
class Bench:
    """What both benchmarks start from: options, work folder and the generated capture."""

    runs: int
    work: Path
    capture: Path
    packets: int


def compile_rocetrace() -> str:
    """Compile rocetrace's modules to bytecode, as pip does when it installs a package, and
    say so. An editable install writes its bytecode on first import, unless
    PYTHONDONTWRITEBYTECODE is set: then every process compiled rocetrace's ~100 modules
    from source again (~50 ms of CPU on the start-up path, measured), which no installed
    rocetrace pays. Python still reads bytecode with that variable set. The editable install
    maps rocetrace.dissectors and rocetrace.reports to folders of their own, compiled too
    (the dissectors are on `analyze`'s start-up path: ~5 ms of CPU from source)."""
    import compileall
    import importlib.util

    folders = []
    for name in ("rocetrace", "rocetrace.dissectors", "rocetrace.reports"):
        spec = importlib.util.find_spec(name)
        found = list(spec.submodule_search_locations or []) if spec else []
        folders += [f for f in found if not any(f.startswith(g + os.sep) for g in folders)]
    ok = all(compileall.compile_dir(f, quiet=1) for f in folders)
    done = "compiled" if ok and folders else "NOT compiled (see the errors above)"
    flag = " (PYTHONDONTWRITEBYTECODE is set)" if os.environ.get("PYTHONDONTWRITEBYTECODE") else ""
    return f"rocetrace's bytecode: {done}{flag}, as an install compiles it"


def setup_bench(description: str) -> Bench:
    """Parse --packets / --runs / --workdir and generate the capture (in a child process)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--packets", type=int, default=1_000_000, help="about this many")
    parser.add_argument("--runs", type=int, default=3, help="runs of each process")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocetrace-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    capture = work / "bench.pcap"
    print(compile_rocetrace(), flush=True)
    return Bench(max(1, args.runs), work, capture, generate_in_child(capture, args.packets))


def main() -> None:
    bench = setup_bench(__doc__.split("\n")[0])
    capture, work, packets = bench.capture, bench.work, bench.packets
    first, repeated = process_runs(capture, work)
    print(f"\nrocetrace: {' '.join(first.argv[:1])}; before the runs: {load()}", flush=True)
    timings = time_processes(first, repeated, bench.runs)
    seconds, per_packet = in_process(capture, bench.runs)
    print_processes(timings, packets)
    print_verdicts(timings, [packets / s for s in seconds], per_packet)
    print(f"after the runs: {load()}")


if __name__ == "__main__":
    main()
