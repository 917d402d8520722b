"""Decode benchmark: rocetrace vs tshark vs a dpkt loop on one generated capture, one run.

    python benchmarks/bench_decode.py [--packets 1000000] [--workdir DIR]

Generates a RoCEv2 capture with `rocetrace generate bulk` (bulk_capture.py: RC WRITE, SEND
and READ with ACKs and READ responses on 16 QPs at line rate, snap length 128), then times,
each as a whole process with its peak RSS: `rocetrace decode -o x.parquet` twice (the first
run starts with an empty numba cache and cold OS caches), `tshark -T fields` extracting the
same fields, and a dpkt loop; plus in-process decode throughput and bytes per packet.
More processes (e.g. `rocetrace analyze --json`) go in `process_runs`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bulk_capture import generate_in_child  # noqa: E402

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
    exe = shutil.which("rocetrace")
    return (
        [exe]
        if exe
        else [sys.executable, "-c", "from rocetrace.cli import entry_point; entry_point()"]
    )


def process_runs(capture: Path, work: Path) -> list[Run]:
    """The processes to time, in order; the numba cache of the first starts empty (the C
    decoder needs none, but whatever still compiles with numba pays for it there)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(work / "numba-cache"))
    shutil.rmtree(work / "numba-cache", ignore_errors=True)
    decode = [*rocetrace_argv(), "decode", str(capture), "-o", str(work / "out.parquet")]
    runs = [
        Run("rocetrace decode (first run)", decode, env),
        Run("rocetrace decode (second run)", decode, env),
    ]
    tshark = shutil.which("tshark")
    if tshark:
        fields = [a for f in TSHARK_FIELDS for a in ("-e", f)]
        runs.append(
            Run(
                "tshark -T fields",
                [tshark, "-r", str(capture), "-T", "fields", *fields],
                dict(os.environ),
            )
        )
    runs.append(Run("dpkt loop", [sys.executable, "-c", DPKT_LOOP, str(capture)], dict(os.environ)))
    return runs


def in_process(capture: Path) -> tuple[float, float]:
    """Warm decode throughput (best of 3, packets/s) and table bytes per packet."""
    from rocetrace.capture import read_capture  # imported late: keeps forks small

    df = read_capture(capture).packets  # compile / load kernels
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        df = read_capture(capture).packets
        best = min(best, time.perf_counter() - start)
    return len(df) / best, df.memory_usage(deep=True).sum() / len(df)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--packets", type=int, default=1_000_000, help="about this many")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocetrace-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    capture = work / "bench.pcap"
    packets = generate_in_child(capture, args.packets)
    runs = [measure(r) for r in process_runs(capture, work)]
    rate, per_packet = in_process(capture)
    print(f"\n{'process':34} {'seconds':>8} {'packets/s':>12} {'peak RSS MB':>12}")
    for r in runs:
        print(f"{r.name:34} {r.seconds:8.2f} {packets / r.seconds:12,.0f} {r.peak_rss_mb:12.0f}")
    tshark = next((r for r in runs if r.name.startswith("tshark")), None)
    warm = runs[1]
    if tshark:
        print(
            f"\nrocetrace decode (second run) vs tshark: {tshark.seconds / warm.seconds:.1f}x "
            "faster"
        )
    print(f"in-process decode (warm): {rate:,.0f} packets/s; table: {per_packet:.1f} bytes/packet")


if __name__ == "__main__":
    main()
