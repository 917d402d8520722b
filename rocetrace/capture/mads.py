"""The CM MADs of a window as a small side table (rocetrace.analysis.cm's input contract).

MADs are 256-byte UD payloads to QP1; the packet table keeps none of their bytes (it stays
narrow), so the few MAD frames are picked out with numpy from the walk's BTH and DETH slots
and their fields read at the offsets `dissectors.mad.field_in_mad` gives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rocetrace.capture.layers import BTH_SLOT, SLOT_OF
from rocetrace.capture.packets import Coded, PacketColumns
from rocetrace.capture.records import Records
from rocetrace.capture.table import Walked
from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.deth import DETH
from rocetrace.dissectors.header import Field
from rocetrace.dissectors.mad import (
    CM_MGMT_CLASS,
    GSI_QP,
    MAD_HEADER,
    MAD_SIZE,
    PAIRING_FIELDS,
    field_in_mad,
)
from rocetrace.dissectors.opcodes import OPCODES

if TYPE_CHECKING:
    import pandas as pd

UD_SEND_ONLY = next(c for c, op in OPCODES.items() if op.name == "UD_SEND_ONLY")
DETH_SLOT = SLOT_OF["DETH"]
MadRows = dict[str, np.ndarray]
MAD_ATTR = MAD_HEADER.field("attribute_id")


def read_field(buf: np.ndarray, start: np.ndarray, f: Field) -> np.ndarray:
    """One big-endian field per frame, `start` the absolute offset of its header."""
    value = np.zeros(len(start), np.int64)
    for k in range(f.byte_span):
        value = (value << 8) | buf[start + f.byte_offset + k]
    return (value >> f.shift) & f.mask


def _mad_starts(
    buf: np.ndarray, rec: Records, w: Walked
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of the window's CM MAD frames, where each MAD starts (after the DETH) and where
    its captured bytes end; the MAD header up to the AttributeID must be captured."""
    bth, deth = w.slots[BTH_SLOT], w.slots[DETH_SLOT]
    rows = np.flatnonzero((bth >= 0) & (deth >= 0) & (w.payload_len >= MAD_SIZE))
    if len(rows) == 0:
        return rows, rows, rows
    base = rec.offset[rows].astype(np.int64)
    bth_at = base + bth[rows]
    mad = base + deth[rows] + DETH.size
    to_qp1 = (read_field(buf, bth_at, BTH.field("opcode")) == UD_SEND_ONLY) & (
        read_field(buf, bth_at, BTH.field("dest_qp")) == GSI_QP
    )
    end = base + rec.cap_len[rows]
    keep = np.flatnonzero(to_qp1 & (mad + MAD_ATTR.byte_offset + MAD_ATTR.byte_span <= end))
    rows, mad, end = rows[keep], mad[keep], end[keep]
    cm = np.flatnonzero(read_field(buf, mad, MAD_HEADER.field("mgmt_class")) == CM_MGMT_CLASS)
    return rows[cm], mad[cm], end[cm]


def _addresses(coded: object, rows: np.ndarray) -> np.ndarray:
    """Text addresses of the rows from a coded column (None where the frame has none)."""
    assert isinstance(coded, Coded)
    names = np.array([*coded.categories, None], dtype=object)
    codes = coded.codes[rows].astype(np.int64)
    return names[np.where(codes >= 0, codes, len(names) - 1)]


def cm_mad_rows(buf: np.ndarray, rec: Records, w: Walked, columns: PacketColumns) -> MadRows:
    """The window's CM MADs: frame, ts_ns, src_ip, dst_ip and the contract's columns, -1
    where a message has no such field or the snap length cut it."""
    rows, mad, end = _mad_starts(buf, rec, w)
    attr = read_field(buf, mad, MAD_ATTR)
    out: MadRows = {
        "frame": np.asarray(columns.columns["frame"])[rows].astype(np.int64),
        "ts_ns": rec.ts_ns[rows].astype(np.int64),
        "src_ip": _addresses(columns.columns["src_ip"], rows),
        "dst_ip": _addresses(columns.columns["dst_ip"], rows),
        "mad_attr_id": attr,
    }
    for column, names in PAIRING_FIELDS.items():
        values = np.full(len(rows), -1, np.int64)
        for message, name in names.items():
            f = field_in_mad(message, name)
            at = np.flatnonzero((attr == message) & (mad + f.byte_offset + f.byte_span <= end))
            if len(at):
                values[at] = read_field(buf, mad[at], f)
        out[column] = values
    return out


def mads_frame(parts: list[MadRows]) -> pd.DataFrame:
    """Chunks' MAD rows as one frame in the contract's dtypes (-1 -> NA); empty when none."""
    import pandas as pd

    from rocetrace.schema import MAD_DTYPES
    from rocetrace.schema.conform import empty_frame

    dtypes = {"frame": "int64", **MAD_DTYPES}
    if not any(len(p["frame"]) for p in parts):  # no MAD (most captures): ~10 ms less
        return empty_frame(dtypes)
    data = {c: np.concatenate([p[c] for p in parts]) for c in dtypes}
    frame = pd.DataFrame(data)
    for column in (c for c, t in MAD_DTYPES.items() if t[0] in "UI"):
        dtype = pd.api.types.pandas_dtype(dtypes[column])
        frame[column] = frame[column].where(frame[column] >= 0).astype(dtype)
    return frame.astype(dtypes)
