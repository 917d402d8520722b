"""Records of a byte window -> the packet table's columns, in the schema of rocetrace.schema.

The walk finds the headers; each integer column is then one gather per (slot, Field) source,
wrapped zero-copy as an Arrow array; addresses are factorized into coded categoricals.
No pandas here: rocetrace.capture.packets makes the Arrow table or the pandas frame.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyarrow as pa

from rocetrace.capture.kernels import address_codes, factorize_keys
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
from rocetrace.capture.packets import Coded, PacketColumns, arrow_schema, numeric_array
from rocetrace.capture.records import Records
from rocetrace.capture.walk import OTHER, new_slots, walk_gather
from rocetrace.capture.zeroed import zeroed
from rocetrace.dissectors.icrc import crc32_table
from rocetrace.dissectors.opcodes import OPCODES, UNKNOWN_OPCODE_NAME
from rocetrace.schema import ANOMALIES, CATEGORY, ENCAPS, ICRC_STATUSES, PACKET_COLUMNS

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
    gathered: Gathered  # the integer columns, gathered during the walk


@dataclass
class Gathered:
    """The gather's outputs (GatherPlan's layout): per kind a (rows, n) uint8..uint64 matrix,
    the flag bitmaps, each column's validity bitmap and valid count."""

    outs: tuple[np.ndarray, ...]
    flags: np.ndarray
    vbits: np.ndarray
    counts: np.ndarray


@cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Opcode layout, CRC table and opcode -> name code, built once from the dissectors."""
    lut_off, lut_len = opcode_layout()
    names = np.full(256, len(OPCODE_NAMES) - 1, dtype=np.int16)
    for i, code in enumerate(sorted(OPCODES)):
        names[code] = i
    return lut_off, lut_len, crc32_table(), names


def walk_records(buf: np.ndarray, rec: Records, roce_port: int, vxlan_port: int) -> Walked:
    """The header walk over every record of the window, and the gather of every integer
    column with it (one C pass per frame range)."""
    n, plan = len(rec), _plan()
    lut_off, lut_len, crc, _ = _tables()
    nbytes = (n + 7) // 8
    g = Gathered(
        tuple(zeroed((k, n), dt) for k, dt in zip(plan.widths, _MATRIX_DTYPES, strict=False)),
        np.zeros((plan.widths[4], nbytes), np.uint8),
        np.zeros((len(plan.columns), nbytes), np.uint8),
        np.zeros(len(plan.columns), np.int64),
    )
    w = Walked(
        new_slots(n), np.full(n, OTHER, np.int8), np.zeros(n, np.int8),
        np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int8), g,
    )  # fmt: skip
    walk_gather(
        buf, rec.offset, rec.cap_len, rec.linktype, w.slots, np.array([roce_port, vxlan_port]),
        (lut_off, lut_len, crc), (w.encap, w.anomaly, w.payload_len, w.icrc, w.icrc_status),
        (plan.spec, plan.masks), (g.outs, g.flags, g.vbits, g.counts),
    )  # fmt: skip
    return w


def _nullable(values: np.ndarray, valid: np.ndarray, pa_type: pa.DataType) -> pa.Array:
    return numeric_array(values, pa_type, None if valid.all() else valid)


@dataclass(frozen=True)
class GatherPlan:
    """Every integer column's (slot, Field) sources as one spec table for gather_columns."""

    columns: tuple[str, ...]  # gathered columns, in validity-row order
    types: tuple[pa.DataType, ...]  # per column: its Arrow type (integer categoricals: uint64)
    kinds: tuple[int, ...]  # per column: 0..3 uint8..uint64 matrix, 4 the flag bitmaps
    rows: tuple[int, ...]  # per column: its row in that matrix
    widths: tuple[int, ...]  # rows per kind
    spec: np.ndarray  # int64 (sources, 7): slot, byte offset, span, shift, kind, row, column
    masks: np.ndarray  # uint64 (sources,)


_KIND_OF = {np.dtype(np.uint8): 0, np.dtype(np.uint16): 1, np.dtype(np.uint32): 2}
_MATRIX_DTYPES = (np.uint8, np.uint16, np.uint32, np.uint64)


@cache
def _plan() -> GatherPlan:
    columns = tuple(c.name for c in PACKET_COLUMNS if c.name in COLUMN_SOURCES)
    types = tuple(_gathered_type(arrow_schema().field(c).type) for c in columns)
    kinds, rows, widths = [], [], [0] * 5
    spec, masks = [], []
    for col, column in enumerate(columns):
        t = types[col]
        kind = 4 if pa.types.is_boolean(t) else _KIND_OF.get(np.dtype(t.to_pandas_dtype()), 3)
        kinds.append(kind)
        rows.append(widths[kind])
        widths[kind] += 1
        for slot, name in COLUMN_SOURCES[column]:
            f = header_of(slot).field(name)
            spec.append((SLOT_OF[slot], f.byte_offset, f.byte_span, f.shift, kind, rows[-1], col))
            masks.append(f.mask)
    return GatherPlan(
        columns, types, tuple(kinds), tuple(rows), tuple(widths),
        np.array(spec, np.int64).reshape(-1, 7), np.array(masks, np.uint64),
    )  # fmt: skip


def _gathered_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def gather_all(w: Walked, n: int) -> tuple[dict[str, object], np.ndarray]:
    """Every integer column (Arrow array, or coded integer categorical) from the walk's
    gather, and the opcode_name codes (-1 where there is no opcode)."""
    plan, g = _plan(), w.gathered
    outs, flags, vbits, counts = g.outs, g.flags, g.vbits, g.counts
    zeros = pa.py_buffer(zeroed((n * 8 + 8,), np.uint8))  # all-null columns: never written
    cols: dict[str, object] = {}
    for col, column in enumerate(plan.columns):
        t, kind, row, k = plan.types[col], plan.kinds[col], plan.rows[col], int(counts[col])
        values = flags[row] if kind == 4 else outs[kind][row]
        if column in _INTEGER_CATEGORICALS:
            cols[column] = _integer_categorical(values, vbits[col], k)
        elif k == 0:
            cols[column] = pa.Array.from_buffers(t, n, [zeros, zeros], null_count=n)
        else:
            bitmap = None if k == n else pa.py_buffer(vbits[col])
            cols[column] = pa.Array.from_buffers(
                t, n, [bitmap, pa.py_buffer(values)], null_count=n - k
            )
    col = plan.columns.index("opcode")
    opcode_name = _tables()[3][outs[0][plan.rows[col]]]
    if counts[col] < n:
        valid = np.unpackbits(vbits[col], count=n, bitorder="little").view(bool)
        opcode_name[~valid] = -1
    return cols, opcode_name


_INTEGER_CATEGORICALS = frozenset(
    c.name for c in PACKET_COLUMNS if c.type == CATEGORY and c.name in COLUMN_SOURCES
)


def _integer_categorical(values: np.ndarray, vbits: np.ndarray, valid_count: int) -> Coded:
    """Rare integers (atomics) factorized: codes into their distinct values."""
    n = len(values)
    if valid_count == 0:
        return Coded(np.full(n, -1, np.int8), np.empty(0, np.uint64))
    valid = np.unpackbits(vbits, count=n, bitorder="little").view(np.int8)
    codes, first = factorize_keys(np.zeros(n, np.uint64), values, valid)
    return Coded(codes, values[first])


# Address columns: (column, slot, byte offset, width, key kind); a later source overwrites.
ADDRESS_COLUMNS = ("src_mac", "dst_mac", "src_ip", "dst_ip")
_ADDRESS_SPEC = np.array(
    [(0, SMAC, 0, 6, 1), (1, DMAC, 0, 6, 1), (2, IP4, 12, 4, 4), (2, IP6, 8, 16, 6),
     (3, IP4, 16, 4, 4), (3, IP6, 24, 16, 6)],
    np.int64,
)  # fmt: skip


def _addresses(buf: np.ndarray, rec: Records, w: Walked) -> dict[str, Coded]:
    """The address columns as coded text (one kernel pass factorizes them all)."""
    keys = address_codes(buf, rec.offset, rec.cap_len, w.slots, _ADDRESS_SPEC, len(ADDRESS_COLUMNS))
    out = {}
    for column, (codes, kinds, his, los) in zip(ADDRESS_COLUMNS, keys, strict=True):
        names = [
            _address_text(int(k), int(hi), int(lo))
            for k, hi, lo in zip(kinds, his, los, strict=True)
        ]
        out[column] = Coded(codes, names)
    return out


def _address_text(kind: int, hi: int, lo: int) -> str:
    if kind == 4:
        return str(ipaddress.IPv4Address(lo))
    if kind == 6:
        return ipaddress.IPv6Address((hi << 64) | lo).compressed
    return ":".join(f"{b:02x}" for b in lo.to_bytes(6, "big"))


def build_columns(buf: np.ndarray, rec: Records, first_frame: int, w: Walked) -> PacketColumns:
    """The packet table's columns for one window's records, in schema order."""
    n = len(rec)
    special, opcode_name = gather_all(w, n)
    special.update(_addresses(buf, rec, w))
    special.update({
        "frame": np.arange(first_frame, first_frame + n, dtype=np.uint32),
        "ts_ns": rec.ts_ns,
        "cap_len": rec.cap_len.astype(np.uint32),
        "wire_len": rec.wire_len.astype(np.uint32),
        "encap": Coded(w.encap, ENCAPS),
        "opcode_name": Coded(opcode_name, OPCODE_NAMES),
        "payload_len": _nullable(w.payload_len.astype(np.uint16), w.payload_len >= 0, pa.uint16()),
        "icrc": _nullable(w.icrc.astype(np.uint32), w.icrc >= 0, pa.uint32()),
        "icrc_status": Coded(w.icrc_status, ICRC_STATUSES),
        "anomaly": Coded(w.anomaly.astype(np.int16) - 1, ANOMALIES),
    })  # fmt: skip
    columns = {c.name: special[c.name] for c in PACKET_COLUMNS}
    return PacketColumns(columns, n)


def empty_columns() -> PacketColumns:
    """A packet table with no rows."""
    e = np.empty(0, np.int64)
    rec = Records(e, e, e, e, np.empty(0, np.int32))
    buf = np.empty(0, np.uint8)
    return build_columns(buf, rec, 1, walk_records(buf, rec, 0, 0))
