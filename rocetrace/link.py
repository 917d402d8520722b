"""Time on an Ethernet link: what the generator's fabric spends per frame and what the
analysis reads back when it asks whether a frame waited for the wire."""

from __future__ import annotations

import numpy as np

WIRE_OVERHEAD = 24  # bytes of link time per frame beyond its captured length: FCS, preamble, gap


def wire_ns(frame_bytes: int | np.ndarray, link_bps: float) -> float | np.ndarray:
    """Nanoseconds a frame of `frame_bytes` (captured length, no FCS) holds a link."""
    return (frame_bytes + WIRE_OVERHEAD) * 8e9 / link_bps
