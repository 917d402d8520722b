"""Per-packet header walk (C kernel): link layer, VLAN tags, IP, UDP, VXLAN, BTH, ext headers.

One pass over the frames: each frame goes through every stage while its bytes are in
cache, recording where headers start (frame-relative, -1 absent) in the slot matrix of
rocetrace.capture.layers; a VXLAN frame runs the VLAN/IP stages again on its inner frame.
The RoCE stage finds the extended headers from THE opcode table, the payload length and the
invariant CRC. Field values are gathered afterwards, column by column
(rocetrace.capture.kernels). Large windows are split over two threads.
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


def walk_frames(
    buf: Array, base: Array, caps: Array, lts: Array, slots: Array, ports: Array,
    opcode_tables: tuple[Array, Array, Array], encap: Array, anomaly: Array, payload: Array,
    icrc: Array, status: Array,
) -> None:  # fmt: skip
    """Walk every frame: slots, encap, anomaly (the first found), payload length, ICRC and
    its status. ports: (RoCEv2, VXLAN) UDP ports; opcode_tables: each opcode's extended
    header offsets and total length (-1 unknown), the CRC32 table."""
    lut_off, lut_len, crc = opcode_tables
    args = (
        buf, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(caps, np.int64),
        np.ascontiguousarray(lts, np.int32), slots, np.ascontiguousarray(ports, np.int64),
        np.ascontiguousarray(lut_off, np.int32), np.ascontiguousarray(lut_len, np.int32),
        np.ascontiguousarray(crc, np.uint32), encap, anomaly, payload, icrc, status,
    )  # fmt: skip
    over_frames(len(base), partial(kernels.walk_frames, *args))


def new_slots(n: int) -> np.ndarray:
    """The slot matrix for n frames: int16 header offsets, -1 where absent."""
    return np.full((N_SLOTS, n), -1, dtype=np.int16)
