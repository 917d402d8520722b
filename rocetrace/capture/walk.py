"""Per-packet header walk (C kernel): link layer, VLAN tags, IP, UDP, VXLAN, BTH, ext headers.

One pass over the frames: each frame goes through every stage while its bytes are in
cache, recording where headers start (frame-relative, -1 absent) in the slot matrix of
rocetrace.capture.layers; a VXLAN frame runs the VLAN/IP stages again on its inner frame.
The RoCE stage finds the extended headers from THE opcode table, the payload length and the
invariant CRC. Every 256 frames, the integer columns' fields are gathered from the slots
just found. Large windows are split over two threads.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from rocetrace.capture.layers import N_SLOTS
from rocetrace.capture.native import kernels, over_frames
from rocetrace.schema import ENCAPS

ROCE_V2, ROCE_V1 = ENCAPS.index("roce_v2"), ENCAPS.index("roce_v1")
VXLAN_ROCE_V2, OTHER = ENCAPS.index("vxlan+roce_v2"), ENCAPS.index("other")
LT_ETHERNET, LT_SLL, LT_SLL2, LT_RAW, LT_IPV4, LT_IPV6 = 1, 113, 276, 101, 228, 229


Array = np.ndarray


def walk_gather(
    buf: Array, base: Array, caps: Array, lts: Array, slots: Array, ports: Array,
    opcode_tables: tuple[Array, Array, Array], walk_outs: tuple[Array, ...],
    gather_spec: tuple[Array, Array], gather_outs: tuple[tuple[Array, ...], Array, Array, Array],
) -> None:  # fmt: skip
    """Walk every frame and gather every integer column, a block of frames at a time (the
    gather reads the headers while the walk has them in cache).

    The walk fills slots and walk_outs (encap, anomaly: the first found, payload length,
    ICRC, its status); ports: (RoCEv2, VXLAN) UDP ports; opcode_tables: each opcode's
    extended header offsets and total length (-1 unknown), the CRC32 table.

    The gather: per (slot, Field) source of spec (slot, byte offset, span, shift, kind, row,
    column), a big-endian read, shift, mask; kind 0..3 write outs[kind][row, i] (uint8..uint64
    matrices), kind 4 sets or clears bit i of flags[row]; a later valid source of a column
    overwrites an earlier one. Frames without the header, or whose capture ends inside the
    field, stay invalid: vbits[column] is the Arrow validity bitmap, counts[column] gets its
    number of set bits added. gather_spec = (spec, masks), gather_outs = (outs, flags,
    vbits, counts).
    """
    lut_off, lut_len, crc = opcode_tables
    encap, anomaly, payload, icrc, status = walk_outs
    (out8, out16, out32, out64), flags, vbits, counts = gather_outs
    run = partial(
        kernels.walk_gather,
        buf, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(caps, np.int64),
        np.ascontiguousarray(lts, np.int32), slots, np.ascontiguousarray(ports, np.int64),
        np.ascontiguousarray(lut_off, np.int32), np.ascontiguousarray(lut_len, np.int32),
        np.ascontiguousarray(crc, np.uint32), encap, anomaly, payload, icrc, status,
        *gather_spec, out8, out16, out32, out64, flags, vbits,
    )  # fmt: skip

    def part(start: int, stop: int) -> Array:
        found = np.zeros_like(counts)  # per range: the threads do not share counts
        run(found, start, stop)
        return found

    counts += np.sum(over_frames(len(base), part), axis=0)


def new_slots(n: int) -> np.ndarray:
    """The slot matrix for n frames: int16 header offsets, -1 where absent. Not filled here:
    the walk writes every slot of its frames, block by block (a -1 fill pass of its own
    took ~5 ms per 2^18 frames)."""
    return np.empty((N_SLOTS, n), dtype=np.int16)
