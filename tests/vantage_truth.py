"""What several vantages can see of a generated run: the test-side view of the truth.

The generator states facts only: which wire packet each captured frame is
(`Truth.captures[v].wire_ids`), where the network dropped each packet (`drops[].where`:
before the mirror, on the sender's link into the switch, or after it) and each vantage's
clock (`clock[]`: offset, drift, resolution, jitter). Here the tests decide what a merged
analysis must conclude: on which segment between two captured vantages each drop lies, and
how far the clocks are apart at the analysis' pivot.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.generate import generate
from rocetrace.generate.capture import EPOCH_NS
from rocetrace.generate.wire_table import ROCE
from rocetrace.vantage.vantage_api import analyze_vantages

ALL = ("sender", "receiver", "mirror")
# Where each vantage sits on a direction's path (the switch mirror between the hosts), and
# where a drop happens on it: on the sending host's link (before the mirror) or after it.
# "sender" captures the requester hosts, "receiver" the responder hosts.
PLACE = {
    "from_sender": {"sender": 0, "mirror": 1, "receiver": 2},
    "from_receiver": {"receiver": 0, "mirror": 1, "sender": 2},
}
CUT = {"before_mirror": 0.5, "after_mirror": 1.5}


def sender_hosts(truth: Any) -> set[str]:
    """The hosts the "sender" vantage captures: the requesters of the connections (not of a
    reverse connection's, a responder host, nor of CM's QP1 pseudo-connections)."""
    conns = truth.data["connections"]
    return {c["requester_ip"] for c in conns if c["reverse_of"] is None and not c["cm_mads"]}


def segment_of(
    drop: dict[str, Any], vantages: Sequence[str], senders: set[str]
) -> tuple[str, str] | None:
    """The captured vantages the drop lies between: the last one before it on the path and
    the first after it; None when no captured vantage is on one side."""
    place = PLACE["from_sender" if drop["src_ip"] in senders else "from_receiver"]
    cut = CUT[drop["where"]]
    before = [v for v in vantages if place[v] < cut]
    after = [v for v in vantages if place[v] > cut]
    if not before or not after:
        return None
    return max(before, key=place.__getitem__), min(after, key=place.__getitem__)


def true_offset_ns(truth: Any, vantage: str, reference: str, pivot_ns: int) -> float:
    """What added to `vantage`'s stamps puts them on `reference`'s clock, at the moment the
    reference clock reads pivot_ns (truth's clock model: start + offset + t + t * drift)."""
    clocks = {c["vantage"]: c for c in truth.data["clock"]}
    ref, own = clocks[reference], clocks[vantage]
    t = (pivot_ns - EPOCH_NS - ref["offset_ns"]) / (1 + ref["drift_ppm"] * 1e-6)
    drift = (own["drift_ppm"] - ref["drift_ppm"]) * 1e-6
    return -((own["offset_ns"] - ref["offset_ns"]) + t * drift)


def lost_wire_ids(truth: Any, losses: pd.DataFrame) -> list[int]:
    """The wire packet of each loss row: its frame in the last capture that saw it."""
    return [
        int(truth.captures[v].wire_ids[frame - 1])
        for v, frame in zip(losses["last_seen_at"], losses["frame"], strict=True)
    ]


def distinct_roce(truth: Any, vantages: Sequence[str]) -> tuple[int, int]:
    """RoCE wire packets any vantage captured, and their captured frames in all files."""
    kind = truth.wire["kind"]
    seen: set[int] = set()
    frames = 0
    for v in vantages:
        ids = truth.captures[v].wire_ids
        roce = ids[(ids >= 0)]
        roce = roce[kind[roce] == ROCE]
        seen |= set(roce.tolist())
        frames += len(roce)
    return len(seen), frames


def run(
    preset: str,
    tmp: Path,
    vantages: Sequence[str],
    clocks: dict[str, str],
    seed: int = 0,
    **overrides: Any,
) -> tuple[Any, Any]:
    """Generate one run captured at `vantages`, merge the captures; (truth, analysis)."""
    truth = generate(
        preset,
        tmp / "x.pcap",
        seed=seed,
        vantages=tuple(vantages),
        clocks={v: c for v, c in clocks.items() if v in vantages},
        **overrides,
    )
    merged = analyze_vantages({v: truth.captures[v].path for v in vantages})
    return truth, merged


def drops(truth: Any) -> list[dict[str, Any]]:
    return list(truth.data["drops"])


def sightings_delays(merged: Any) -> np.ndarray:
    """Every segment's smallest one-way delay (aligned clocks)."""
    return merged.segments["delay_min_ns"].to_numpy(float)
