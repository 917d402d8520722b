"""Frames per RoCE opcode in a pcap file of Ethernet / IPv4 / UDP frames (what the bulk path
writes), counted from the file itself rather than from the generator that wrote it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
from numba import njit

BTH_AT = 14 + 20 + 8  # Ethernet, IPv4, UDP


@njit(cache=True)
def _opcodes(buf: np.ndarray, little: bool) -> np.ndarray:
    """BTH opcode of every record (-1: too short to hold one)."""
    out, n = np.empty(len(buf) // 16, np.int16), 0
    at = np.int64(24)  # past the file header
    while at + 16 <= len(buf):
        incl = np.int64(0)
        for j in range(4):  # the record header's captured length
            incl |= np.int64(buf[at + 8 + j]) << (8 * j if little else 8 * (3 - j))
        out[n] = buf[at + 16 + BTH_AT] if incl > BTH_AT else -1
        at, n = at + 16 + incl, n + 1
    return out[:n]


def opcode_mix(path: Path) -> Counter[str]:
    from rocetrace.dissectors.opcodes import OPCODES

    buf = np.fromfile(path, dtype=np.uint8)
    little = buf[0] in (0xD4, 0x4D)  # a1b2c3d4 / a1b23c4d written little-endian
    codes, counts = np.unique(_opcodes(buf, little), return_counts=True)
    names = [OPCODES[int(c)].name if c >= 0 else "?" for c in codes]
    return Counter(dict(zip(names, counts.tolist(), strict=True)))
