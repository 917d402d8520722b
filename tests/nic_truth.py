"""What a capture point can see of what the simulated NICs did: the test-side view.

The generator states facts only: which packet each captured frame is, and for every resend
the NIC episode it belongs to (its trigger, the NAK that caused it, the mode the NIC
used, and whether go-back-N and selective repeat would have resent the same packets).
Here the tests decide what the analysis must conclude from the capture: per captured
resend, the analysis must name the NIC's trigger and mode, or say it is uncertain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.capture import read_capture
from rocetrace.generate import generate
from rocetrace.generate.wire_table import ROLE_REQUEST

# How a capture is re-clocked the way real capture points write it: a microsecond clock,
# or each timestamp moved by up to +-N ns with the records left in arrival order.
CLOCKS = ("ns", "us", "jitter5", "jitter50")


@dataclass
class Grade:
    """The analysis against the NICs' truth, over the resends the capture shows."""

    frames: int = 0  # captured resends (requests a NIC sent again)
    episodes: int = 0  # NIC episodes with a captured resend
    uncertain: int = 0  # of those episodes, the analysis said uncertain (where a mode shows)
    wrong: list[str] = field(default_factory=list)  # confident answers that are wrong
    missed: list[str] = field(default_factory=list)  # visible resends not in an episode
    false: list[str] = field(default_factory=list)  # episode frames no NIC resent


@dataclass
class Seen:
    """One capture point's frames as the truth names them: per frame (index k for frame
    k + 1) the packet's wire id (-1: injected malformed), and the NIC episodes."""

    wire: Any  # the generator's PacketTable of every packet sent (row = wire id)
    wire_ids: np.ndarray
    episodes: list[dict[str, Any]]  # truth.nic_episodes

    def frame_of(self, wire_id: int | None) -> int:
        """The frame number that captured packet `wire_id`, -1 when none did."""
        if wire_id is None:
            return -1
        at = np.flatnonzero(self.wire_ids == wire_id)
        return int(at[0]) + 1 if len(at) else -1


def seen_at(truth: Any, vantage: str | None = None) -> Seen:
    """The truth as one capture point (the only one, by default) recorded it."""
    cap = truth.captures[vantage or next(iter(truth.captures))]
    return Seen(truth.wire, np.asarray(cap.wire_ids, np.int64), truth.nic_episodes)


def reclock(packets: pd.DataFrame, clock: str, seed: int) -> tuple[pd.DataFrame, dict]:
    """The packet table with its timestamps as `clock` writes them, and the option that
    tells the analysis the resolution (the file header would)."""
    ts = packets["ts_ns"].to_numpy(np.int64)
    if clock == "us":
        return packets.assign(ts_ns=ts // 1000 * 1000), {"ts_resolution_ns": 1000}
    if clock.startswith("jitter"):
        j = int(clock.removeprefix("jitter"))
        moved = ts + np.random.default_rng([seed, 7]).integers(-j, j + 1, len(ts))
        return packets.assign(ts_ns=moved), {}
    return packets, {}


def analyzed(
    tmp_path: Path, scenario: str, seed: int, clock: str = "ns", **ov: Any
) -> tuple[Any, Any]:
    """Generate, write, read back, re-clock and analyse one scenario: (analysis, truth)."""
    path = tmp_path / f"{scenario}-{seed}-{clock}.pcap"
    truth = generate(scenario, path, seed=seed, **ov)
    cap = read_capture(path)
    packets, options = reclock(cap.packets, clock, seed)
    info = cap.info if clock == "ns" else None
    return analyze_packets(packets, info, mads=cap.mads, **options), truth


def analyzed_right(
    tmp_path: Path, scenario: str, seed: int, clock: str = "ns", **ov: Any
) -> tuple[Any, Any, Grade]:
    """`analyzed`, then held to the NICs' truth as every pinned case is: no confident
    wrong answer, no visible resend missed, no frame called a resend that no NIC resent.
    (analysis, truth, grade)."""
    a, truth = analyzed(tmp_path, scenario, seed, clock, **ov)
    g = grade(a, seen_at(truth))
    assert (g.wrong, g.missed, g.false) == ([], [], [])
    return a, truth, g


def _visible(wire: Any, w: int, high: dict[tuple, int]) -> bool:
    """Can the capture show packet `w` as a resend: was its PSN seen before in its flow
    (the highest PSN captured so far is at or beyond it)? Updates `high`."""
    key = (int(wire["src"][w]), int(wire["dst"][w]), int(wire["dest_qp"][w]))
    psn = int(wire["psn"][w])
    before = high.get(key)
    step = None if before is None else (psn - before + (1 << 23)) % (1 << 24) - (1 << 23)
    if step is None or step > 0:
        high[key] = psn
    return step is not None and step <= 0


def grade(a: Any, seen: Seen) -> Grade:
    """Each captured request a NIC resent, against the analysis' episode holding it."""
    g = Grade()
    eps = a.retransmissions
    episode_of = a.packets["episode"].to_numpy(dtype=float, na_value=np.nan)
    high: dict[tuple, int] = {}
    counted: set[int] = set()
    open_copies = _open_copies(eps)
    for k, w in enumerate(seen.wire_ids.tolist()):
        request = w >= 0 and seen.wire["role"][w] == ROLE_REQUEST
        visible = _visible(seen.wire, w, high) if request else False
        nic = int(seen.wire["episode"][w]) if request else -1
        mine = episode_of[k]
        if nic < 0:
            if mine == mine and k + 1 not in open_copies:
                g.false.append(f"frame {k + 1}: in episode {int(mine)}, no NIC resent it")
            continue
        g.frames += 1
        if mine != mine:
            if visible and k + 1 not in open_copies:
                g.missed.append(f"frame {k + 1}: resend of NIC episode {nic} not found")
            continue
        episode = seen.episodes[nic]
        g.wrong += [f"frame {k + 1}: {p}" for p in _problems(eps.iloc[int(mine)], episode, seen)]
        if nic not in counted:
            counted.add(nic)
            g.episodes += 1
            g.uncertain += _uncertain(eps.iloc[int(mine)], episode)
    return g


def _open_copies(eps: pd.DataFrame) -> set[int]:
    """Frames the analysis said may be the original, late, or a resend (`late_frames`: on a
    path that reorders, which copy of a PSN was the original is open): neither a false nor
    a missed resend, as the analysis gave no answer there to be wrong."""
    if "late_frames" not in eps.columns:
        return set()
    return {int(f) for frames in eps["late_frames"] for f in frames}


def _problems(mine: Any, nic: dict[str, Any], seen: Seen) -> list[str]:
    """What the analysis claims with certainty (certain or likely) that the NIC did not."""
    out = []
    if mine["trigger_certainty"] != "uncertain":
        if mine["trigger"] != nic["trigger"]:
            out.append(
                f"trigger {mine['trigger']} ({mine['trigger_certainty']}), NIC {nic['trigger']}"
            )
        elif nic["trigger"] in ("nak", "rnr"):
            want = seen.frame_of(nic["trigger_packet"])
            got = -1 if pd.isna(mine["nak_frame"]) else int(mine["nak_frame"])
            # several NAK frames: the analysis says which one is open, and names them
            either = len(mine["nak_frames"]) > 1 and want in mine["nak_frames"]
            if got != want and not either:
                out.append(f"NAK frame {got} ({mine['trigger_certainty']}), NIC's NAK frame {want}")
    either = nic["either_policy"] and mine["mode_certainty"] != "certain"
    if mine["mode_certainty"] != "uncertain" and mine["mode"] != nic["mode"] and not either:
        out.append(f"mode {mine['mode']} ({mine['mode_certainty']}), NIC {nic['mode']}")
    return out


def _uncertain(mine: Any, nic: dict[str, Any]) -> bool:
    """Did the analysis leave open what the capture could have shown? A mode both policies
    would have resent alike does not count."""
    mode_open = mine["mode_certainty"] == "uncertain" and not nic["either_policy"]
    return bool(mine["trigger_certainty"] == "uncertain" or mode_open)
