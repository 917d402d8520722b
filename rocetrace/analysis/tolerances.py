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
# Where a rate is nearer (by ratio) one standard speed than the next: the geometric means
# of neighbours, and past the ends as far as the first and last steps reach.
_MIDS = np.sqrt(STANDARD_SPEEDS[1:] * STANDARD_SPEEDS[:-1])
_BASINS = np.concatenate(
    [[STANDARD_SPEEDS[0] ** 2 / _MIDS[0]], _MIDS, [STANDARD_SPEEDS[-1] ** 2 / _MIDS[-1]]]
)
# Half the ratio of the closest two standard speeds (40 and 50 Gb/s), as a log: two frame
# times nearer each other than this read as one speed, whichever it is.
_STEP = float(np.log(STANDARD_SPEEDS[1:] / STANDARD_SPEEDS[:-1]).min() / 2)
# The shortest IBTA Local ACK Timeout: 4.096 us * 2^1 (0 disables the timer). A protocol
# constant: no ACK timer fires sooner after the event that armed it.
MIN_ACK_TIMEOUT_NS = 8_192
_MIN_PAIRS = 32  # spacings (or trains) of one sender needed before a link speed is read
_PARTS = 4  # a link speed is certain only when each of this many runs of spacings shows it
_SETTLE = 8  # at most this many steps of the frame time's centre (it settles in two or three)
SAMPLE = 1 << 17  # records the clock and link are measured on
# A step back longer than this is a clock jump (or a hostile file), not jitter: slack is
# capped here so that arithmetic on it stays within int64.
MAX_SLACK_NS = 1_000_000_000


@dataclass(frozen=True)
class LinkSpeed:
    """What a capture shows of its link speed: `bps` when certain; the slowest and the
    fastest standard speed it allows when it cannot tell (None: it cannot show any)."""

    bps: float | None = None
    slowest_bps: float | None = None
    fastest_bps: float | None = None


@dataclass(frozen=True)
class Tolerances:
    """The capture's clock, as measured on the capture itself."""

    resolution_ns: int  # timestamp resolution (the file header, else the timestamps)
    jitter_ns: int  # largest step back of timestamps in record order (0: never)
    link_bps: float | None  # estimated link speed, None when the capture cannot show it
    max_frame_ns: int = 0  # the longest frame's wire time, at most (see measure)
    # The standard speeds the capture allows (equal to link_bps when certain; both None
    # when it shows none): a range when its clock cannot tell them apart (link_speed).
    link_slowest_bps: float | None = None
    link_fastest_bps: float | None = None

    @property
    def link_certainty(self) -> str:
        """'measured' (link_bps), 'uncertain' (a range) or 'unknown' (not shown)."""
        if self.link_bps is not None:
            return "measured"
        return "uncertain" if self.link_slowest_bps is not None else "unknown"

    @property
    def link_note(self) -> str:
        """Why the link speed is not measured ('' when it is)."""
        if self.link_bps is not None:
            return ""
        if self.link_slowest_bps is not None:
            return (
                f"{self.link_slowest_bps / 1e9:g} to {(self.link_fastest_bps or 0) / 1e9:g}"
                f" Gb/s: the clock's slack ({self.slack_ns} ns) blurs frames sent back to back"
                " with frames sent a frame apart, or parts of the capture show other paces"
            )
        return (
            "the capture shows too few frames of one sender back to back, paced ones only,"
            f" or its clock's slack ({self.slack_ns} ns) is longer than a frame time"
        )

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


def _sub_us(ts: np.ndarray) -> bool:
    """Whether any timestamp is finer than a microsecond: a division by a constant and a
    compare (~2 ms at 1M) where the remainder took ~5 ms."""
    return bool(np.any(ts // 1000 * 1000 != ts))


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
        return cls(step_back(ts), int(wire_len.max()), _sub_us(ts), int(ts[0]), int(ts[-1]))

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


def train_spacing(ts: np.ndarray, sender: np.ndarray, frames: int) -> np.ndarray:
    """Per train of `frames` + 1 consecutive records of one sender (a code per record, -1:
    none), every one in the capture: the time from its first to its last over `frames`, the
    spacing of its frames on average. Its error is that of two timestamps whatever its
    length, so a long train shows a frame time a clock too coarse for one spacing blurs;
    none is left out (jitter stamps a back-to-back frame even before the one it followed)."""
    if len(ts) <= frames:
        return np.zeros(0)
    run = np.concatenate([[0], np.cumsum(sender[1:] != sender[:-1])])
    same = (run[frames:] == run[:-frames]) & (sender[frames:] >= 0)
    return (ts[frames:] - ts[:-frames])[same] / frames


def link_speed(ts: np.ndarray, sender: np.ndarray, wire_bytes: int, slack_ns: int) -> LinkSpeed:
    """The link speed frames of `wire_bytes` one sender sent back to back show, and how sure
    it is. One frame time and two lie apart only when a frame time exceeds twice the error
    of a spacing; closer, the spacings of frames sent a frame apart overlap the back-to-back
    ones and no cut tells them apart (a cut at twice the lower quartile read 200 Gb/s on a
    100 Gb/s link under +-50 ns of jitter). Trains of 2, 4, 8... frames divide that error
    by their length (train_spacing): the shortest whose frame time stands clear of it is
    read (_read), when trains half as long show the same frame time to within _STEP (trains
    longer than a NIC sends back to back hold gaps, which stretch the frame time they
    show). When none does, the speeds within that error of one spacing's frame time are
    the answer, uncertain; unknown with too few spacings, when that frame time is within
    the error, or when it is no standard speed's (a sender that paced its frames)."""
    spacing = train_spacing(ts, sender, 1)
    if len(spacing) < _MIN_PAIRS or wire_bytes <= 0:
        return LinkSpeed()
    frame = _frame_time(spacing)
    if frame <= 0 or _snap(wire_bytes, frame) is None:
        return LinkSpeed()
    frames, train, shorter = 1, spacing, frame
    while len(train) >= _MIN_PAIRS:
        centre = _frame_time(train)
        if centre > 2 * _spacing_error(spacing, centre, slack_ns) / frames:
            if frames > 1 and (shorter <= 0 or abs(np.log(centre / shorter)) > _STEP):
                break  # trains this long hold gaps the shorter ones did not: no reading
            return _read(train, centre, wire_bytes)
        frames, shorter = frames * 2, centre
        train = train_spacing(ts, sender, frames)
    error = _spacing_error(spacing, frame, slack_ns)
    if frame <= error:
        return LinkSpeed()
    return LinkSpeed(None, *_between(wire_bytes, frame + error, frame - error))


def _spacing_error(spacing: np.ndarray, frame: float, slack_ns: int) -> float:
    """How far a spacing may be off, as the spacings show it: the clock's slack, or how far
    the closest falls short of the frame time if further (only a clock stamps a frame
    closer to the one before than the wire allows; the jitter the clock measure reads, a
    5% quantile of a cluster cut at twice its lower quartile, falls short of that under
    jitter comparable to a frame time)."""
    return max(float(slack_ns), frame - float(spacing.min()))


def _read(spacing: np.ndarray, frame: float, wire_bytes: int) -> LinkSpeed:
    """The standard speed a frame time of `frame` (the centre of `spacing`) shows, certain
    when every quarter of the spacings, taken in capture order, shows the same one (the
    centre of each within the same window): else the range they span."""
    parts = [_centre(p, frame) for p in np.array_split(spacing, _PARTS)]
    speeds = {_snap(wire_bytes, f) if f > 0 else None for f in [frame, *parts]}
    known = [v for v in speeds if v is not None]
    if len(speeds) == 1:
        return LinkSpeed(known[0], known[0], known[0])
    return LinkSpeed(None, min(known), max(known)) if known else LinkSpeed()


def _frame_time(spacing: np.ndarray) -> float:
    """The centre of the busiest cluster of spacings (0 when a quarter are not above 0):
    start from the median of those up to twice the lower quartile, then take the median
    of those within half a frame time of it until it settles. The window is symmetric, so jitter,
    which moves spacings both ways alike, leaves the centre where it was; the cut alone
    was not (it dropped the long half of the cluster, never the short one)."""
    q1 = float(np.quantile(spacing, 0.25))
    if q1 <= 0:
        return 0.0
    frame = float(np.median(spacing[spacing <= 2 * q1]))
    for _ in range(_SETTLE):
        centre = _centre(spacing, frame)
        if centre == frame:
            break
        frame = centre
    return frame


def _centre(spacing: np.ndarray, frame: float) -> float:
    """The median of the spacings within half a frame time of `frame` (0: none are)."""
    near = spacing[np.abs(spacing - frame) <= frame / 2]
    return float(np.median(near)) if len(near) else 0.0


def _snap(wire_bytes: int, frame_ns: float) -> float | None:
    """The standard speed nearest (by ratio) to the one a frame time of `frame_ns` shows;
    None when that is further from every one than half the ratio to its neighbour (the end
    speeds reach as far out as in): a sender that paced its frames, not a link."""
    rate = float(wire_ns(wire_bytes, 1.0)) / frame_ns  # its wire time at 1 b/s, over its own
    at = int(np.argmin(np.abs(np.log(STANDARD_SPEEDS / rate))))
    return float(STANDARD_SPEEDS[at]) if _BASINS[at] <= rate <= _BASINS[at + 1] else None


def _between(wire_bytes: int, slow_ns: float, fast_ns: float) -> tuple[float, float]:
    """The standard speeds frame times from `slow_ns` down to `fast_ns` span, the ends of
    the list where they reach beyond it."""
    slow = _snap(wire_bytes, slow_ns) or float(STANDARD_SPEEDS[0])
    fast = _snap(wire_bytes, fast_ns) if fast_ns > 0 else None
    return slow, fast or float(STANDARD_SPEEDS[-1])


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
    jitter; the link speed is read as _link_of says."""
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
    speed = _link_of(ts_[sized], senders, sized, size, resolution + jitter)
    link, longest = speed.bps, totals.longest
    if link is not None:
        frame = int(np.ceil(wire_ns(longest, link)))
    else:  # a full frame goes out no sooner than its wire time after its source's previous
        closest = _closest_spacing(ts_[sized], src_[sized])
        frame = closest + 2 * jitter + resolution if closest else _SLOWEST_FRAME(longest)
    jitter, frame = min(jitter, MAX_SLACK_NS), min(frame, MAX_SLACK_NS)
    resolution = min(resolution, MAX_SLACK_NS)
    return Tolerances(resolution, jitter, link, frame, speed.slowest_bps, speed.fastest_bps)


def _link_of(
    ts: np.ndarray,
    senders: tuple[np.ndarray, np.ndarray],
    sized: np.ndarray,
    size: int,
    slack_ns: int,
) -> LinkSpeed:
    """The link speed frames of `size` show (`ts` of those frames only), per source and
    destination (a NIC port) or, where those show none measured, per destination (a switch
    port delivering: every source's frames to it leave one after the other) unless a
    source's adjacent frames to one destination show another speed: a capture point
    before the switch sees two sources' frames to one host closer than any wire (two
    requester hosts seen at one read 800 Gb/s on 100 Gb/s links, their own frames 100)."""
    path, host = senders[0][sized], senders[1][sized]
    own = link_speed(ts, path, size, slack_ns)
    if own.bps is not None:
        return own
    merged = link_speed(ts, host, size, slack_ns)
    spacing = train_spacing(ts, path, 1)
    frame = _frame_time(spacing) if len(spacing) else 0.0
    if merged.bps is None or (frame > 0 and _snap(size, frame) != merged.bps):
        return own
    return merged


def _one_path(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """A code per (source, destination) pair, -1 where either is unknown. A source's
    frames to one destination cross one switch egress queue, so no capture point sees them
    closer than a frame time; to two destinations they leave by two egress ports, and a
    mirror there sees the second come out of an idle port while the first still waits in
    a busy one, sooner after it than the wire allows. Numbered by the pairs themselves,
    not by arithmetic on the codes: a streamed capture's codes are 62-bit address hashes,
    whose products wrapped (and, negative, read as unknown). Each side is ranked first, so
    the pair is one int64 below len(src)^2, numbered as np.unique(axis=0) numbers the rows
    (by source, then destination) without its row sort (~0.1 s of 128k rows)."""
    known = (src >= 0) & (dst >= 0)
    if not len(src):
        return np.zeros(0, np.int64)
    src_rank, _ = _ranks(src)
    dst_rank, dst_values = _ranks(dst)
    return np.where(known, _ranks(src_rank * dst_values + dst_rank)[0], -1)


def _ranks(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Each value's rank among the distinct values (np.unique's inverse, as int64), and
    how many there are: counted over the range when it is narrow (address codes), else
    sorted (a streamed capture's address hashes)."""
    low, high = int(values.min()), int(values.max())
    if high - low > 4 * len(values) + 4096:
        distinct, inverse = np.unique(values, return_inverse=True)
        return inverse.astype(np.int64).reshape(-1), len(distinct)
    offset = values.astype(np.int64) - low
    seen = np.bincount(offset, minlength=high - low + 1) > 0
    rank = np.cumsum(seen) - 1
    return rank[offset], int(rank[-1]) + 1


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
