"""Write pcap / pcapng files from arrays of frames, without a Python loop per packet.

The generator and the benchmark build millions of frames as one byte buffer plus offsets;
this module lays the record headers and frame bytes out in one output buffer with numpy
and a small C copy kernel, then writes it (gzip-compressed when the name ends in .gz).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from rocetrace.capture.kernels import copy_records

FrameArrays = tuple[np.ndarray, np.ndarray, np.ndarray]
Frames = Sequence[bytes] | FrameArrays

PCAP_MAGIC_US = 0xA1B2C3D4
PCAP_MAGIC_NS = 0xA1B23C4D
PCAPNG_BYTE_ORDER_MAGIC = 0x1A2B3C4D
_SHB, _IDB, _EPB = 0x0A0D0D0A, 0x00000001, 0x00000006
_OPT_TSRESOL = 9
_NS = 1_000_000_000


def frames_to_arrays(frames: Frames) -> FrameArrays:
    """Normalize either frame form to (buffer uint8, offsets int64, lengths int64)."""
    if isinstance(frames, tuple) and len(frames) == 3 and isinstance(frames[0], np.ndarray):
        buf, offsets, lengths = frames
        return (
            np.ascontiguousarray(buf, dtype=np.uint8),
            np.asarray(offsets, dtype=np.int64),
            np.asarray(lengths, dtype=np.int64),
        )
    blobs = [bytes(f) for f in frames]
    lengths = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    offsets = np.zeros(len(blobs), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    return np.frombuffer(b"".join(blobs), dtype=np.uint8), offsets, lengths


def _u32(values: np.ndarray, order: str) -> np.ndarray:
    """uint32 words in the file's byte order, viewed as bytes (n, 4 * k)."""
    words = np.ascontiguousarray(values, dtype=np.dtype(order + "u4"))
    width = 4 * (words.shape[1] if words.ndim == 2 else 1)
    return words.view(np.uint8).reshape(len(words), width)


def _pcap_file(
    ts_ns: np.ndarray, arrays: FrameArrays, wire: np.ndarray, *, nanosecond: bool,
    linktype: int, snaplen: int, order: str,
) -> np.ndarray:  # fmt: skip
    """Classic pcap: 24-byte global header, then 16-byte record header + frame bytes."""
    caps = arrays[2]
    magic = PCAP_MAGIC_NS if nanosecond else PCAP_MAGIC_US
    head = np.array([magic, 0x00040002, 0, 0, snaplen, linktype], dtype=np.dtype(order + "u4"))
    # version 2.4 is two uint16 fields: write them in the file's byte order.
    head_b = bytearray(head.tobytes())
    head_b[4:8] = np.array([2, 4], dtype=np.dtype(order + "u2")).tobytes()
    sec, frac = np.divmod(ts_ns, _NS)
    if not nanosecond:
        frac = frac // 1000
    rec = _u32(np.stack([sec, frac, caps, wire], axis=1), order)
    rec_len = 16 + caps
    return _assemble(bytes(head_b), rec, rec_len, arrays, trailer=None)


def _pcapng_file(
    ts_ns: np.ndarray, arrays: FrameArrays, wire: np.ndarray, *, nanosecond: bool,
    linktype: int, snaplen: int, order: str,
) -> np.ndarray:  # fmt: skip
    """pcapng: SHB, one IDB (if_tsresol 9 for ns), one EPB per frame."""
    u32 = np.dtype(order + "u4")
    shb = np.array([_SHB, 28, PCAPNG_BYTE_ORDER_MAGIC, 0, 0xFFFFFFFF, 0xFFFFFFFF, 28], u32)
    shb_b = bytearray(shb.tobytes())
    shb_b[12:16] = np.array([1, 0], dtype=np.dtype(order + "u2")).tobytes()
    idb = bytearray(np.array([_IDB, 0, 0, snaplen], u32).tobytes())
    idb[8:12] = np.array([linktype, 0], dtype=np.dtype(order + "u2")).tobytes()
    if nanosecond:
        opt = np.array([_OPT_TSRESOL, 1], dtype=np.dtype(order + "u2")).tobytes()
        idb += opt + bytes([9, 0, 0, 0]) + bytes(4)  # if_tsresol=9, opt_endofopt
    idb += bytes(4)
    idb[4:8] = np.array([len(idb)], u32).tobytes()
    idb[-4:] = idb[4:8]
    _, _, caps = arrays
    units = ts_ns if nanosecond else ts_ns // 1000
    padded = (caps + 3) & ~3
    total = 32 + padded
    hdr = np.stack(
        [np.full(len(caps), _EPB), total, np.zeros(len(caps)), units >> 32,
         units & 0xFFFFFFFF, caps, wire],
        axis=1,
    )  # fmt: skip
    rec = _u32(hdr, order)
    trailer = _u32(total, order)
    return _assemble(bytes(shb_b) + bytes(idb), rec, total, arrays, trailer=trailer)


def _assemble(
    head: bytes, rec: np.ndarray, rec_len: np.ndarray, arrays: FrameArrays, *,
    trailer: np.ndarray | None,
) -> np.ndarray:  # fmt: skip
    """One output buffer: file head, then per record its header, frame bytes, trailer."""
    buf, offsets, caps = arrays
    starts = np.empty(len(rec_len), dtype=np.int64)
    if len(rec_len):
        starts[0] = len(head)
        np.cumsum(rec_len[:-1], out=starts[1:])
        starts[1:] += len(head)
    size = len(head) + int(rec_len.sum())
    out = np.zeros(size, dtype=np.uint8)
    out[: len(head)] = np.frombuffer(head, dtype=np.uint8)
    trailer_arr = trailer if trailer is not None else np.zeros((len(caps), 0), np.uint8)
    copy_records(out, starts, rec, buf, offsets, caps, trailer_arr, rec_len)
    return out


def write_capture(
    path: str | Path,
    ts_ns: np.ndarray,
    frames: Frames,
    *,
    fmt: Literal["pcap", "pcapng"] = "pcap",
    nanosecond: bool = True,
    linktype: int = 1,
    snaplen: int = 65535,
    wire_lens: np.ndarray | None = None,
    byteorder: Literal["<", ">"] = "<",
) -> Path:
    """Write frames as a capture; frames longer than snaplen are cut (wire_len kept)."""
    buf, offsets, lengths = frames_to_arrays(frames)
    ts = np.asarray(ts_ns, dtype=np.int64)
    if len(ts) != len(lengths):
        raise ValueError(f"{len(ts)} timestamps for {len(lengths)} frames")
    wire = lengths if wire_lens is None else np.asarray(wire_lens, dtype=np.int64)
    caps = np.minimum(lengths, snaplen)
    build = _pcap_file if fmt == "pcap" else _pcapng_file
    out = build(
        ts, (buf, offsets, caps), np.maximum(wire, caps),
        nanosecond=nanosecond, linktype=linktype, snaplen=snaplen, order=byteorder,
    )  # fmt: skip
    path = Path(path)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wb", compresslevel=6) as fh:
            fh.write(out.tobytes())
    else:
        out.tofile(path)
    return path
