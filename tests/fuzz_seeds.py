"""The seeds the fuzz gate mutates (tests/fuzz_gate.py): sound captures in every format and
byte order, frames to rebuild captures with hostile transport fields, and the JSON
summaries and bundles of analyses (with and without RoCE traffic)."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from test_capture_fuzz import base_frames, capture_bytes

from rocetrace import analyze
from rocetrace.capture import write_capture
from rocetrace.reports.bundle import TABLES, save_bundle

REPO = Path(__file__).resolve().parent.parent
SAMPLES = ("clean", "gbn-loss", "ecn-cnp", "read-loss", "rnr", "tail-timeout", "overlay")
ANALYSED = ("gbn-loss", "ecn-cnp", "pfc-storm", "read-loss", "rnr", "selective-repeat")
HOSTILE = REPO / "tests" / "data" / "hostile"


@dataclass
class BundleSeed:
    """A bundle taken apart: its manifest and each table as a DataFrame and as Parquet."""

    manifest: dict
    tables: dict[str, pd.DataFrame]
    parquet: dict[str, bytes]

    def zip_bytes(
        self, manifest: bytes | None = None, parquet: dict[str, bytes] | None = None
    ) -> bytes:
        """The bundle again, with a manifest text or tables replaced."""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr("manifest.json", manifest or json.dumps(self.manifest).encode())
            for name in TABLES:
                z.writestr(f"{name}.parquet", (parquet or {}).get(name, self.parquet[name]))
        return out.getvalue()


@dataclass
class Seeds:
    captures: list[bytes] = field(default_factory=list)  # sound ones first, then the corpus
    sound: int = 0  # how many of `captures` are sound
    frames: list[bytes] = field(default_factory=list)  # RoCE / PFC frames of sound captures
    summaries: list[dict] = field(default_factory=list)
    bundles: list[BundleSeed] = field(default_factory=list)


def pcap_frames(blob: bytes) -> list[bytes]:
    """The frames of a little-endian pcap (the samples)."""
    frames, pos = [], 24
    while pos + 16 <= len(blob):
        cap = struct.unpack_from("<I", blob, pos + 8)[0]
        frames.append(blob[pos + 16 : pos + 16 + cap])
        pos += 16 + cap
    return frames


def _bundle_seed(analysis: object, workdir: Path) -> BundleSeed:
    path = save_bundle(analysis, workdir / "seed.rocetrace")  # type: ignore[arg-type]
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("manifest.json"))
        parquet = {n: z.read(f"{n}.parquet") for n in TABLES}
    tables = {n: pd.read_parquet(io.BytesIO(b)) for n, b in parquet.items()}
    return BundleSeed(manifest, tables, parquet)


def _tiny_captures(workdir: Path) -> list[Path]:
    """A PFC-only capture and an empty one: results with no RoCE flow."""
    pfc = write_capture(workdir / "pfc.pcap", [10**9 + k for k in range(5)], [base_frames()[6]] * 5)
    empty = write_capture(workdir / "empty.pcap", [], [])
    return [pfc, empty]


def build_seeds(workdir: Path) -> Seeds:
    """Everything the gate mutates, built once per worker (a second or two)."""
    seeds = Seeds()
    for fmt, order in (("pcap", "<"), ("pcap", ">"), ("pcapng", "<"), ("pcapng", ">")):
        seeds.captures.append(capture_bytes(workdir, fmt, order, base_frames()))
    for name in SAMPLES:
        blob = (REPO / "samples" / f"{name}.pcap").read_bytes()
        seeds.captures.append(blob)
        seeds.frames += pcap_frames(blob)
    seeds.sound = len(seeds.captures)
    seeds.captures += [p.read_bytes() for p in sorted(HOSTILE.glob("*.pcap*"))]
    sources = [REPO / "samples" / f"{n}.pcap" for n in ANALYSED] + _tiny_captures(workdir)
    for source in sources:
        analysis = analyze(source)
        seeds.summaries.append(json.loads(json.dumps(analysis.summary())))
        seeds.bundles.append(_bundle_seed(analysis, workdir))
    return seeds
