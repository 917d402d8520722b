"""What the capture's clock can show: the only source of timing slack in the analysis.

A rule that compares two timestamps must allow for the clock that wrote them: its
resolution (tcpdump writes microseconds unless asked for nanoseconds, so ~10 frames of
100 Gb/s share one timestamp), its jitter (software stamping moves each timestamp by tens
of ns or more; records stay in arrival order, so timestamps go backwards now and then) and
the link speed (a frame's wire time), which the analysis estimates from the back-to-back
spacing of one sender's frames instead of trusting a constant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.link import wire_ns

# IBTA link speeds a NIC port runs at, bits per second.
STANDARD_SPEEDS = np.array([10e9, 25e9, 40e9, 50e9, 100e9, 200e9, 400e9, 800e9])
# The shortest IBTA Local ACK Timeout: 4.096 us * 2^1 (0 disables the timer). A protocol
# constant: no ACK timer fires sooner after the event that armed it.
MIN_ACK_TIMEOUT_NS = 8_192
_MIN_PAIRS = 32  # back-to-back frame pairs needed before a link speed is estimated
SAMPLE = 1 << 17  # records the clock and link are measured on
# A step back longer than this is a clock jump (or a hostile file), not jitter: slack is
# capped here so that arithmetic on it stays within int64.
MAX_SLACK_NS = 1_000_000_000


@dataclass(frozen=True)
class Tolerances:
    """The capture's clock, as measured on the capture itself."""

    resolution_ns: int  # timestamp resolution (the file header, else the timestamps)
    jitter_ns: int  # largest step back of timestamps in record order (0: never)
    link_bps: float | None  # estimated link speed, None when the capture cannot show it
    max_frame_ns: int = 0  # the longest frame's wire time, at most (see measure)

    @property
    def slack_ns(self) -> int:
        """Two timestamps closer than this may be in either order."""
        return int(self.resolution_ns + self.jitter_ns)

    def frame_ns(self, wire_bytes: int | np.ndarray) -> float | np.ndarray:
        """A frame's wire time at the estimated link speed (0 when unknown)."""
        if self.link_bps is None:
            return np.zeros_like(wire_bytes, dtype=float) if np.ndim(wire_bytes) else 0.0
        return wire_ns(wire_bytes, self.link_bps)


def clock_jitter(ts: np.ndarray, spacing: np.ndarray) -> int:
    """How far a timestamp may be off, at least: the larger of the largest step back
    between consecutive records (records stay in arrival order) and how far back-to-back
    spacings fall short of the frame time (a NIC sends them exactly a frame time apart; a
    jittery clock brings some closer, by up to twice its jitter; see _jitter)."""
    return _jitter(step_back(ts), spacing)


def step_back(ts: np.ndarray) -> int:
    """The largest step back between consecutive records (0: never), capped."""
    # int64 differences (hostile stamps may wrap them: clipped, they stay harmless)
    return int(np.clip((ts[:-1] - ts[1:]).max(), 0, MAX_SLACK_NS)) if len(ts) > 1 else 0


def _jitter(back: int, spacing: np.ndarray) -> int:
    """The larger of the step back and how far back-to-back spacings fall short of their
    median (the frame time): only a clock moves a frame closer to the one before it than
    the wire allows, while a queue, a pause or a busy NIC only spreads them apart, so the
    long side of the spread is no sign of jitter."""
    if len(spacing) < _MIN_PAIRS:
        return back
    low, median = np.quantile(spacing, [0.05, 0.5])
    return max(back, int(np.ceil(median - low)))


@dataclass(frozen=True)
class ClockTotals:
    """What the clock measure reads of every record, not only of the head sample: the
    largest step back, the longest frame, whether any timestamp is finer than a
    microsecond. Counted chunk by chunk when the capture is streamed (ClockTotals.join)."""

    back_ns: int = 0
    longest: int = 0
    sub_us: bool = False
    first_ts: int | None = None  # of the records counted, for joining with the next ones
    last_ts: int | None = None

    @classmethod
    def of(cls, ts: np.ndarray, wire_len: np.ndarray) -> ClockTotals:
        if len(ts) == 0:
            return cls()
        return cls(
            step_back(ts), int(wire_len.max()), bool(np.any(ts % 1000)), int(ts[0]), int(ts[-1])
        )

    def join(self, later: ClockTotals, adjacent: bool = True) -> ClockTotals:
        """These records followed by `later` ones (a step back between the two counts when
        they are `adjacent` in one record sequence)."""
        if self.last_ts is None:
            return later
        if later.first_ts is None:
            return self
        between = self.last_ts - later.first_ts if adjacent else 0
        return ClockTotals(
            max(self.back_ns, later.back_ns, min(max(between, 0), MAX_SLACK_NS)),
            max(self.longest, later.longest),
            self.sub_us or later.sub_us,
            self.first_ts,
            later.last_ts,
        )


def back_to_back_spacing(ts: np.ndarray, src: np.ndarray, wire_len: np.ndarray) -> np.ndarray:
    """Time between consecutive records of one endpoint (`src`: a source or a destination
    code) and one size (the segments of a message), where they went back to back: the
    spacings of the busiest cluster, those no more than twice the lower quartile. Only
    records next to each other in the capture count (no sort: a NIC's back-to-back frames
    are adjacent at its own port, and often enough elsewhere)."""
    same = (src[1:] == src[:-1]) & (wire_len[1:] == wire_len[:-1]) & (src[1:] >= 0)
    dt = np.diff(ts)[same]
    dt = dt[dt > 0]
    if len(dt) < _MIN_PAIRS:
        return dt
    return dt[dt <= 2 * np.quantile(dt, 0.25)]


def link_speed(spacing: np.ndarray, wire_bytes: int, slack_ns: int) -> float | None:
    """The link speed back-to-back frames of `wire_bytes` show (their median spacing is
    the frame's wire time), snapped to the nearest standard speed not below it; None
    when there are too few, or the clock cannot resolve a frame time."""
    if len(spacing) < _MIN_PAIRS or wire_bytes <= 0:
        return None
    median = float(np.median(spacing))
    if median <= slack_ns:
        return None
    rate = (wire_bytes + 24) * 8 / median * 1e9
    at_least = STANDARD_SPEEDS[rate * 0.9 <= STANDARD_SPEEDS]
    return float(at_least[0]) if len(at_least) else float(STANDARD_SPEEDS[-1])


def measure(
    ts: np.ndarray,
    src: np.ndarray,
    dst: np.ndarray,
    wire_len: np.ndarray,
    declared_resolution_ns: int | None,
) -> Tolerances:
    """The tolerances of one capture (columns in record order). Back-to-back frames are
    looked for per source and destination (a NIC port sending, through one switch egress
    queue) and per destination (a switch port delivering) in the first records (a clock
    and a link do not change within a capture); the tighter of the two clusters measures
    jitter, the faster the link."""
    head = slice(0, SAMPLE)
    sample = (ts[head], src[head], dst[head], wire_len[head])
    return measure_sample(sample, ClockTotals.of(ts, wire_len), declared_resolution_ns)


def measure_sample(
    sample: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    totals: ClockTotals,
    declared_resolution_ns: int | None,
) -> Tolerances:
    """measure() from the first SAMPLE records (ts, src, dst, wire_len) and the totals of
    every record: what a streamed capture hands over, one head and running totals."""
    ts_, src_, dst_, wire_ = sample
    if declared_resolution_ns:
        resolution = int(declared_resolution_ns)
    else:
        resolution = 1000 if totals.last_ts is not None and not totals.sub_us else 1
    size = _common_size(src_, wire_)
    sized = wire_ == size
    senders = (_one_path(src_, dst_), dst_)
    groups = [back_to_back_spacing(ts_[sized], by[sized], wire_[sized]) for by in senders]
    fine = resolution < 1000  # a microsecond clock resolves no frame time
    jitter = min(_jitter(totals.back_ns, g if fine else g[:0]) for g in groups)
    speeds = [link_speed(g, size, resolution + jitter) for g in groups]
    known = [v for v in speeds if v is not None]
    link = max(known) if known else None
    longest = totals.longest
    if link is not None:
        frame = int(np.ceil(wire_ns(longest, link)))
    else:  # a full frame goes out no sooner than its wire time after its source's previous
        closest = _closest_spacing(ts_[sized], src_[sized])
        frame = closest + 2 * jitter + resolution if closest else _SLOWEST_FRAME(longest)
    jitter, frame = min(jitter, MAX_SLACK_NS), min(frame, MAX_SLACK_NS)
    return Tolerances(min(resolution, MAX_SLACK_NS), jitter, link, frame)


def _one_path(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """A code per (source, destination) pair, -1 where either is unknown. A source's
    frames to one destination cross one switch egress queue, so no capture point sees them
    closer than a frame time; to two destinations they leave by two egress ports, and a
    mirror there sees the second come out of an idle port while the first still waits in
    a busy one, sooner after it than the wire allows."""
    known = (src >= 0) & (dst >= 0)
    width = int(dst.max(initial=0)) + 1
    return np.where(known, src.astype(np.int64) * width + dst, -1)


def _SLOWEST_FRAME(wire_bytes: int) -> int:
    """The wire time of a frame at the slowest link RoCE runs on (10 Gb/s): an upper bound
    of a frame time when the capture shows none."""
    return int(np.ceil(wire_ns(wire_bytes, float(STANDARD_SPEEDS[0]))))


def _closest_spacing(ts: np.ndarray, src: np.ndarray) -> int:
    """The closest two adjacent records of one source came (0 when none)."""
    same = (src[1:] == src[:-1]) & (src[1:] >= 0)
    dt = np.diff(ts)[same]
    dt = dt[dt > 0]
    return int(dt.min()) if len(dt) else 0


def _common_size(src: np.ndarray, wire_len: np.ndarray) -> int:
    """The most frequent size among full-size frames (at least half the largest) with a
    source: the segments of messages, which NICs send back to back."""
    sizes = wire_len[src >= 0]
    if len(sizes) == 0:
        return 0
    counts = np.bincount(sizes.astype(np.int64))
    counts[: (int(sizes.max()) + 1) // 2] = 0
    return int(np.argmax(counts))
