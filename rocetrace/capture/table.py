"""Records of a byte window -> the packet table, in the schema of rocetrace.schema.

The numba walk finds the headers; each integer column is then one gather per (slot, Field)
source, wrapped zero-copy as an Arrow array; addresses are factorized into categoricals.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.capture.kernels import address_keys, factorize_keys, gather_field, gather_header
from rocetrace.capture.layers import (
    COLUMN_SOURCES,
    DMAC,
    IP4,
    IP6,
    SLOT_OF,
    SMAC,
    header_of,
    opcode_layout,
)
from rocetrace.capture.records import Records
from rocetrace.capture.roce import roce_stage
from rocetrace.capture.walk import (
    MAX_OFFSET,
    OTHER,
    inner_stage,
    l3_stage,
    link_stage,
    new_slots,
    vlan_stage,
)
from rocetrace.dissectors.icrc import crc32_table
from rocetrace.dissectors.opcodes import OPCODES, UNKNOWN_OPCODE_NAME
from rocetrace.schema import ANOMALIES, ENCAPS, ICRC_STATUSES, PACKET_COLUMNS, PACKET_DTYPES

OPCODE_NAMES: tuple[str, ...] = (*(OPCODES[c].name for c in sorted(OPCODES)), UNKNOWN_OPCODE_NAME)


@dataclass
class Walked:
    """What the walk found for a window's frames (codes index the schema's category lists)."""

    slots: np.ndarray
    encap: np.ndarray
    anomaly: np.ndarray  # 0 none, else 1 + index into ANOMALIES
    payload_len: np.ndarray  # -1 null
    icrc: np.ndarray  # -1 null
    icrc_status: np.ndarray  # -1 null


@cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Opcode layout, CRC table and opcode -> name code, built once from the dissectors."""
    lut_off, lut_len = opcode_layout()
    names = np.full(256, len(OPCODE_NAMES) - 1, dtype=np.int16)
    for i, code in enumerate(sorted(OPCODES)):
        names[code] = i
    return lut_off, lut_len, crc32_table(), names


def walk_records(buf: np.ndarray, rec: Records, roce_port: int, vxlan_port: int) -> Walked:
    """Run the header-walk stages over every record of the window."""
    n = len(rec)
    lut_off, lut_len, crc, _ = _tables()
    w = Walked(
        new_slots(n), np.full(n, OTHER, np.int8), np.zeros(n, np.int8),
        np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int8),
    )  # fmt: skip
    base, caps = rec.offset, np.minimum(rec.cap_len, MAX_OFFSET)
    p, etype = np.empty(n, np.int64), np.empty(n, np.int64)
    roce = np.full((4, n), -1, np.int64)
    ports = np.array([roce_port, vxlan_port], np.int64)
    link_stage(buf, base, caps, rec.linktype, w.slots, p, etype, w.anomaly)
    for inner in (False, True):
        vlan_stage(buf, base, caps, w.slots, p, etype, w.anomaly)
        l3_stage(buf, base, caps, w.slots, p, etype, w.encap, w.anomaly, roce, ports, inner)
        if inner or not (p >= 0).any():
            break
        inner_stage(buf, base, caps, w.slots, p, etype, w.anomaly)
    roce_stage(
        buf,
        base,
        caps,
        w.slots,
        roce,
        lut_off,
        lut_len,
        crc,
        w.payload_len,
        w.icrc,
        w.icrc_status,
        w.anomaly,
    )
    return w


def _arrow(
    values: np.ndarray, valid: np.ndarray | None, dtype: pd.ArrowDtype
) -> pd.api.extensions.ExtensionArray:
    """Wrap numpy values + validity as an Arrow-backed pandas array without copying values."""
    n = len(values)
    bitmap = None
    if valid is not None and not valid.all():
        bitmap = pa.py_buffer(np.packbits(valid, bitorder="little"))
    pa_type = dtype.pyarrow_dtype
    if pa.types.is_boolean(pa_type):
        data = pa.py_buffer(np.packbits(values.astype(bool), bitorder="little"))
    else:
        data = pa.py_buffer(values)
    return pd.arrays.ArrowExtensionArray(pa.Array.from_buffers(pa_type, n, [bitmap, data]))


@dataclass
class Compact:
    """One header slot's leading bytes for the frames that have it, as a (k, size) matrix."""

    flat: np.ndarray
    base: np.ndarray
    avail: np.ndarray
    present: np.ndarray  # int16 (1, k) of zeros: "the header starts at 0 of the row"
    rows: np.ndarray | None  # which frames (None: all of them)


def compact_headers(buf: np.ndarray, rec: Records, w: Walked) -> dict[str, Compact]:
    """Copy every gathered header's bytes out of the frames once per header slot; headers no
    frame of the chunk has are left out."""
    sizes: dict[str, int] = {}
    for sources in COLUMN_SOURCES.values():
        for slot, name in sources:
            f = header_of(slot).field(name)
            sizes[slot] = max(sizes.get(slot, 0), f.byte_offset + f.byte_span)
    out: dict[str, Compact] = {}
    for slot, size in sizes.items():
        where = w.slots[SLOT_OF[slot]]
        rows: np.ndarray | None = np.flatnonzero(where >= 0)
        if rows is None or len(rows) == 0:
            continue
        if len(rows) == len(rec):
            rows, base, caps, at = None, rec.offset, rec.cap_len, where
        else:
            base, caps, at = rec.offset[rows], rec.cap_len[rows], where[rows]
        k = len(base)
        mat, avail = np.zeros((k, size), np.uint8), np.full(k, -1, np.int64)
        gather_header(buf, base, caps, at.reshape(1, k), 0, size, mat, avail)
        zeros = np.zeros((1, k), np.int16)
        out[slot] = Compact(
            mat.reshape(-1), np.arange(k, dtype=np.int64) * size, avail, zeros, rows
        )
    return out


def _gather_values(
    heads: dict[str, Compact], n: int, column: str, dtype: pd.ArrowDtype
) -> tuple[np.ndarray, np.ndarray] | None:
    """One integer column: every (slot, field) source written where that header is present;
    None when no frame has any of them."""
    sources = [(slot, name) for slot, name in COLUMN_SOURCES[column] if slot in heads]
    if not sources:
        return None
    pa_type = dtype.pyarrow_dtype
    np_type = np.uint8 if pa.types.is_boolean(pa_type) else pa_type.to_pandas_dtype()
    out, valid = np.zeros(n, dtype=np_type), np.zeros(n, dtype=np.bool_)
    for slot, name in sources:
        f, h = header_of(slot).field(name), heads[slot]
        args = (0, f.byte_offset, f.byte_span, f.shift, np.uint64(f.mask))
        if h.rows is None:
            gather_field(h.flat, h.base, h.avail, h.present, *args, out, valid)
            continue
        part, part_valid = np.zeros(len(h.rows), np_type), np.zeros(len(h.rows), np.bool_)
        gather_field(h.flat, h.base, h.avail, h.present, *args, part, part_valid)
        out[h.rows], valid[h.rows] = (
            np.where(part_valid, part, out[h.rows]),
            valid[h.rows] | part_valid,
        )
    return out, valid


def _null_column(n: int, dtype: object, zeros: np.ndarray) -> object:
    """An all-null column; its buffers are views of one shared zero buffer (read-only)."""
    if dtype == "category":
        return _categorical(np.full(n, -1, np.int8), pd.Index(np.empty(0, np.uint64)))
    pa_type = dtype.pyarrow_dtype  # type: ignore[attr-defined]
    width = 1 if pa.types.is_boolean(pa_type) else pa_type.bit_width // 8
    data = (
        zeros[: (n + 7) // 8] if width == 1 and pa.types.is_boolean(pa_type) else zeros[: n * width]
    )
    bitmap = pa.py_buffer(zeros[: (n + 7) // 8])
    arr = pa.Array.from_buffers(pa_type, n, [bitmap, pa.py_buffer(data)], null_count=n)
    return pd.arrays.ArrowExtensionArray(arr)


def _gather(heads: dict[str, Compact], n: int, column: str, zeros: np.ndarray) -> object:
    """An integer column as Arrow-backed nullable ints, or as an integer categorical."""
    dtype = PACKET_DTYPES[column]
    as_arrow: pd.ArrowDtype = pd.ArrowDtype(pa.uint64()) if dtype == "category" else dtype  # type: ignore[assignment]
    gathered = _gather_values(heads, n, column, as_arrow)
    if gathered is None:
        return _null_column(n, dtype, zeros)
    values, valid = gathered
    if dtype == "category":
        codes, first = factorize_keys(np.zeros(n, np.uint64), values, valid.astype(np.int8))
        return _categorical(codes, pd.Index(values[first]))
    return _arrow(values, valid, dtype)  # type: ignore[arg-type]


def _categorical(
    codes: np.ndarray, categories: tuple[str, ...] | list[str] | pd.Index
) -> pd.Categorical:
    cats = categories if isinstance(categories, pd.Index) else pd.Index(list(categories))
    return pd.Categorical.from_codes(codes, categories=cats, validate=False)


def _addresses(
    buf: np.ndarray, rec: Records, w: Walked, sources: list[tuple[int, int, int, int]]
) -> pd.Categorical:
    """Factorize (slot, byte offset, width, kind) addresses into a categorical of text."""
    n = len(rec)
    hi, lo, kind = np.zeros(n, np.uint64), np.zeros(n, np.uint64), np.zeros(n, np.int8)
    for slot, off, width, k in sources:
        address_keys(buf, rec.offset, rec.cap_len, w.slots, slot, off, width, k, hi, lo, kind)
    codes, first = factorize_keys(hi, lo, kind)
    names = [_address_text(int(kind[i]), int(hi[i]), int(lo[i])) for i in first]
    return _categorical(codes, names)


def _address_text(kind: int, hi: int, lo: int) -> str:
    if kind == 4:
        return str(ipaddress.IPv4Address(lo))
    if kind == 6:
        return ipaddress.IPv6Address((hi << 64) | lo).compressed
    return ":".join(f"{b:02x}" for b in lo.to_bytes(6, "big"))


def build_table(buf: np.ndarray, rec: Records, first_frame: int, w: Walked) -> pd.DataFrame:
    """The packet table of one window's records, columns in schema order."""
    n = len(rec)
    names = _tables()[3]
    u32: pd.ArrowDtype = PACKET_DTYPES["icrc"]  # type: ignore[assignment]
    u16: pd.ArrowDtype = PACKET_DTYPES["payload_len"]  # type: ignore[assignment]
    heads = compact_headers(buf, rec, w)
    zeros = np.zeros(n * 8 + 8, np.uint8)
    op, op_valid = _gather_values(heads, n, "opcode", PACKET_DTYPES["opcode"]) or (  # type: ignore[arg-type]
        np.zeros(n, np.uint8),
        np.zeros(n, np.bool_),
    )
    special: dict[str, object] = {
        "frame": np.arange(first_frame, first_frame + n, dtype=np.uint32),
        "ts_ns": rec.ts_ns,
        "cap_len": rec.cap_len.astype(np.uint32),
        "wire_len": rec.wire_len.astype(np.uint32),
        "src_mac": _addresses(buf, rec, w, [(SMAC, 0, 6, 1)]),
        "dst_mac": _addresses(buf, rec, w, [(DMAC, 0, 6, 1)]),
        "src_ip": _addresses(buf, rec, w, [(IP4, 12, 4, 4), (IP6, 8, 16, 6)]),
        "dst_ip": _addresses(buf, rec, w, [(IP4, 16, 4, 4), (IP6, 24, 16, 6)]),
        "encap": _categorical(w.encap, ENCAPS),
        "opcode": _arrow(op, op_valid, PACKET_DTYPES["opcode"]),  # type: ignore[arg-type]
        "opcode_name": _categorical(np.where(op_valid, names[op], -1), OPCODE_NAMES),
        "payload_len": _arrow(w.payload_len.astype(np.uint16), w.payload_len >= 0, u16),
        "icrc": _arrow(w.icrc.astype(np.uint32), w.icrc >= 0, u32),
        "icrc_status": _categorical(w.icrc_status, ICRC_STATUSES),
        "anomaly": _categorical(w.anomaly.astype(np.int16) - 1, ANOMALIES),
    }
    cols = {
        c.name: special[c.name] if c.name in special else _gather(heads, n, c.name, zeros)
        for c in PACKET_COLUMNS
    }
    return pd.DataFrame(cols, copy=False)
