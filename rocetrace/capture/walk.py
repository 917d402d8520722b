"""Per-packet header walk in numba: link layer, VLAN tags, IP, UDP, VXLAN, BTH, ext headers.

The walk runs as stages, each one flat loop over all frames (numba refcounts every array
handed to a non-inlined call, which costs more than the parsing itself). Each stage records
where headers start (frame-relative, -1 absent) in the slot matrix of
rocetrace.capture.layers; a VXLAN frame runs the Ethernet/VLAN/IP stages again on its inner
frame. Field values are gathered afterwards, column by column.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rocetrace.capture import _numba_cache  # noqa: F401  (sets NUMBA_CACHE_DIR first)
from rocetrace.capture.layers import DMAC, IP4, IP6, N_SLOTS, PFC_SLOT, SMAC, UDP_SLOT, VLAN
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
MAX_OFFSET = 32767  # headers are looked for in the first 32 KiB of a frame (int16 slots)
LT_ETHERNET, LT_SLL, LT_SLL2, LT_RAW, LT_IPV4, LT_IPV6 = 1, 113, 276, 101, 228, 229


@njit(cache=True)
def be16(buf: np.ndarray, q: int) -> int:
    return int((np.int64(buf[q]) << 8) | np.int64(buf[q + 1]))


@njit(cache=True, nogil=True)
def link_stage(buf, base, caps, lts, sl, p, etype, anomaly):
    """Link-layer header: MAC slots, L3 offset p and EtherType (p = -1 when none)."""
    for i in range(len(base)):
        b, cap, lt = base[i], caps[i], lts[i]
        p[i], need = (
            -1,
            14 if lt == LT_ETHERNET else 16 if lt == LT_SLL else 20 if lt == LT_SLL2 else 1,
        )
        if lt not in (LT_ETHERNET, LT_SLL, LT_SLL2, LT_RAW, LT_IPV4, LT_IPV6):
            anomaly[i] = A_UNSUPPORTED
        elif cap < need:
            anomaly[i] = A_TRUNC_ETH
        elif lt == LT_ETHERNET:
            sl[DMAC, i], sl[SMAC, i], p[i], etype[i] = 0, 6, 14, be16(buf, b + 12)
        elif lt == LT_SLL:
            sl[SMAC, i] = 6 if be16(buf, b + 4) == 6 else -1
            p[i], etype[i] = 16, be16(buf, b + 14)
        elif lt == LT_SLL2:
            sl[SMAC, i] = 12 if buf[b + 11] == 6 else -1
            p[i], etype[i] = 20, be16(buf, b)
        else:
            version = buf[b] >> 4
            p[i], etype[i] = 0, 0x0800 if version == 4 else 0x86DD if version == 6 else 0


@njit(cache=True, nogil=True)
def vlan_stage(buf, base, caps, sl, p, etype, anomaly):
    """Step over 802.1Q / QinQ tags; the outermost tag's TCI goes to the VLAN slot."""
    for i in range(len(base)):
        while p[i] >= 0 and etype[i] in (0x8100, 0x88A8, 0x9100):
            if p[i] + 4 > caps[i]:
                p[i], anomaly[i] = -1, A_TRUNC_ETH
                break
            if sl[VLAN, i] < 0:
                sl[VLAN, i] = p[i]
            etype[i], p[i] = be16(buf, base[i] + p[i] + 2), p[i] + 4


@njit(cache=True)
def ipv6_l4(buf, b, p, cap):
    """Skip IPv6 extension headers: (L4 offset, protocol), or (-1, -1) if they are cut."""
    nxt, q = np.int64(buf[b + p + 6]), p + 40
    while nxt == 0 or nxt == 43 or nxt == 60 or nxt == 44:
        if q + 8 > cap:
            return -1, -1
        step = 8 if nxt == 44 else (np.int64(buf[b + q + 1]) + 1) * 8
        nxt, q = np.int64(buf[b + q]), q + step
    return q, nxt


@njit(cache=True)
def _ip(buf, b, cap, p, etype):
    """(L4 offset, protocol, IP end) of an IPv4 / IPv6 header; L4 -1 if cut, -2 if none."""
    if etype == 0x0800:
        if p + 20 > cap:
            return -1, 0, 0
        if be16(buf, b + p + 6) & 0x1FFF:
            return -2, 0, 0  # a later fragment: no UDP header here
        return p + (buf[b + p] & 15) * 4, np.int64(buf[b + p + 9]), p + be16(buf, b + p + 2)
    if p + 40 > cap:
        return -1, 0, 0
    l4, proto = ipv6_l4(buf, b, p, cap)
    return l4, proto, p + 40 + be16(buf, b + p + 4)


@njit(cache=True, nogil=True)
def l3_stage(buf, base, caps, sl, p, etype, encap, anomaly, roce, ports, inner):
    """PFC, RoCEv1, IP/UDP. roce[:, i] = (IP start, BTH, end from lengths, has UDP) of RoCE
    frames; a VXLAN frame gets p = its inner Ethernet offset, etype = -1."""
    for i in range(len(base)):
        b, cap, q, et = base[i], caps[i], p[i], etype[i]
        p[i] = -1
        if q < 0:
            continue
        if et == 0x8808:
            if q + 2 <= cap and be16(buf, b + q) == 0x0101:
                sl[PFC_SLOT, i], encap[i] = q, ENC_PFC
        elif et == 0x8915:
            sl[IP6, i] = q
            if q + 40 > cap:
                anomaly[i] = A_TRUNC_IP
            else:
                encap[i] = ROCE_V1
                roce[0, i], roce[1, i], roce[2, i], roce[3, i] = (
                    q,
                    q + 40,
                    q + 40 + be16(buf, b + q + 4),
                    0,
                )
        elif et == 0x0800 or et == 0x86DD:
            sl[IP4 if et == 0x0800 else IP6, i] = q
            l4, proto, ip_end = _ip(buf, b, cap, q, et)
            if l4 == -1:
                anomaly[i] = A_TRUNC_IP
            elif l4 >= 0 and proto == 17:
                sl[UDP_SLOT, i] = l4
                if l4 + 8 > cap:
                    anomaly[i] = A_TRUNC_IP
                elif be16(buf, b + l4 + 2) == ports[0]:
                    encap[i] = VXLAN_ROCE_V2 if inner else ROCE_V2
                    udp_end = l4 + be16(buf, b + l4 + 4)
                    roce[0, i], roce[1, i], roce[2, i], roce[3, i] = (
                        q,
                        l4 + 8,
                        min(udp_end, ip_end),
                        1,
                    )
                elif be16(buf, b + l4 + 2) == ports[1] and not inner:
                    p[i], etype[i] = l4 + 16, -1


@njit(cache=True, nogil=True)
def inner_stage(buf, base, caps, sl, p, etype, anomaly):
    """The Ethernet frame inside VXLAN: its addresses and IP replace the outer ones."""
    for i in range(len(base)):
        q = p[i]
        if q < 0:
            continue
        if q + 14 > caps[i]:
            p[i], anomaly[i] = -1, A_TRUNC_ETH
            continue
        sl[DMAC, i], sl[SMAC, i], sl[IP4, i], sl[IP6, i], sl[UDP_SLOT, i] = q, q + 6, -1, -1, -1
        p[i], etype[i] = q + 14, be16(buf, base[i] + q + 12)


def new_slots(n: int) -> np.ndarray:
    """The slot matrix for n frames: int16 header offsets, -1 where absent."""
    return np.full((N_SLOTS, n), -1, dtype=np.int16)
