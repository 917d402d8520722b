"""numba kernels of the bulk path: ICRC over many frames and frame assembly.

The ICRC of frames that share a template differs only in the headers: the CRC register after
the (per-frame) header bytes is carried across the (shared) payload with a precomputed linear
map, so the cost per frame does not grow with the payload.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rocetrace.dissectors.icrc import crc32_table
from rocetrace.generate import _numba_cache  # noqa: F401  (cache dir before compiling)

CRC_TABLE = crc32_table()


@njit(cache=True)
def _advance(table: np.ndarray, reg: np.uint32, data: np.ndarray) -> np.uint32:
    for b in data:
        reg = table[(reg ^ b) & 0xFF] ^ (reg >> 8)
    return reg


@njit(cache=True)
def _zero_tables(table: np.ndarray, n: int) -> np.ndarray:
    """Z[k, v] = register after n zero bytes starting from v << 8k (a linear map)."""
    z = np.zeros((4, 256), dtype=np.uint32)
    for k in range(4):
        for v in range(256):
            reg = np.uint32(v) << np.uint32(8 * k)
            for _ in range(n):
                reg = table[reg & 0xFF] ^ (reg >> 8)
            z[k, v] = reg
    return z


def icrc_rows(arr: np.ndarray, ip_off: int, mask: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """ICRC of every row: CRC32 of 8 x 0xFF + masked headers at ip_off + the shared tail."""
    init = _advance(CRC_TABLE, np.uint32(0xFFFFFFFF), np.full(8, 0xFF, dtype=np.uint8))
    z = _zero_tables(CRC_TABLE, len(tail))
    tail_reg = _advance(CRC_TABLE, np.uint32(0), tail)
    out = np.empty(arr.shape[0], dtype=np.uint32)
    _icrc_regs(arr, ip_off, mask, CRC_TABLE, init, z, out)
    return ~(out ^ tail_reg)


@njit(cache=True)
def _icrc_regs(arr, ip_off, mask, table, init, z, out):
    n_hdr = mask.shape[0]
    for r in range(arr.shape[0]):
        reg = init
        for i in range(n_hdr):
            reg = table[(reg ^ (arr[r, ip_off + i] | mask[i])) & 0xFF] ^ (reg >> 8)
        out[r] = (
            z[0, reg & 0xFF] ^ z[1, (reg >> 8) & 0xFF] ^ z[2, (reg >> 16) & 0xFF] ^ z[3, reg >> 24]
        )


@njit(cache=True)
def scatter_frames(flat, offsets, head, tail, icrc, icrc_off):
    """Frame r = head[r] + shared tail (+ its ICRC, little-endian, when icrc_off >= 0)."""
    h, t = head.shape[1], tail.shape[0]
    for r in range(head.shape[0]):
        o = offsets[r]
        for i in range(h):
            flat[o + i] = head[r, i]
        for i in range(t):
            flat[o + h + i] = tail[i]
        if icrc_off >= 0:
            for j in range(4):
                flat[o + icrc_off + j] = (icrc[r] >> np.uint32(8 * j)) & 0xFF
