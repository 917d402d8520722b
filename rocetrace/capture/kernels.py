"""Column kernels shared by the packet table and the writer (C): integer fields gathered
from header slots, address keys and their factorization, record copies."""

from __future__ import annotations

from functools import partial

import numpy as np

from rocetrace.capture.native import kernels, over_frames

GATHER_BLOCK = 256  # frames per block in C (a multiple of 8): their bytes stay in cache
Array = np.ndarray


def copy_records(
    out: Array, starts: Array, rec: Array, buf: Array, offsets: Array, caps: Array,
    trailer: Array, rec_len: Array,
) -> None:  # fmt: skip
    """Lay out each record: its header bytes, its frame bytes, its trailer bytes (ValueError
    if one does not fit `out`)."""
    kernels.copy_records(out, starts, rec, buf, offsets, caps, trailer, rec_len)


def _frames(
    buf: Array, base: Array, caps: Array, slots: Array
) -> tuple[Array, Array, Array, Array]:
    return buf, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(caps, np.int64), slots


def gather_columns(
    buf: Array, base: Array, caps: Array, slots: Array, spec: Array, masks: Array,
    outs: tuple[Array, ...], flags: Array, vbits: Array, counts: Array,
) -> None:  # fmt: skip
    """Every integer column in one pass over blocks of frames: per (slot, Field) source of
    spec (slot, byte offset, span, shift, kind, row, column), a big-endian read, shift, mask.

    kind 0..3 write outs[kind][row, i] (uint8..uint64 matrices), kind 4 sets or clears bit i
    of flags[row]. A later valid source of a column overwrites an earlier one. Frames without
    the header, or whose capture ends inside the field, are left invalid: vbits[column] is the
    Arrow validity bitmap, counts[column] gets its number of set bits added.
    """
    frames = _frames(buf, base, caps, slots)
    out8, out16, out32, out64 = outs

    def part(start: int, stop: int) -> Array:
        found = np.zeros_like(counts)
        matrices = (out8, out16, out32, out64, flags, vbits)
        kernels.gather_columns(*frames, spec, masks, *matrices, found, start, stop)
        return found

    counts += np.sum(over_frames(len(base), part), axis=0)


def address_keys(
    buf: Array, base: Array, caps: Array, slots: Array, spec: Array, key_hi: Array,
    key_lo: Array, key_kind: Array,
) -> None:  # fmt: skip
    """(kind, hi, lo) keys of addresses, one row per column: spec rows (column, slot, byte
    offset, width 4 / 6 / 16, kind); a later present source of a column overwrites."""
    args = (*_frames(buf, base, caps, slots), spec, key_hi, key_lo, key_kind)
    over_frames(len(base), partial(kernels.address_keys, *args))


def factorize_keys(key_hi: Array, key_lo: Array, key_kind: Array) -> tuple[Array, Array]:
    """Codes (int32, first-appearance order, -1 for kind 0) and the row of each unique key.

    Open addressing on (kind, hi, lo), grown at half load: a few ns per frame.
    """
    hi = np.ascontiguousarray(key_hi, np.uint64)
    lo = np.ascontiguousarray(key_lo, np.uint64)
    kind = np.ascontiguousarray(key_kind, np.int8)
    codes, first = np.empty(len(hi), np.int32), np.empty(len(hi), np.int64)
    n_unique = kernels.factorize_keys(hi, lo, kind, codes, first)
    return codes, first[:n_unique].copy()
