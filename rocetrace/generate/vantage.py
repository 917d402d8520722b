"""Writing one capture file per vantage of a run: select what the point sees, stamp it with
that point's clock, build the frames and write them. One simulation, several files."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rocetrace.capture.writer import write_capture
from rocetrace.generate.capture import EPOCH_NS, capture
from rocetrace.generate.clock import Clock, stamp
from rocetrace.generate.frames import build_frames
from rocetrace.generate.hosts import Hosts
from rocetrace.generate.scenario import VANTAGES, Scenario
from rocetrace.generate.topology import encap_of
from rocetrace.generate.wire_table import PacketTable


@dataclass
class VantageCapture:
    """One written capture: frame k of the file (1-based) is wire packet wire_ids[k - 1]
    (-1: an injected malformed frame), stamped ts_ns[k - 1]; it passed the vantage at
    simulation time true_ns[k - 1]."""

    vantage: str
    path: Path
    clock: Clock
    jitter_seed: int
    table: PacketTable  # the captured frames in file order, "ts" as written
    true_ns: np.ndarray
    drops: PacketTable  # frames the sniffer missed ("ts": true time + EPOCH_NS)

    @property
    def wire_ids(self) -> np.ndarray:
        return self.table["row"].astype(np.int64)

    @property
    def ts_ns(self) -> np.ndarray:
        return self.table["ts"]


def capture_paths(out_path: str | Path, vantages: Sequence[str]) -> dict[str, Path]:
    """One vantage: out_path itself. Several: out.pcap -> out.<vantage>.pcap each (every
    extension, .gz included, stays after the vantage name)."""
    p = Path(out_path)
    if len(vantages) == 1:
        return {vantages[0]: p}
    stem, dot, ext = p.name.partition(".")
    return {v: p.with_name(f"{stem}.{v}{dot}{ext}") for v in vantages}


def jitter_rng(clock: Clock, seed: int, vantage: str) -> tuple[int, np.random.Generator]:
    """The jitter seed in effect and its generator (one stream per vantage)."""
    used = seed if clock.seed is None else clock.seed
    return used, np.random.default_rng([used, 3, VANTAGES.index(vantage)])


def shoot(
    wire: PacketTable,
    sc: Scenario,
    vantage: str,
    seed: int,
    path: Path,
    hosts: Hosts,
    payloads: Sequence[bytes] = (),
) -> VantageCapture:
    """Capture the run at one vantage and write the file."""
    got = capture(wire, sc, vantage, np.random.default_rng([seed, 1]))
    table = got.table
    true_ns = table["ts"] - EPOCH_NS
    clock = sc.clock(vantage)
    used, rng = jitter_rng(clock, seed, vantage)
    table.cols["ts"] = stamp(clock, EPOCH_NS, true_ns, rng)
    frames = build_frames(table, encap_of(sc), hosts, payloads, snaplen=sc.snaplen)
    table.cols["wire_len"] = frames.wire.astype(np.uint32)
    write_capture(
        path, table["ts"], (frames.flat, frames.offsets, frames.lengths), wire_lens=frames.wire,
        fmt="pcapng" if sc.fmt == "pcapng" else "pcap",
        nanosecond=clock.nanosecond, snaplen=sc.snaplen,
    )  # fmt: skip
    return VantageCapture(vantage, path, clock, used, table, true_ns, got.drops)
