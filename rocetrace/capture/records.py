"""Record scan: find every packet record of a pcap / pcapng byte window, in numba.

The scan only hops from record header to record header and writes, per packet, where its
bytes start, how many were captured, its wire length, its timestamp in ns and its link type.
It stops at the end of the window, at a record the window does not hold entirely (the caller
reads more, or reports an incomplete tail) or after `limit` records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from rocetrace.capture import _numba_cache  # noqa: F401  (sets NUMBA_CACHE_DIR first)

DONE, LIMIT, PARTIAL, CORRUPT = 0, 1, 2, 3
MAX_INTERFACES = 4096
MAX_RECORD = 1 << 28  # a record claiming more than 256 MiB is garbage, not a packet
_SHB, _IDB, _SPB, _EPB = 0x0A0D0D0A, 1, 3, 6


@njit(cache=True)
def rd16(buf: np.ndarray, p: int, big: bool) -> int:
    if big:
        return int((np.int64(buf[p]) << 8) | np.int64(buf[p + 1]))
    return int((np.int64(buf[p + 1]) << 8) | np.int64(buf[p]))


@njit(cache=True)
def rd32(buf: np.ndarray, p: int, big: bool) -> int:
    if big:
        return int((rd16(buf, p, True) << 16) | rd16(buf, p + 2, True))
    return int((rd16(buf, p + 2, False) << 16) | rd16(buf, p, False))


@njit(cache=True)
def units_to_ns(units: int, tsresol: int) -> int:
    """pcapng if_tsresol: high bit clear means 10^-v seconds per unit, set means 2^-v."""
    if tsresol & 0x80:
        b = tsresol & 0x7F
        whole = units >> b
        frac = units & ((np.int64(1) << b) - 1)
        return int(whole * 1_000_000_000 + np.int64(frac * (1e9 / float(np.int64(1) << b))))
    if tsresol <= 9:
        return units * 10 ** (9 - tsresol)
    return units // 10 ** (tsresol - 9)


@njit(cache=True, nogil=True)
def scan_pcap(buf, pos, big, frac_ns, linktype, limit, out_off, out_cap, out_wire, out_ts, out_lt):
    """Classic pcap records from `pos`; fills the out arrays when they are long enough."""
    end = len(buf)
    fill = len(out_off) > 0
    n = 0
    while True:
        if pos == end:
            return n, pos, DONE
        if end - pos < 16:
            return n, pos, PARTIAL
        cap = rd32(buf, pos + 8, big)
        if cap > MAX_RECORD:
            return n, pos, CORRUPT
        if end - pos - 16 < cap:
            return n, pos, PARTIAL
        if n >= limit:
            return n, pos, LIMIT
        if fill:
            out_off[n] = pos + 16
            out_cap[n] = cap
            out_wire[n] = max(rd32(buf, pos + 12, big), cap)
            out_ts[n] = rd32(buf, pos, big) * 1_000_000_000 + rd32(buf, pos + 4, big) * frac_ns
            out_lt[n] = linktype
        pos += 16 + cap
        n += 1


@njit(cache=True)
def _read_idb(buf, p, body_end, big, if_lt, if_res, if_snap, if_offs, n_if):
    """Register one interface: link type, snap length, if_tsresol and if_tsoffset options."""
    if n_if >= MAX_INTERFACES or body_end - p < 8:
        return n_if
    if_lt[n_if] = rd16(buf, p, big)
    if_snap[n_if] = rd32(buf, p + 4, big)
    if_res[n_if] = 6
    if_offs[n_if] = 0
    q = p + 8
    while q + 4 <= body_end:
        code, length = rd16(buf, q, big), rd16(buf, q + 2, big)
        if code == 0:
            break
        if code == 9 and length >= 1:
            if_res[n_if] = buf[q + 4]
        elif code == 14 and length == 8:
            hi, lo = rd32(buf, q + 4, big), rd32(buf, q + 8, big)
            if_offs[n_if] = ((hi << 32) | lo if big else (lo << 32) | hi) * 1_000_000_000
        q += 4 + ((length + 3) & ~3)
    return n_if + 1


@njit(cache=True, nogil=True)
def scan_pcapng(
    buf,
    pos,
    state,
    if_lt,
    if_res,
    if_snap,
    if_offs,
    limit,
    out_off,
    out_cap,
    out_wire,
    out_ts,
    out_lt,
):
    """pcapng blocks from `pos`; state = [big-endian flag, interface count, last ts]."""
    end = len(buf)
    fill = len(out_off) > 0
    n = 0
    while True:
        if pos == end:
            return n, pos, DONE
        if end - pos < 12:
            return n, pos, PARTIAL
        big = state[0] == 1
        btype = rd32(buf, pos, big)
        if btype == _SHB:
            if buf[pos + 8] == 0x1A and buf[pos + 9] == 0x2B:
                state[0] = 1
            elif buf[pos + 8] == 0x4D and buf[pos + 9] == 0x3C:
                state[0] = 0
            else:
                return n, pos, CORRUPT
            big = state[0] == 1
            state[1] = 0  # a new section starts a new interface list
        blen = rd32(buf, pos + 4, big)
        if blen < 12 or blen % 4 or blen > MAX_RECORD:
            return n, pos, CORRUPT
        if end - pos < blen:
            return n, pos, PARTIAL
        body, body_end = pos + 8, pos + blen - 4
        if btype == _IDB:
            state[1] = _read_idb(
                buf, body, body_end, big, if_lt, if_res, if_snap, if_offs, state[1]
            )
        elif btype in (_EPB, _SPB):
            if n >= limit:
                return n, pos, LIMIT
            if fill:
                _fill_packet(
                    buf,
                    body,
                    body_end,
                    big,
                    btype == _EPB,
                    state,
                    if_lt,
                    if_res,
                    if_snap,
                    if_offs,
                    n,
                    out_off,
                    out_cap,
                    out_wire,
                    out_ts,
                    out_lt,
                )
            n += 1
        pos += blen


@njit(cache=True)
def _fill_packet(
    buf,
    body,
    body_end,
    big,
    epb,
    state,
    if_lt,
    if_res,
    if_snap,
    if_offs,
    n,
    out_off,
    out_cap,
    out_wire,
    out_ts,
    out_lt,
):
    """One EPB or SPB; an SPB has no timestamp and takes the previous packet's."""
    if epb:
        ifid = rd32(buf, body, big)
        units = (rd32(buf, body + 4, big) << 32) | rd32(buf, body + 8, big)
        cap, wire, data = rd32(buf, body + 12, big), rd32(buf, body + 16, big), body + 20
    else:
        ifid, wire, data = 0, rd32(buf, body, big), body + 4
        cap = min(wire, body_end - data)
        if state[1] > 0 and if_snap[0] > 0:
            cap = min(cap, if_snap[0])
    cap = max(0, min(cap, body_end - data))
    out_off[n], out_cap[n], out_wire[n] = data, cap, max(wire, cap)
    if ifid < state[1]:
        out_lt[n] = if_lt[ifid]
        if epb:
            state[2] = units_to_ns(units, if_res[ifid]) + if_offs[ifid]
    else:
        out_lt[n] = -1  # packet of an interface that was never described
    out_ts[n] = state[2]


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
    state: ScanState, buf: np.ndarray, pos: int, limit: int, out: list[np.ndarray]
) -> tuple[int, int, int]:
    """One kernel pass; a counting pass (empty outputs) works on a copy of the state."""
    s = state
    if s.fmt == "pcap":
        return scan_pcap(buf, pos, s.big, s.frac_ns, s.linktype, limit, *out)
    counting = len(out[0]) == 0
    tables = [s.ng, s.if_lt, s.if_res, s.if_snap, s.if_offs]
    if counting:
        tables = [t.copy() for t in tables]
    kernel: Any = scan_pcapng
    return kernel(buf, pos, *tables, limit, *out)


def scan(state: ScanState, buf: np.ndarray, pos: int, limit: int) -> tuple[Records, int, int]:
    """Count, then fill, the records from `pos`: (records, position after them, status).

    The kernels stop before the (limit+1)-th packet, so both passes stop at the same place.
    """
    empty = [np.empty(0, np.int64)] * 4 + [np.empty(0, np.int32)]
    n, _, _ = _run(state, buf, pos, limit, empty)
    out = [np.empty(n, np.int64) for _ in range(4)] + [np.empty(n, np.int32)]
    _, end, status = _run(state, buf, pos, n if n < limit else limit, out)
    return Records(*out), int(end), int(status)
