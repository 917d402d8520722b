"""A capture point's clock: what turns the simulation's true time into the timestamp a
sniffer writes (constant offset, drift, software jitter, and the file's resolution).

Real captures need all four (docs/generator.md, "Clocks"): tcpdump writes microseconds unless
asked for nanoseconds, host stamps jitter, and every host and switch has its own offset and
drift. The records keep the order the sniffer received them in, even where jitter makes the
timestamps go backwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy only where frames are stamped: `rocetrace --help` parses clocks
    import numpy as np

RESOLUTIONS = {"ns": 1, "us": 1000}
_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_SPEC_KEYS = {"offset", "drift", "res", "jitter", "seed"}


@dataclass(frozen=True)
class Clock:
    """How one vantage stamps frames: ts = start + offset + t * (1 + drift) + jitter,
    truncated to the resolution. `t` is simulation time since the capture start (t = 0,
    2026-01-01T00:00:00Z), so drift scales time around that start."""

    vantage: str = ""  # the capture it belongs to ("" in a scenario-wide default)
    offset_ns: int = 0
    drift_ppm: float = 0.0
    resolution_ns: int = 1  # 1 (nanosecond file) or 1000 (microsecond file)
    jitter_ns: int = 0  # each stamp moves by a uniform integer in [-jitter, +jitter]
    seed: int | None = None  # jitter seed; None: the generation seed

    @property
    def nanosecond(self) -> bool:
        return self.resolution_ns == 1

    def validate(self) -> None:
        if self.resolution_ns not in RESOLUTIONS.values():
            raise ValueError("clock resolution must be ns or us")
        if self.jitter_ns < 0:
            raise ValueError("clock jitter must be >= 0")


def stamp(clock: Clock, start_ns: int, t_ns: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Timestamps (ns since the Unix epoch) of frames seen at true times t_ns, in the
    order given (the sniffer's arrival order, which this does not change)."""
    import numpy as np

    t = np.asarray(t_ns, dtype=np.int64)
    ts = t + (start_ns + clock.offset_ns)
    if clock.drift_ppm:
        ts = ts + np.rint(t * (clock.drift_ppm * 1e-6)).astype(np.int64)
    if clock.jitter_ns:
        ts = ts + rng.integers(-clock.jitter_ns, clock.jitter_ns + 1, len(t), dtype=np.int64)
    if clock.resolution_ns > 1:
        ts = ts // clock.resolution_ns * clock.resolution_ns
    return ts


def duration_ns(text: str) -> int:
    """'+30us', '-1s', '250ns', '2.5ms', '40' (ns) -> signed nanoseconds."""
    m = re.fullmatch(r"([+-]?[0-9]*\.?[0-9]+)\s*(ns|us|ms|s)?", text.strip())
    if m is None:
        raise ValueError(f"bad duration {text!r} (e.g. 30us, -1s, 250ns)")
    return round(float(m.group(1)) * _UNITS[m.group(2) or "ns"])


def parse_clock(spec: str, base: Clock) -> Clock:
    """'offset=+30us,drift=5ppm,res=us,jitter=200ns,seed=7' on top of `base` (fields the
    spec does not name keep the base's values)."""
    changes: dict[str, object] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        if not sep or key not in _SPEC_KEYS:
            raise ValueError(f"bad clock setting {part!r}; use {', '.join(sorted(_SPEC_KEYS))}")
        if key == "offset":
            changes["offset_ns"] = duration_ns(value)
        elif key == "jitter":
            changes["jitter_ns"] = abs(duration_ns(value))
        elif key == "drift":
            changes["drift_ppm"] = float(value.removesuffix("ppm"))
        elif key == "res":
            if value not in RESOLUTIONS:
                raise ValueError(f"clock res must be ns or us, not {value!r}")
            changes["resolution_ns"] = RESOLUTIONS[value]
        else:
            changes["seed"] = int(value, 0)
    clock = replace(base, **changes)  # type: ignore[arg-type]
    clock.validate()
    return clock


def split_vantage(text: str) -> tuple[str, str]:
    """'receiver:offset=+30us' -> ('receiver', 'offset=+30us')."""
    vantage, sep, spec = text.partition(":")
    if not sep:
        raise ValueError(f"clock {text!r} must name its vantage: VANTAGE:SETTINGS")
    return vantage.strip(), spec
