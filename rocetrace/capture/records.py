"""Record scan: find every packet record of a pcap / pcapng byte window (C kernels).

The scan only hops from record header to record header and writes, per packet, where its
bytes start, how many were captured, its wire length, its timestamp in ns and its link type.
It stops at the end of the window, at a record the window does not hold entirely (the caller
reads more, or reports an incomplete tail), at a record that cannot be one (a caplen beyond
any snap length, a block length that is not a multiple of 4 or not repeated at the block's
end, a packet block too short for its header) or after `limit` records. After such damage
`resync` finds where records resume. Every read is bounds-checked in C.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rocetrace.capture.native import kernels

DONE, LIMIT, PARTIAL, CORRUPT = 0, 1, 2, 3
MAX_INTERFACES = kernels.MAX_INTERFACES
MAX_RECORD = kernels.MAX_RECORD  # a record claiming more than 256 MiB is garbage, not a packet
# libpcap's largest snap length (MAXIMUM_SNAPLEN): a pcap caplen beyond it, and beyond the
# file's own snap length, is a damaged record header (libpcap refuses it, so do we).
MAX_SNAPLEN = 262144


def max_caplen(snaplen: int) -> int:
    """The largest plausible captured length of a pcap file with this header snap length."""
    return min(max(snaplen, MAX_SNAPLEN), MAX_RECORD)


def units_to_ns(units: int, tsresol: int) -> int:
    """pcapng if_tsresol: high bit clear means 10^-v seconds per unit, set means 2^-v."""
    return int(kernels.units_to_ns(units, tsresol))


@dataclass
class Records:
    """Where each packet of a window is: columns of equal length."""

    offset: np.ndarray  # int64, start of the frame bytes in the window
    cap_len: np.ndarray  # int64
    wire_len: np.ndarray  # int64
    ts_ns: np.ndarray  # int64
    linktype: np.ndarray  # int32, -1 for an undescribed interface

    def __len__(self) -> int:
        return len(self.offset)


@dataclass
class ScanState:
    """What a scan must remember between windows: format, byte order, interfaces."""

    fmt: str  # "pcap" | "pcapng"
    big: bool = False
    frac_ns: int = 1000  # pcap: ns per timestamp fraction unit
    linktype: int = 1  # pcap: the file's link type
    max_cap: int = MAX_SNAPLEN  # pcap: the largest plausible captured length (max_caplen)
    ng: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))
    if_lt: np.ndarray = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))
    if_res: np.ndarray = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))
    if_snap: np.ndarray = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))
    if_offs: np.ndarray = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))

    def interfaces(self) -> list[tuple[int, int, int]]:
        """(link type, if_tsresol, snaplen) of every interface seen so far."""
        k = int(self.ng[1]) if self.fmt == "pcapng" else 0
        return [(int(self.if_lt[i]), int(self.if_res[i]), int(self.if_snap[i])) for i in range(k)]


def _run(
    state: ScanState, buf: np.ndarray, pos: int, limit: int, out: list[np.ndarray], counting: bool
) -> tuple[int, int, int]:
    """One kernel pass; the counting pass works on a copy of the interface tables (the filling
    pass registers the interfaces, even when it fills no packet)."""
    s = state
    if s.fmt == "pcap":
        return kernels.scan_pcap(buf, pos, s.big, s.frac_ns, s.linktype, s.max_cap, limit, *out)
    state_, lt, res, snap, offs = (s.ng, s.if_lt, s.if_res, s.if_snap, s.if_offs)
    if counting:
        state_, lt, res, snap, offs = (t.copy() for t in (state_, lt, res, snap, offs))
    return kernels.scan_pcapng(buf, pos, state_, lt, res, snap, offs, limit, *out)


def scan(state: ScanState, buf: np.ndarray, pos: int, limit: int) -> tuple[Records, int, int]:
    """Count, then fill, the records from `pos`: (records, position after them, status).

    The kernels stop before the (limit+1)-th packet, so both passes stop at the same place.
    """
    empty = [np.empty(0, np.int64)] * 4 + [np.empty(0, np.int32)]
    n, _, _ = _run(state, buf, pos, limit, empty, counting=True)
    out = [np.empty(n, np.int64) for _ in range(4)] + [np.empty(n, np.int32)]
    _, end, status = _run(state, buf, pos, n if n < limit else limit, out, counting=False)
    return Records(*out), int(end), int(status)


def resync(
    state: ScanState, buf: np.ndarray, pos: int, last: bool, strict: bool = False
) -> tuple[int, int]:
    """Where records resume at or after `pos` after damage: (position, DONE) found, (position,
    PARTIAL) decide with more bytes from there (only when not `last`), (end, CORRUPT) none.
    `strict`: a whole chain of records only (is a cut record followed by any?)."""
    s = state
    if s.fmt == "pcap":
        file = (s.big, s.frac_ns, s.linktype, s.max_cap)
        _, at, status = kernels.resync_pcap(buf, pos, last, *file, strict)
    else:
        ng = bool(s.ng[0]), int(s.ng[1])
        _, at, status = kernels.resync_pcapng(buf, pos, last, *ng, strict)
    return int(at), int(status)
