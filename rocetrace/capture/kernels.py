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


@njit(cache=True, nogil=True)
def gather_field(buf, base, caps, slots, slot, byte_off, span, shift, mask, out, valid):
    """One Field of one header slot for every frame: big-endian read, shift, mask.

    Frames without the header, or whose capture ends inside the field, are left invalid.
    """
    for i in range(len(base)):
        r = np.int64(slots[slot, i])
        if r < 0 or r + byte_off + span > caps[i]:
            continue
        q = base[i] + r + byte_off
        v = np.uint64(0)
        for k in range(span):
            v = (v << np.uint64(8)) | np.uint64(buf[q + k])
        out[i] = (v >> np.uint64(shift)) & mask
        valid[i] = True


@njit(cache=True, nogil=True)
def address_keys(buf, base, caps, slots, slot, byte_off, width, kind, key_hi, key_lo, key_kind):
    """(kind, hi, lo) keys of a 4-, 6- or 16-byte address at byte_off of a header slot."""
    for i in range(len(base)):
        r = np.int64(slots[slot, i])
        if r < 0 or r + byte_off + width > caps[i]:
            continue
        q = base[i] + r + byte_off
        hi = np.uint64(0)
        lo = np.uint64(0)
        for k in range(width):
            byte = np.uint64(buf[q + k])
            if width - k > 8:
                hi = (hi << np.uint64(8)) | byte
            else:
                lo = (lo << np.uint64(8)) | byte
        key_hi[i], key_lo[i], key_kind[i] = hi, lo, kind


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


@njit(cache=True, nogil=True)
def gather_header(buf, base, caps, slots, slot, size, out, avail):
    """Copy the first `size` bytes of one header slot of every frame into a compact matrix.

    One pass over the frames per header; the field gathers then read the small matrix.
    avail[i] is how many of those bytes the capture holds (-1 when the header is absent).
    """
    for i in range(len(base)):
        r = np.int64(slots[slot, i])
        if r < 0:
            continue
        k = min(size, caps[i] - r)
        avail[i] = k
        if k > 0:
            out[i, :k] = buf[base[i] + r : base[i] + r + k]
