"""The RoCE stage of the header walk (numba): BTH, extended headers from the opcode table,
payload length and the invariant CRC check."""

from __future__ import annotations

import numpy as np
from numba import njit

from rocetrace.capture import _numba_cache  # noqa: F401  (sets NUMBA_CACHE_DIR first)
from rocetrace.capture.layers import BTH_SLOT, EXT0
from rocetrace.schema import ANOMALIES, ICRC_STATUSES

A_SHORT_UDP = 1 + ANOMALIES.index("short_udp")
A_TRUNC_BTH = 1 + ANOMALIES.index("truncated_bth")
A_TRUNC_EXT = 1 + ANOMALIES.index("truncated_ext_header")
A_UNKNOWN_OPCODE = 1 + ANOMALIES.index("unknown_opcode")
A_BAD_ICRC = 1 + ANOMALIES.index("bad_icrc")
ICRC_OK = ICRC_STATUSES.index("ok")
ICRC_BAD = ICRC_STATUSES.index("bad")
ICRC_UNCHECKABLE = ICRC_STATUSES.index("uncheckable")
BTH_LEN, ICRC_LEN = 12, 4


@njit(cache=True)
def icrc(buf, b, ip, bth, end, v2, table):
    """CRC32 over 8 bytes 0xFF + the packet from the IP header (RoCEv1: GRH) to the ICRC,
    with TOS/TTL/checksum (IPv6: class, flow, hop limit), UDP checksum and BTH byte 4 all
    ones (IBTA A17.3.3)."""
    crc = np.uint32(0xFFFFFFFF)
    for _ in range(8):
        crc = table[(crc ^ 0xFF) & 0xFF] ^ (crc >> 8)
    v4 = buf[b + ip] >> 4 == 4
    ihl = (buf[b + ip] & 15) * 4 if v4 else 40
    for q in range(ip, end - ICRC_LEN):
        v = buf[b + q]
        r = q - ip
        if r < ihl:
            if v4:
                if r == 1 or r == 8 or r == 10 or r == 11:
                    v = 0xFF
            elif r == 0:
                v |= 0x0F
            elif r < 4 or r == 7:
                v = 0xFF
        elif (v2 and (q == bth - 2 or q == bth - 1)) or q == bth + 4:
            v = 0xFF
        crc = table[(crc ^ v) & 0xFF] ^ (crc >> 8)
    return crc ^ np.uint32(0xFFFFFFFF)


@njit(cache=True)
def _le32(buf, q):
    return (
        np.int64(buf[q])
        | (np.int64(buf[q + 1]) << 8)
        | (np.int64(buf[q + 2]) << 16)
        | (np.int64(buf[q + 3]) << 24)
    )


@njit(cache=True, nogil=True)
def roce_stage(
    buf, base, caps, sl, roce, lut_off, lut_len, table, payload, icrc_out, status, anomaly
):
    """BTH, extended headers (THE opcode table as lut_off / lut_len), payload length, ICRC.

    roce[:, i] = (IP start, BTH offset, packet end from the length fields, has UDP) or -1.
    """
    for i in range(len(base)):
        ip, bth, end, b, cap = roce[0, i], roce[1, i], roce[2, i], base[i], caps[i]
        if bth < 0:
            continue
        sl[BTH_SLOT, i], status[i] = bth, ICRC_UNCHECKABLE
        found = A_SHORT_UDP if end - bth < BTH_LEN + ICRC_LEN else 0
        op = np.int64(buf[b + bth]) if bth < cap else 0
        ext = lut_len[op]
        if bth + BTH_LEN > cap:
            found = found or A_TRUNC_BTH
        elif ext < 0:
            found = found or A_UNKNOWN_OPCODE
        else:
            for k in range(lut_off.shape[1]):
                if lut_off[op, k] >= 0:
                    sl[EXT0 + k, i] = bth + BTH_LEN + lut_off[op, k]
            length = end - bth - BTH_LEN - ext - ((buf[b + bth + 1] >> 4) & 3) - ICRC_LEN
            payload[i] = length if length >= 0 else -1
            found = found or (A_SHORT_UDP if length < 0 else 0)
            if bth + BTH_LEN + ext > cap:
                found = found or A_TRUNC_EXT
            elif bth + BTH_LEN + ICRC_LEN <= end <= cap:
                icrc_out[i] = _le32(buf, b + end - ICRC_LEN)
                good = icrc(buf, b, ip, bth, end, roce[3, i] == 1, table) == icrc_out[i]
                status[i] = ICRC_OK if good else ICRC_BAD
                found = found or (0 if good else A_BAD_ICRC)
        anomaly[i] = anomaly[i] or found
