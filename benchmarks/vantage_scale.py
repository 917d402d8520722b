"""A vantage merge in memory and streamed, as whole processes: wall time and the peak RSS
of each process tree (scheduler and workers included), and whether the JSON summaries are
equal. The capture: fault-free bulk RC traffic between 4 requester and 4 responder hosts
(16 IP pairs) seen at the sender hosts, the receiver hosts and a mirror, each with its own
clock, snap length 128.

    python benchmarks/vantage_scale.py [--packets 1000000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_decode import rocetrace_argv
from benchmarks.scale import measure

HOSTS, MESSAGE_SIZE, MTU, SNAPLEN = 4, 16384, 1024, 128
VANTAGES = ("sender", "receiver", "mirror")
CLOCKS = {"receiver": "offset=+300ms,drift=20ppm,res=us", "mirror": "offset=-1s,jitter=100ns"}


def captures_for(work: Path, packets: int) -> dict[str, Path]:
    """The three vantages' captures of about `packets` distinct frames (generated once)."""
    base = work / f"vantages-{packets}.pcap"
    paths = {v: base.with_name(f"{base.stem}.{v}.pcap") for v in VANTAGES}
    if not all(p.exists() for p in paths.values()):
        per_message = -(-MESSAGE_SIZE // MTU) + 1
        messages = max(1, round(packets / (HOSTS * HOSTS * per_message)))
        code = (
            "from rocetrace.generate import generate; "
            f"generate('bulk', {str(base)!r}, seed=1, snaplen={SNAPLEN}, qps=1, "
            f"requesters={HOSTS}, responders={HOSTS}, ops=('write','send','read'), "
            f"mtu={MTU}, message_size={MESSAGE_SIZE}, messages={messages}, "
            f"vantages={VANTAGES!r}, clocks={CLOCKS!r})"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="rocetrace-vantage-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    paths = captures_for(work, args.packets)
    base = [*rocetrace_argv(), "analyze", "--quiet"]
    base += [a for v, p in paths.items() for a in ("--vantage", f"{v}={p}")]
    modes = {
        "in memory": ["--memory-limit", "1T"],
        "streamed, in process": ["--memory-limit", "0"],
        "streamed, 2 workers": ["--workers", "2"],
    }
    summaries = {}
    print("| run | wall s | peak RSS MB | summary |\n|---|---:|---:|---|")
    for name, extra in modes.items():
        out = work / f"{name.replace(' ', '_').replace(',', '')}.json"
        r = measure(name, [*base, *extra, "--json", str(out)], args.packets)
        summaries[name] = json.loads(out.read_text()) if out.exists() else None
        same = "=" if summaries[name] == summaries["in memory"] else "DIFFERS"
        print(f"| {name} | {r.seconds:.2f} | {r.peak_mb:.0f} | {same} |", flush=True)
    first = summaries["in memory"] or {}
    print(f"distinct packets: {first.get('capture', {}).get('packets')}")


if __name__ == "__main__":
    main()
