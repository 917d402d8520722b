"""The fast frame builder: one reference template per frame shape, fields patched in arrays.

Rows sharing (opcode, payload length, payload) share everything but header fields, so the
headers of a whole group are one 2-D uint8 array patched column-wise from the header tables,
and the payload is stored once. Output is one flat buffer with per-frame offsets and lengths.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.grh import GRH
from rocetrace.dissectors.header import Field, Header
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.generate import numba_kernels
from rocetrace.generate.encap import (
    DOT1Q,
    IPV4,
    IPV6,
    MIN_FRAME,
    UDP,
    Encap,
    icrc_mask,
    roce_layout,
)
from rocetrace.generate.hosts import Hosts
from rocetrace.generate.reference_frames import (
    BTH_COLUMNS,
    EXT_COLUMNS,
    default_payload,
    pfc_frame,
    roce_frame,
)
from rocetrace.generate.wire_table import MALFORMED, PFC, ROCE, PacketTable


@dataclass
class Frames:
    """Frame bytes of a table, in row order: frame i is flat[offsets[i]:offsets[i]+lengths[i]];
    with a snap length only the captured bytes are built and `wire` keeps the full lengths."""

    flat: np.ndarray
    offsets: np.ndarray
    lengths: np.ndarray
    wire: np.ndarray

    def frame(self, i: int) -> bytes:
        return bytes(self.flat[self.offsets[i] : self.offsets[i] + self.lengths[i]])


def put_field(arr: np.ndarray, base: int, f: Field, values: np.ndarray) -> None:
    """Write a big-endian bit field (at most 64 bits wide) into every row."""
    span, start = f.byte_span, base + f.byte_offset
    v = values.astype(np.uint64) & np.uint64(f.mask)
    if f.bit_offset % 8 == 0 and f.bits % 8 == 0:
        for j in range(span):
            arr[:, start + j] = (v >> np.uint64(8 * (span - 1 - j))) & np.uint64(0xFF)
        return
    cur = np.zeros(len(arr), dtype=np.uint64)
    for j in range(span):
        cur = (cur << np.uint64(8)) | arr[:, start + j]
    keep = np.uint64(~(f.mask << f.shift) & ((1 << (8 * span)) - 1))
    cur = (cur & keep) | (v << np.uint64(f.shift))
    for j in range(span):
        arr[:, start + j] = (cur >> np.uint64(8 * (span - 1 - j))) & np.uint64(0xFF)


def put(arr: np.ndarray, base: int, header: Header, values: Mapping[str, np.ndarray]) -> None:
    for name, v in values.items():
        put_field(arr, base, header.field(name), v)


def ipv4_checksums(arr: np.ndarray, off: int) -> None:
    """Recompute the IPv4 header checksum of every row (header at `off`, 20 bytes)."""
    h = arr[:, off : off + 20].astype(np.uint32)
    h[:, 10:12] = 0
    total = (h[:, 0::2] << 8 | h[:, 1::2]).sum(axis=1)
    total = (total & 0xFFFF) + (total >> 16)
    total = (total & 0xFFFF) + (total >> 16)
    put_field(arr, off, IPV4.field("checksum"), ~total & 0xFFFF)


def _put_ip(arr: np.ndarray, off: int, rows: PacketTable, addr: np.ndarray, v1: bool) -> None:
    src, dst = addr[rows["src"]], addr[rows["dst"]]
    k = addr.shape[1]
    if v1 or k == 16:
        tos = {"tclass": rows["dscp"].astype(np.uint64) << 2 | rows["ecn"]}
        put(arr, off, GRH, tos) if v1 else put(
            arr, off, IPV6, {"dscp": rows["dscp"], "ecn": rows["ecn"]}
        )
        arr[:, off + 8 : off + 24], arr[:, off + 24 : off + 40] = src, dst
        return
    put(arr, off, IPV4, {"dscp": rows["dscp"], "ecn": rows["ecn"], "identification": rows["ip_id"]})
    arr[:, off + 12 : off + 16], arr[:, off + 16 : off + 20] = src, dst
    ipv4_checksums(arr, off)


def _put_l2(arr: np.ndarray, off: int, rows: PacketTable, mac: np.ndarray, tagged: bool) -> None:
    arr[:, off : off + 6], arr[:, off + 6 : off + 12] = mac[rows["dst"]], mac[rows["src"]]
    if tagged:
        put_field(arr, off + 14, DOT1Q.field("pcp"), rows["pcp"])


def _patch_roce(arr: np.ndarray, rows: PacketTable, encap: Encap, hosts: Hosts) -> None:
    layout = roce_layout(encap, int(rows["opcode"][0]), int(rows["payload_len"][0]))
    overlay = encap.vxlan_vni is not None
    if overlay:
        _put_l2(arr, 0, rows, hosts.outer_mac, encap.vlan_id is not None)
        _put_ip(arr, encap.l2_len, rows, hosts.outer_ip, False)
        sport = 49152 | ((rows["udp_sport"].astype(np.int64) * 2654435761) >> 16) & 0x3FFF
        put_field(arr, encap.l2_len + 20, UDP.field("sport"), sport)
    _put_l2(arr, encap.outer_len, rows, hosts.mac, encap.vlan_id is not None and not overlay)
    _put_ip(arr, layout.ip_off, rows, hosts.ip, encap.roce_v1)
    if layout.udp_off >= 0:
        put_field(arr, layout.udp_off, UDP.field("sport"), rows["udp_sport"])
    put(arr, layout.bth_off, BTH, {f: rows[c] for f, c in BTH_COLUMNS.items()})
    for h, off in zip(OPCODES[int(rows["opcode"][0])].headers, layout.ext_offs, strict=True):
        put(arr, off, h, {f: rows[c] for f, c in EXT_COLUMNS.get(h.name, {}).items()})


def _first_row(rows: PacketTable) -> dict[str, int]:
    return {k: int(v[0]) for k, v in rows.cols.items()}


def _roce_group(
    rows: PacketTable, encap: Encap, hosts: Hosts, payload: bytes
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(heads, tail, icrcs, icrc_off, frame_len) of rows sharing one frame shape."""
    layout = roce_layout(encap, int(rows["opcode"][0]), len(payload))
    template = np.frombuffer(roce_frame(_first_row(rows), encap, hosts, payload), dtype=np.uint8)
    heads = np.repeat(template[None, : layout.payload_off], len(rows), axis=0)
    _patch_roce(heads, rows, encap, hosts)
    tail = template[layout.payload_off : layout.icrc_off]
    icrcs = numba_kernels.icrc_rows(heads, layout.ip_off, icrc_mask(encap, layout), tail)
    return heads, template[layout.payload_off :].copy(), icrcs, layout.icrc_off, len(template)


def _group_keys(table: PacketTable) -> np.ndarray:
    key = table["opcode"].astype(np.int64) << 40 | table["payload_len"].astype(np.int64) << 16
    key |= table["payload_id"].astype(np.int64)
    key[table["kind"] != ROCE] = -1
    return key


def build_frames(
    table: PacketTable,
    encap: Encap,
    hosts: Hosts,
    payloads: Sequence[bytes] = (),
    snaplen: int = 1 << 30,
) -> Frames:
    """Bytes of every row: RoCE rows through templates, PFC and malformed rows one by one.
    Bytes past the snap length are never built (header-only captures stay cheap)."""
    n = len(table)
    lengths = np.zeros(n, dtype=np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, Any]] = []
    keys = _group_keys(table)
    order = np.argsort(keys, kind="stable")
    bounds = np.flatnonzero(np.diff(keys[order])) + 1
    for idx in np.split(order, bounds) if n else []:
        rows = table.take(idx)
        if keys[idx[0]] < 0:
            for i, frame in zip(idx, _single_frames(rows, encap, hosts, payloads), strict=True):
                lengths[i] = len(frame)
                parts.append((np.array([i]), np.frombuffer(frame, np.uint8)[None, :], None))
            continue
        pid, plen = int(rows["payload_id"][0]), int(rows["payload_len"][0])
        payload = payloads[pid - 1] if pid else default_payload(plen)
        heads, tail, icrcs, icrc_off, flen = _roce_group(rows, encap, hosts, payload)
        lengths[idx] = flen
        cap = min(flen, snaplen)
        heads, tail = heads[:, :cap], tail[: max(cap - heads.shape[1], 0)]
        parts.append((idx, heads, (tail, icrcs, icrc_off if icrc_off + 4 <= cap else -1)))
    wire = lengths.copy()
    lengths = np.minimum(lengths, snaplen)
    offsets = np.zeros(n, dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:]) if n else None
    flat = np.zeros(int(lengths.sum()), dtype=np.uint8)
    empty, none = np.zeros(0, np.uint8), np.zeros(0, np.uint32)
    for idx, heads, rest in parts:
        tail, icrcs, icrc_off = rest if rest else (empty, none, -1)
        numba_kernels.scatter_frames(flat, offsets[idx], heads[:, :snaplen], tail, icrcs, icrc_off)
    return Frames(flat, offsets, lengths, wire)


def _single_frames(
    rows: PacketTable, encap: Encap, hosts: Hosts, payloads: Sequence[bytes]
) -> Iterator[bytes]:
    from rocetrace.generate.malformed import malformed_frame

    for i in range(len(rows)):
        row = {k: int(v[i]) for k, v in rows.cols.items()}
        if row["kind"] == PFC:
            yield pfc_frame(row, hosts)
        elif row["kind"] == MALFORMED:
            yield malformed_frame(row, encap, hosts)
        else:
            pid = row["payload_id"]
            yield roce_frame(
                row, encap, hosts, payloads[pid - 1] if pid else default_payload(row["payload_len"])
            )


def frame_lengths(table: PacketTable, encap: Encap) -> np.ndarray:
    """Wire length of every row's frame, without building it: RoCE frames from their layout,
    PFC frames the Ethernet minimum."""
    out = np.full(len(table), MIN_FRAME, dtype=np.uint32)
    roce = np.flatnonzero(table["kind"] == ROCE)
    key = table["opcode"][roce].astype(np.int64) << 32 | table["payload_len"][roce]
    kinds, inverse = np.unique(key, return_inverse=True)
    lengths = [roce_layout(encap, int(k) >> 32, int(k) & 0xFFFFFFFF).frame_len for k in kinds]
    out[roce] = np.asarray(lengths, dtype=np.uint32)[inverse] if len(roce) else 0
    return out
