"""The benchmarks' capture: `rocetrace generate bulk` (fault-free RC traffic at line rate on
16 QPs: RDMA WRITE, SEND and READ cycled per message, coalesced ACKs, READ responses flowing
back), cut at 128 bytes as `tcpdump -s 128` takes a mirror port. Exact truth comes with it.

    python benchmarks/bulk_capture.py OUT.pcap [PACKETS]   # write it; print time and opcode mix
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

QPS, MESSAGE_SIZE, MTU, SNAPLEN = 16, 16384, 1024, 128
OPS = ("write", "send", "read")


def messages_for(packets: int) -> int:
    """Messages per QP for about `packets` frames: each message is n + 1 frames (WRITE and
    SEND: n requests and their ACK; READ: its request and n responses)."""
    per_message = -(-MESSAGE_SIZE // MTU) + 1
    return max(1, round(packets / (QPS * per_message)))


def bulk_capture(path: Path, packets: int, snaplen: int = SNAPLEN, seed: int = 1) -> Any:
    """Write the capture and its truth sidecar; returns the generator's `Truth`."""
    from rocetrace.generate import generate

    return generate(
        "bulk", path, seed=seed, snaplen=snaplen, qps=QPS, ops=OPS, mtu=MTU,
        message_size=MESSAGE_SIZE, messages=messages_for(packets),
    )  # fmt: skip


def report(path: Path, seconds: float, imports: float) -> None:
    from benchmarks.opcode_mix import opcode_mix  # numba: only in the generating process

    mix = opcode_mix(path)
    total = sum(mix.values())
    print(
        f"capture: {path} ({total:,} packets, snap {SNAPLEN}, {path.stat().st_size / 1e6:.0f} MB)"
    )
    print(f"  generated in {seconds:.2f} s ({total / seconds:,.0f} packets/s; imports before: "
          f"{imports:.2f} s); opcode mix:")  # fmt: skip
    for name, count in sorted(mix.items(), key=lambda kv: -kv[1]):
        print(f"    {name:32} {count:9,} {100 * count / total:5.1f} %")


def generate_in_child(path: Path, packets: int) -> int:
    """Generate in a child process (the caller stays small, so its children's peak RSS, which
    the benchmarks measure, is theirs alone); returns the frames written, from the truth."""
    subprocess.run([sys.executable, __file__, str(path), str(packets)], check=True)
    truth = json.loads(path.with_suffix(".truth.json").read_text())
    return int(truth["capture"]["packets"])


def main(argv: list[str]) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script
    path, packets = Path(argv[0]), int(argv[1]) if len(argv) > 1 else 1_000_000
    start = time.perf_counter()
    import rocetrace.generate.run  # noqa: F401  numpy, numba, the writer: not generation

    loaded = time.perf_counter()
    bulk_capture(path, packets)
    report(path, time.perf_counter() - loaded, loaded - start)


if __name__ == "__main__":
    main(sys.argv[1:])
