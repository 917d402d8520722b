"""Small numba kernels shared by the writer and the reader (byte copies, integer reads)."""

from __future__ import annotations

import numpy as np
from numba import njit

from rocetrace.capture import _numba_cache  # noqa: F401  (sets NUMBA_CACHE_DIR first)


@njit(cache=True, nogil=True)
def copy_records(
    out: np.ndarray,
    starts: np.ndarray,
    rec: np.ndarray,
    buf: np.ndarray,
    offsets: np.ndarray,
    caps: np.ndarray,
    trailer: np.ndarray,
    rec_len: np.ndarray,
) -> None:
    """Lay out each record: its header bytes, its frame bytes, its trailer bytes."""
    head_len = rec.shape[1]
    tail_len = trailer.shape[1]
    for i in range(len(starts)):
        s = starts[i]
        out[s : s + head_len] = rec[i]
        d = s + head_len
        out[d : d + caps[i]] = buf[offsets[i] : offsets[i] + caps[i]]
        if tail_len:
            e = s + rec_len[i]
            out[e - tail_len : e] = trailer[i]


GATHER_BLOCK = 1024  # frames per block (a multiple of 8): their bytes stay in cache


@njit(cache=True, inline="always")
def _be(buf, q, span):
    """The big-endian integer of buf[q:q + span] (span 1..8), byte by byte."""
    v = np.uint64(0)
    for k in range(span):
        v = (v << np.uint64(8)) | np.uint64(buf[q + k])
    return v


@njit(cache=True, inline="always")
def _be_wide(buf, q, span):
    """_be with a fixed 8-byte read when the buffer holds 8 bytes from q (faster for the
    address keys; no faster for the field gathers)."""
    v = np.uint64(0)
    if q + 8 <= len(buf):
        for k in range(8):
            v = (v << np.uint64(8)) | np.uint64(buf[q + k])
        return v >> np.uint64(64 - 8 * span)
    for k in range(span):
        v = (v << np.uint64(8)) | np.uint64(buf[q + k])
    return v


@njit(cache=True, nogil=True)
def gather_columns(buf, base, caps, slots, spec, masks, outs, flags, vbits, counts):
    """Every integer column in one pass over blocks of frames: per (slot, Field) source of
    spec (slot, byte offset, span, shift, kind, row, column), a big-endian read, shift, mask.

    kind 0..3 write outs[kind][row, i] (uint8..uint64 matrices), kind 4 sets or clears bit i
    of flags[row]. A later valid source of a column overwrites an earlier one. Frames without
    the header, or whose capture ends inside the field, are left invalid: vbits[column] is the
    Arrow validity bitmap, counts[column] its number of set bits.
    """
    out8, out16, out32, out64 = outs
    n = len(base)
    popcount = np.zeros(256, np.int64)
    for b in range(256):
        popcount[b] = popcount[b >> 1] + (b & 1)
    for start in range(0, n, GATHER_BLOCK):
        stop = min(n, start + GATHER_BLOCK)
        for s in range(spec.shape[0]):
            slot, off, span, shift = spec[s, 0], spec[s, 1], spec[s, 2], spec[s, 3]
            kind, row, col, mask = spec[s, 4], spec[s, 5], spec[s, 6], masks[s]
            for g in range(start, stop, 8):
                valid, ones = 0, 0
                for i in range(g, min(g + 8, stop)):
                    r = np.int64(slots[slot, i])
                    if r < 0 or r + off + span > caps[i]:
                        continue
                    v = (_be(buf, base[i] + r + off, span) >> np.uint64(shift)) & mask
                    valid |= 1 << (i - g)
                    if kind == 0:
                        out8[row, i] = v
                    elif kind == 1:
                        out16[row, i] = v
                    elif kind == 2:
                        out32[row, i] = v
                    elif kind == 3:
                        out64[row, i] = v
                    elif v:
                        ones |= 1 << (i - g)
                if valid:
                    vbits[col, g >> 3] |= valid
                    if kind == 4:
                        flags[row, g >> 3] = (flags[row, g >> 3] & ~valid) | ones
        for col in range(vbits.shape[0]):
            k = 0
            for byte in range(start >> 3, (stop + 7) >> 3):
                k += popcount[vbits[col, byte]]
            counts[col] += k


@njit(cache=True, nogil=True)
def address_keys(buf, base, caps, slots, spec, key_hi, key_lo, key_kind):
    """(kind, hi, lo) keys of addresses, one row per column: spec rows (column, slot, byte
    offset, width 4 / 6 / 16, kind); a later present source of a column overwrites."""
    for i in range(len(base)):
        for s in range(spec.shape[0]):
            col, slot, off, width, kind = spec[s, 0], spec[s, 1], spec[s, 2], spec[s, 3], spec[s, 4]
            r = np.int64(slots[slot, i])
            if r < 0 or r + off + width > caps[i]:
                continue
            q = base[i] + r + off
            if width > 8:
                key_hi[col, i] = _be_wide(buf, q, width - 8)
                key_lo[col, i] = _be_wide(buf, q + width - 8, 8)
            else:
                key_hi[col, i] = 0
                key_lo[col, i] = _be_wide(buf, q, width)
            key_kind[col, i] = kind


@njit(cache=True, nogil=True)
def factorize_keys(key_hi, key_lo, key_kind):
    """Codes (first-appearance order, -1 for kind 0) and the row of each unique key.

    Open addressing on (kind, hi, lo), grown at half load: a few ns per frame.
    """
    mask = 1023
    table = np.full(mask + 1, -1, np.int64)
    codes = np.full(len(key_hi), -1, np.int32)
    first = np.empty(len(key_hi), np.int64)
    n_unique = 0
    for i in range(len(key_hi)):
        if key_kind[i] == 0:
            continue
        s = _probe(table, mask, key_hi, key_lo, key_kind, i)
        if table[s] >= 0:
            codes[i] = codes[table[s]]
            continue
        table[s] = i
        codes[i] = n_unique
        first[n_unique] = i
        n_unique += 1
        if 2 * n_unique > mask:
            mask = mask * 4 + 3
            table = np.full(mask + 1, -1, np.int64)
            for u in range(n_unique):
                table[_probe(table, mask, key_hi, key_lo, key_kind, first[u])] = first[u]
    return codes, first[:n_unique].copy()


@njit(cache=True)
def _probe(table, mask, key_hi, key_lo, key_kind, i):
    """The slot of row i's key: the one holding an equal key, else the first empty one."""
    h = (key_hi[i] * np.uint64(0x9E3779B97F4A7C15)) ^ key_lo[i] ^ np.uint64(key_kind[i])
    s = np.int64(((h * np.uint64(0xBF58476D1CE4E5B9)) >> np.uint64(17)) & np.uint64(mask))
    while True:
        j = table[s]
        if j < 0 or (
            key_hi[j] == key_hi[i] and key_lo[j] == key_lo[i] and key_kind[j] == key_kind[i]
        ):
            return s
        s = (s + 1) & mask
