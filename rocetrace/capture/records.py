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
from rocetrace.capture.zeroed import zeroed

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


# Every packet takes at least this many bytes of a window: a pcap record header, pcapng's
# smallest packet block (a Simple Packet Block: type, length, wire length, length again).
MIN_PACKET_BYTES = 16


def _run(
    state: ScanState, buf: np.ndarray, pos: int, limit: int, out: list[np.ndarray]
) -> tuple[int, int, int]:
    """One kernel pass filling `out` (it registers the pcapng interfaces it meets)."""
    s = state
    if s.fmt == "pcap":
        return kernels.scan_pcap(buf, pos, s.big, s.frac_ns, s.linktype, s.max_cap, limit, *out)
    return kernels.scan_pcapng(buf, pos, s.ng, s.if_lt, s.if_res, s.if_snap, s.if_offs, limit, *out)


def scan(state: ScanState, buf: np.ndarray, pos: int, limit: int) -> tuple[Records, int, int]:
    """The records from `pos`: (records, position after them, status).

    One pass, into arrays with room for `limit` records or as many as the rest of the
    window can hold (at least MIN_PACKET_BYTES each), whichever is fewer. Counting first
    to size them exactly read every record header twice, and the scan is a chain of
    dependent loads: ~25 ms of CPU a pass per million records. The room is in its own
    mappings (zeroed.py), so the pages past the records found are never written and take
    no memory: the records are views of it, not copies (a 16 MB window of `decode` has
    room for a million records and holds ~115k).
    """
    room = min(limit, (len(buf) - pos) // MIN_PACKET_BYTES)
    out = [zeroed((room,), np.int64) for _ in range(4)] + [zeroed((room,), np.int32)]
    n, end, status = _run(state, buf, pos, room, out)
    return Records(*(a[:n] for a in out)), int(end), int(status)


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
