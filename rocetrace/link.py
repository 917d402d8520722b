"""Time on an Ethernet link: what the generator's fabric spends per frame and what the
analysis reads back when it asks whether a frame waited for the wire; link speeds as
people write them. No numpy import: the CLI parses --link-speed before loading anything."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

WIRE_OVERHEAD = 24  # bytes of link time per frame beyond its captured length: FCS, preamble, gap


def wire_ns(frame_bytes: int | np.ndarray, link_bps: float) -> float | np.ndarray:
    """Nanoseconds a frame of `frame_bytes` (captured length, no FCS) holds a link."""
    return (frame_bytes + WIRE_OVERHEAD) * 8e9 / link_bps


_SPEED = re.compile(r"^\s*([0-9.]+)\s*([kKmMgGtT]?)(?:b(?:it)?(?:/?s|ps)?)?\s*$")
_SCALE = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}


def parse_link_speed(value: str | float | int) -> float:
    """'100G', '25g', '400Gb/s' or a number of bits per second -> bits per second."""
    if isinstance(value, int | float):
        return float(value)
    m = _SPEED.match(value)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"not a link speed: {value!r} (try 100G)")
    return float(m.group(1)) * _SCALE[m.group(2).lower()]
