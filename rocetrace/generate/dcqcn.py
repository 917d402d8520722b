"""DCQCN reaction point (Zhu et al., SIGCOMM 2015), simplified: rate cut on CNP, then fast
recovery and additive increase in fixed periods, evaluated lazily when the sender asks."""

from __future__ import annotations

from rocetrace.link import wire_ns

G = 1 / 16
PERIOD_NS = 55_000
FAST_RECOVERY_STEPS = 5
MIN_RATE_FRACTION = 0.01


class Dcqcn:
    """Current sending rate of one QP, in bits per second."""

    def __init__(self, line_rate_bps: float) -> None:
        self.line = line_rate_bps
        self.rate = self.target = line_rate_bps
        self.alpha = 1.0
        self.updated = 0
        self.steps = 0
        self.ai = line_rate_bps / 200

    def _catch_up(self, t: int) -> None:
        while self.rate < self.line and t - self.updated >= PERIOD_NS:
            self.updated += PERIOD_NS
            self.alpha *= 1 - G
            if self.steps >= FAST_RECOVERY_STEPS:
                self.target = min(self.line, self.target + self.ai)
            self.rate = min(self.line, (self.rate + self.target) / 2)
            self.steps += 1

    def on_cnp(self, t: int) -> None:
        self._catch_up(t)
        self.target = self.rate
        self.rate = max(self.rate * (1 - self.alpha / 2), self.line * MIN_RATE_FRACTION)
        self.alpha = (1 - G) * self.alpha + G
        self.updated, self.steps = t, 0

    def gap_ns(self, frame_bytes: int, t: int) -> int:
        """Time the QP must wait after sending a frame: 0 at line rate."""
        self._catch_up(t)
        if self.rate >= self.line:
            return 0
        return int(wire_ns(frame_bytes, self.rate))
