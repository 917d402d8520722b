"""Regenerate the bundled sample captures and their truth files, bit for bit.

    python samples/regenerate.py            # rewrite samples/*.pcap and *.truth.json
    python samples/regenerate.py --check    # exit 1 if any file would change

Each sample is a preset with a smaller MTU and fewer messages so that all of them stay
under 1 MB together; the seed is fixed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

from rocetrace.generate import generate

HERE = Path(__file__).resolve().parent
SEED = 1
SMALL: dict[str, Any] = {"mtu": 256}
SAMPLES: dict[str, dict[str, Any]] = {
    "clean": {"qps": 2, "messages": 6, "message_size": 1024},
    "gbn-loss": {"message_size": 2048},
    "selective-repeat": {"message_size": 2048},
    "go-back-0-livelock": {"message_size": 16384, "max_packets": 600},
    "tail-timeout": {"message_size": 1024},
    "rnr": {"message_size": 512},
    "read-loss": {"message_size": 2048},
    "ecn-cnp": {"messages": 4, "message_size": 4096, "kmin_bytes": 2000, "kmax_bytes": 16000},
    "pfc-storm": {"message_size": 1024},
    "incast": {"messages": 2, "message_size": 2048, "kmin_bytes": 4000, "kmax_bytes": 40000},
    "overlay": {"message_size": 1024},
}


def write_all(directory: Path) -> list[Path]:
    """Write every sample into `directory`; returns the files written."""
    written = []
    for name, overrides in SAMPLES.items():
        out = directory / f"{name}.pcap"
        truth = generate(name, out, seed=SEED, **SMALL, **overrides)
        written += [out, truth.path]
    return written


def main(argv: list[str]) -> int:
    if "--check" not in argv:
        files = write_all(HERE)
        total = sum(p.stat().st_size for p in files)
        print(f"wrote {len(files)} files, {total} bytes")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        changed = [
            p.name for p in write_all(Path(tmp)) if p.read_bytes() != (HERE / p.name).read_bytes()
        ]
    print("changed: " + ", ".join(changed) if changed else "samples are up to date")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
