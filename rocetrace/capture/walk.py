"""Per-packet header walk (C kernels): link layer, VLAN tags, IP, UDP, VXLAN, BTH, ext headers.

The walk runs as stages, each one flat loop over all frames. Each stage records where
headers start (frame-relative, -1 absent) in the slot matrix of rocetrace.capture.layers; a
VXLAN frame runs the VLAN/IP stages again on its inner frame after inner_stage. Field values
are gathered afterwards, column by column (rocetrace.capture.kernels). These wrappers split
large windows over two threads.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from rocetrace.capture.layers import N_SLOTS
from rocetrace.capture.native import kernels, over_frames
from rocetrace.schema import ANOMALIES, ENCAPS

ROCE_V2, ROCE_V1 = ENCAPS.index("roce_v2"), ENCAPS.index("roce_v1")
VXLAN_ROCE_V2, ENC_PFC, OTHER = (
    ENCAPS.index("vxlan+roce_v2"),
    ENCAPS.index("pfc"),
    ENCAPS.index("other"),
)
A_TRUNC_ETH = 1 + ANOMALIES.index("truncated_ethernet")
A_TRUNC_IP = 1 + ANOMALIES.index("truncated_ip")
A_UNSUPPORTED = 1 + ANOMALIES.index("unsupported_link_type")
MAX_OFFSET = kernels.MAX_OFFSET  # headers are looked for in the first 32 KiB (int16 slots)
LT_ETHERNET, LT_SLL, LT_SLL2, LT_RAW, LT_IPV4, LT_IPV6 = 1, 113, 276, 101, 228, 229


Array = np.ndarray


def _frames(buf: Array, base: Array, caps: Array) -> tuple[Array, Array, Array]:
    """The frame arguments every stage takes, offsets and caps as the int64 the C expects."""
    return buf, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(caps, np.int64)


def link_stage(
    buf: Array, base: Array, caps: Array, lts: Array, sl: Array, p: Array, etype: Array,
    anomaly: Array,
) -> None:  # fmt: skip
    """Link-layer header: MAC slots, L3 offset p and EtherType (p = -1 when none)."""
    lts = np.ascontiguousarray(lts, np.int32)
    stage = partial(kernels.link_stage, *_frames(buf, base, caps), lts, sl, p, etype, anomaly)
    over_frames(len(base), stage)


def vlan_stage(
    buf: Array, base: Array, caps: Array, sl: Array, p: Array, etype: Array, anomaly: Array
) -> None:
    """Step over 802.1Q / QinQ tags; the outermost tag's TCI goes to the VLAN slot."""
    stage = partial(kernels.vlan_stage, *_frames(buf, base, caps), sl, p, etype, anomaly)
    over_frames(len(base), stage)


def l3_stage(
    buf: Array, base: Array, caps: Array, sl: Array, p: Array, etype: Array, encap: Array,
    anomaly: Array, roce: Array, ports: Array, inner: bool,
) -> None:  # fmt: skip
    """PFC, RoCEv1, IP/UDP. roce[:, i] = (IP start, BTH, end from lengths, has UDP) of RoCE
    frames; a VXLAN frame gets p = its inner Ethernet offset, etype = -1."""
    ports = np.ascontiguousarray(ports, np.int64)
    args = (*_frames(buf, base, caps), sl, p, etype, encap, anomaly, roce, ports, bool(inner))
    over_frames(len(base), partial(kernels.l3_stage, *args))


def inner_stage(
    buf: Array, base: Array, caps: Array, sl: Array, p: Array, etype: Array, anomaly: Array
) -> None:
    """The Ethernet frame inside VXLAN: its addresses and IP replace the outer ones."""
    stage = partial(kernels.inner_stage, *_frames(buf, base, caps), sl, p, etype, anomaly)
    over_frames(len(base), stage)


def new_slots(n: int) -> np.ndarray:
    """The slot matrix for n frames: int16 header offsets, -1 where absent."""
    return np.full((N_SLOTS, n), -1, dtype=np.int16)
