"""Scale benchmark: `rocetrace analyze --json` on 1M / 10M / 50M packets (snap length 128),
in memory, streamed in this process, and streamed on 1 and 2 Dask workers, each as a whole
process with the peak RSS of all its processes together (scheduler and workers included),
beside tshark's decode-only pass on 1M packets.

    python benchmarks/scale.py [--sizes 1M,10M,50M] [--runs 1] [--workdir DIR]

The captures (`rocetrace generate bulk`: fault-free RC WRITE / SEND / READ, 8 requester and
8 responder hosts, one QP per pair, so 64 IP pairs for the partitions) are generated once into
the work folder and reused; above 12M packets (the generator holds its capture in memory) the
10M capture is repeated, shifted in time (editcap, mergecap). The in-memory run is skipped
where it would not fit (50M: ~22 GB). Every streamed summary is compared with the in-memory
one where both exist (else with the first streamed one).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.bench_decode import TSHARK_FIELDS, compile_rocetrace, rocetrace_argv  # noqa: E402

HOSTS, QPS, MESSAGE_SIZE, MTU, SNAPLEN = 8, 1, 16384, 1024, 128
IN_MEMORY_LIMIT = 12_000_000  # packets: beyond, the in-memory run would not fit in 24 GB
GENERATE_LIMIT = 12_000_000  # packets: the generator holds its capture in memory (50M: > 24 GB)
REPEATED = 10_000_000  # larger captures repeat this one, each copy 0.1 s after the one before


@dataclass
class Result:
    name: str
    packets: int
    seconds: float
    peak_mb: float
    status: int
    same: str = ""


def capture_for(work: Path, packets: int) -> Path:
    """The benchmark capture of about `packets` frames (generated once, in a child)."""
    path = work / f"scale-{packets}.pcap"
    if not path.exists() and packets > GENERATE_LIMIT:
        repeated_capture(capture_for(work, REPEATED), path, round(packets / REPEATED))
    if not path.exists():
        per_message = -(-MESSAGE_SIZE // MTU) + 1
        messages = max(1, round(packets / (HOSTS * HOSTS * QPS * per_message)))
        code = (
            "from rocetrace.generate import generate; "
            f"generate('bulk', {str(path)!r}, seed=1, snaplen={SNAPLEN}, qps={QPS}, "
            f"requesters={HOSTS}, responders={HOSTS}, ops=('write','send','read'), "
            f"mtu={MTU}, message_size={MESSAGE_SIZE}, messages={messages})"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
    return path


def repeated_capture(source: Path, path: Path, copies: int) -> None:
    """`copies` of the source capture end to end, copy k shifted by k * 0.1 s (editcap -t,
    mergecap -a): the generator cannot hold 50M packets in memory. Each copy's connections
    start again at their first PSN, 0.1 s after the last copy ended (the source spans 69 ms)."""
    parts = [path.with_suffix(f".part{k}") for k in range(copies)]
    for k, part in enumerate(parts):
        subprocess.run(["editcap", "-F", "nsecpcap", "-t", f"{k / 10}", str(source), str(part)],
                       check=True)  # fmt: skip
    subprocess.run(["mergecap", "-a", "-F", "nsecpcap", "-w", str(path), *map(str, parts)],
                   check=True)  # fmt: skip
    for part in parts:
        part.unlink()
    truth = json.loads(source.with_suffix(".truth.json").read_text())
    facts = {k: v * copies if k.endswith("packets") else v for k, v in truth["capture"].items()}
    path.with_suffix(".truth.json").write_text(json.dumps({"capture": facts}, indent=1))


def tree_rss(pid: int) -> int:
    """RSS bytes of a process and all its descendants."""
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += p.memory_info().rss
    return total


def measure(name: str, argv: list[str], packets: int) -> Result:
    """Wall time and peak of the summed RSS of the process tree (sampled every 20 ms)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    if proc.returncode:
        print(f"{name}: exit {proc.returncode}: {err.decode(errors='replace')[-600:]}")
    return Result(name, packets, seconds, peak / 1e6, proc.returncode)


def runs(capture: Path, packets: int, work: Path) -> list[tuple[str, list[str], Path]]:
    """The analyze processes for one capture: name, argv, summary path."""
    base = [*rocetrace_argv(), "analyze", str(capture), "--quiet"]
    out = []
    if packets <= IN_MEMORY_LIMIT:
        out.append(("in memory", [*base, "--memory-limit", "1T"], work / "mem.json"))
    out.append(("streamed, in process", [*base, "--memory-limit", "0"], work / "s0.json"))
    for n in (1, 2):
        out.append((f"streamed, {n} worker{'s' * (n > 1)}", [*base, "--workers", str(n)],
                    work / f"s{n}.json"))  # fmt: skip
    return [(name, [*argv, "--json", str(path)], path) for name, argv, path in out]


def tshark(capture: Path, packets: int) -> Result | None:
    exe = shutil.which("tshark")
    if not exe:
        return None
    fields = [a for f in TSHARK_FIELDS for a in ("-e", f)]
    return measure("tshark -T fields (decode only)", [exe, "-r", str(capture), "-T", "fields",
                                                       *fields], packets)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,10M,50M")
    parser.add_argument("--runs", type=int, default=1, help="runs of each (the best is kept)")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocetrace-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(compile_rocetrace(), flush=True)
    sizes = [int(float(s[:-1]) * 1e6) if s[-1] in "mM" else int(s) for s in args.sizes.split(",")]
    results: list[Result] = []
    for packets in sizes:
        capture = capture_for(work, packets)
        frames = int(
            json.loads(capture.with_suffix(".truth.json").read_text())["capture"]["packets"]
        )
        size_gb = capture.stat().st_size / 1e9
        print(f"\n{capture.name}: {frames:,} packets, {size_gb:.2f} GB", flush=True)
        reference = None
        for name, argv, summary in runs(capture, frames, work):
            best = min((measure(name, argv, frames) for _ in range(args.runs)),
                       key=lambda r: r.seconds)  # fmt: skip
            if best.status == 0:
                data = json.loads(summary.read_text())
                reference = reference if reference is not None else data
                best.same = "=" if data == reference else "DIFFERS"
            results.append(best)
            print(
                f"  {name:24} {best.seconds:8.2f} s {best.peak_mb:9.0f} MB  {best.same}", flush=True
            )
        if packets == sizes[0] and (t := tshark(capture, frames)):
            results.append(t)
            print(f"  {t.name:24} {t.seconds:8.2f} s {t.peak_mb:9.0f} MB", flush=True)
    print_table(results)


def print_table(results: list[Result]) -> None:
    print(
        f"\n{'packets':>11} {'run':32} {'wall s':>8} {'peak RSS MB':>12} {'B/packet':>9}  summary"
    )
    for r in results:
        per = r.peak_mb * 1e6 / r.packets
        print(
            f"{r.packets:11,} {r.name:32} {r.seconds:8.2f} {r.peak_mb:12.0f} {per:9.0f}  {r.same}"
        )


if __name__ == "__main__":
    main()
