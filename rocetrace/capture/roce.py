"""The RoCE stage of the header walk (C kernel): BTH, extended headers from the opcode table,
payload length and the invariant CRC check."""

from __future__ import annotations

from functools import partial

import numpy as np

from rocetrace.capture.native import kernels, over_frames
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
Array = np.ndarray


def roce_stage(
    buf: Array, base: Array, caps: Array, sl: Array, roce: Array, lut_off: Array,
    lut_len: Array, table: Array, payload: Array, icrc_out: Array, status: Array,
    anomaly: Array,
) -> None:  # fmt: skip
    """BTH, extended headers (THE opcode table as lut_off / lut_len), payload length, ICRC
    (table: the CRC32 table). A frame keeps the first anomaly found on it.

    roce[:, i] = (IP start, BTH offset, packet end from the length fields, has UDP) or -1.
    """
    tables = (
        np.ascontiguousarray(lut_off, np.int32),
        np.ascontiguousarray(lut_len, np.int32),
        np.ascontiguousarray(table, np.uint32),
    )
    frames = (buf, np.ascontiguousarray(base, np.int64), np.ascontiguousarray(caps, np.int64))
    outs = (payload, icrc_out, status, anomaly)
    over_frames(len(base), partial(kernels.roce_stage, *frames, sl, roce, *tables, *outs))
