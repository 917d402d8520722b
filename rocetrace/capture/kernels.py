"""Column kernels shared by the packet table and the writer (C): addresses and integer keys
factorized, record copies (the integer fields are gathered during the walk: walk.py)."""

from __future__ import annotations

import numpy as np

from rocetrace.capture.native import kernels

Array = np.ndarray


def copy_records(
    out: Array, starts: Array, rec: Array, buf: Array, offsets: Array, caps: Array,
    trailer: Array, rec_len: Array,
) -> None:  # fmt: skip
    """Lay out each record: its header bytes, its frame bytes, its trailer bytes (ValueError
    if one does not fit `out`)."""
    kernels.copy_records(out, starts, rec, buf, offsets, caps, trailer, rec_len)


def address_codes(
    buf: Array, base: Array, caps: Array, slots: Array, spec: Array, columns: int
) -> list[tuple[Array, Array, Array, Array]]:
    """Address columns factorized straight from the frames (one C pass, one thread: codes
    are in first-appearance order): spec rows (column, slot, byte offset, width 4 / 6 / 16,
    kind), a later present source of a column overwriting. Per column: codes (int32, -1
    none) and its unique keys' kind, hi and lo, in code order."""
    n = len(base)
    codes = np.empty((columns, n), np.int32)
    u_hi, u_lo = np.empty((columns, n), np.uint64), np.empty((columns, n), np.uint64)
    u_kind, n_unique = np.empty((columns, n), np.int8), np.zeros(columns, np.int64)
    base, caps = np.ascontiguousarray(base, np.int64), np.ascontiguousarray(caps, np.int64)
    kernels.address_codes(buf, base, caps, slots, spec, codes, u_hi, u_lo, u_kind, n_unique)
    return [(codes[c], u_kind[c, :k], u_hi[c, :k], u_lo[c, :k]) for c, k in enumerate(n_unique)]


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
