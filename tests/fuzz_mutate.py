"""Deterministic mutators for the fuzz gate (tests/fuzz_gate.py): hostile capture bytes and
hostile JSON. Every mutation draws from the `random.Random` it is given, so a case is
reproduced from its number alone.

Capture classes, as in the issue-18 audit: bit flips, byte stores, lying record lengths
(pcap caplen / wire length), lying block lengths (pcapng), pcapng block surgery, truncation,
splices of two captures, garbage inserted or deleted, gzip (sound and corrupted), and
whole-file garbage.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
import random
import struct
import zlib
from collections.abc import Callable
from typing import Any

WORDS = (0, 1, 3, 4, 11, 12, 13, 16, 0xFFFF, 0x10000, 262144, 262145, 1 << 28, (1 << 28) + 4,
         0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)  # fmt: skip
HOSTILE_VALUES: tuple[Any, ...] = (
    None, "", "x", "10.0.0.1", -1, 0, 1, 2**24, 2**63, -(2**63) - 1, 2**64, 10**30, 1.5, -0.0,
    1e300, math.nan, math.inf, -math.inf, True, False, [], [1, "a"], {}, {"a": 1}, "\x00",
    "critical", "warning", "info", [[[[]]]],
)  # fmt: skip


def record_starts(blob: bytes) -> list[int]:
    """Where the records (pcap) or blocks (pcapng) of a sound capture start."""
    ng = blob[:4] == b"\x0a\x0d\x0d\x0a"
    order = ("<" if blob[8:12] == b"\x4d\x3c\x2b\x1a" else ">") if ng else "<"
    if not ng and blob[:4] in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        order = ">"
    starts, pos = [], 0 if ng else 24
    while pos + 16 <= len(blob):
        starts.append(pos)
        if ng:
            pos += max(struct.unpack_from(order + "I", blob, pos + 4)[0], 12)
        else:
            pos += 16 + struct.unpack_from(order + "I", blob, pos + 8)[0]
    return starts


def _word(rng: random.Random) -> bytes:
    value = rng.choice(WORDS) if rng.random() < 0.6 else rng.getrandbits(32)
    return value.to_bytes(4, rng.choice(["little", "big"]))


def _put(blob: bytes, at: int, data: bytes) -> bytes:
    at = max(0, min(at, len(blob) - len(data)))
    return blob[:at] + data + blob[at + len(data) :]


def bit_flips(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    out = bytearray(blob)
    for _ in range(rng.randint(1, 8)):
        bit = rng.randrange(len(out) * 8)
        out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def byte_stores(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    out = bytearray(blob)
    for _ in range(rng.randint(1, 6)):
        out[rng.randrange(len(out))] = rng.choice([0, 0xFF, 0x7F, 0x80, rng.getrandbits(8)])
    return bytes(out)


def record_lengths(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    """A random or extreme word over a record's caplen / wire length / block length."""
    starts = record_starts(blob) or [0]
    at = rng.choice(starts) + rng.choice([4, 8, 12, 20, 24])
    return _put(blob, at, _word(rng))


def block_surgery(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    """Drop, duplicate or swap whole records / blocks, or garble one's type word."""
    starts = record_starts(blob)
    if len(starts) < 2:
        return bit_flips(blob, rng, other)
    ends = [*starts[1:], len(blob)]
    k = rng.randrange(len(starts))
    piece = blob[starts[k] : ends[k]]
    choice = rng.randrange(4)
    if choice == 0:
        return blob[: starts[k]] + blob[ends[k] :]
    if choice == 1:
        return blob[: ends[k]] + piece + blob[ends[k] :]
    if choice == 2:
        return _put(blob, starts[k], _word(rng))
    j = rng.randrange(len(starts))
    return blob[: starts[j]] + piece + blob[starts[j] :]


def truncate(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    return blob[: rng.randrange(len(blob))]


def splice(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    return blob[: rng.randrange(len(blob))] + other[rng.randrange(len(other)) :]


def garbage(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    """Random bytes inserted, or a stretch deleted or zeroed."""
    at, n = rng.randrange(len(blob)), rng.randint(1, 300)
    choice = rng.randrange(3)
    if choice == 0:
        return blob[:at] + rng.randbytes(n) + blob[at:]
    if choice == 1:
        return blob[:at] + blob[at + n :]
    return blob[:at] + bytes(n) + blob[at + n :]


def gzipped(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    """The capture (maybe mutated first) gzip-compressed, maybe in two members."""
    inner = MUTATIONS[rng.choice(BYTE_CLASSES)](blob, rng, other) if rng.random() < 0.5 else blob
    if rng.random() < 0.3:
        cut = rng.randrange(len(inner))
        return gzip.compress(inner[:cut], 1) + gzip.compress(inner[cut:], 1)
    return gzip.compress(inner, rng.choice([1, 6, 9]))


def gzip_corrupt(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    """A gzip stream damaged: bits flipped, cut, a bad block type, a garbled trailer."""
    packed = gzip.compress(blob, 6)
    choice = rng.randrange(4)
    if choice == 0:
        return bit_flips(packed, rng, other)
    if choice == 1:
        return packed[: rng.randrange(2, len(packed))]
    if choice == 2:
        packer = zlib.compressobj(6, zlib.DEFLATED, 31)
        half = packer.compress(blob[: len(blob) // 2]) + packer.flush(zlib.Z_FULL_FLUSH)
        return half + b"\x07" + rng.randbytes(16)
    return packed[:-8] + rng.randbytes(8)


def whole_garbage(blob: bytes, rng: random.Random, other: bytes) -> bytes:
    """Random bytes behind a real magic (pcap, pcapng, gzip) or none."""
    magic = rng.choice([b"", blob[:4], blob[:24], b"\x1f\x8b", b"\x0a\x0d\x0d\x0a"])
    return magic + rng.randbytes(rng.randint(0, 600))


MUTATIONS: dict[str, Callable[[bytes, random.Random, bytes], bytes]] = {
    "bit_flips": bit_flips,
    "byte_stores": byte_stores,
    "record_lengths": record_lengths,
    "block_surgery": block_surgery,
    "truncate": truncate,
    "splice": splice,
    "garbage": garbage,
    "gzip": gzipped,
    "gzip_corrupt": gzip_corrupt,
    "whole_garbage": whole_garbage,
}
BYTE_CLASSES = ("bit_flips", "byte_stores", "record_lengths", "block_surgery", "garbage")


# ---- JSON ----


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into a JSON tree (keys and list indices), the root excluded."""
    found = []
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else []
    )
    for key, child in items:
        found.append((*prefix, key))
        found += _paths(child, (*prefix, key))
    return found


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        tree = tree[key]
    return tree


def mutate_json(tree: Any, rng: random.Random) -> Any:
    """A deep copy of `tree` with 1-3 structural mutations: a value replaced by a hostile one,
    a key deleted, a list item duplicated (duplicated flows) or a container emptied."""
    tree = json.loads(json.dumps(tree))
    for _ in range(rng.randint(1, 3)):
        paths = _paths(tree)
        if not paths:
            return copy.deepcopy(rng.choice(HOSTILE_VALUES))
        path = rng.choice(paths)
        parent, key = _parent(tree, path), path[-1]
        choice = rng.randrange(10)
        if choice < 6:
            parent[key] = copy.deepcopy(rng.choice(HOSTILE_VALUES))
        elif choice < 8 and isinstance(parent, dict):
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, json.loads(json.dumps(parent[key])))
        else:
            parent[key] = type(parent[key])() if isinstance(parent[key], list | dict) else None
    return tree


def json_text(tree: Any, rng: random.Random) -> bytes:
    """JSON text of a tree, sometimes damaged as text (cut, bytes flipped, nested deep)."""
    text = json.dumps(tree, allow_nan=True).encode()
    choice = rng.randrange(12)
    if choice == 0:
        return text[: rng.randrange(len(text))]
    if choice == 1:
        return byte_stores(text, rng, b"")
    if choice == 2:
        return b'{"schema": "rocetrace.summary/1", "flows": ' + b"[" * 20000 + b"]" * 20000 + b"}"
    return text
