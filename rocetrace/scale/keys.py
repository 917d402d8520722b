"""The partition key of a frame: its unordered pair of IP addresses, so both directions of
a connection, its NAKs, CNPs and CM exchange land in one partition. Frames without an IP
pair (PFC, other link-level frames) go to no partition (-1): they are read capture-wide.

The key hashes the address text (blake2b), not a table's category codes: every chunk,
file and worker puts one pair in the same partition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

LINK = -1  # the "partition" of frames without an IP pair


def address_hashes(names: Sequence[str]) -> np.ndarray:
    """A stable 62-bit hash per address text."""
    digests = b"".join(hashlib.blake2b(str(n).encode(), digest_size=8).digest() for n in names)
    return (np.frombuffer(digests, "<u8") >> np.uint64(2)).astype(np.int64)


def pair_hash(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Per row, a hash of the unordered pair of address hashes (-1 where one is missing)."""
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    mixed = (lo * np.int64(0x9E3779B1) ^ hi) & np.int64((1 << 62) - 1)
    return np.where((src >= 0) & (dst >= 0), mixed, -1)


def coded_hashes(codes: np.ndarray, categories: Sequence[str]) -> np.ndarray:
    """Per row of a categorical column (codes into categories, -1 null), its address hash."""
    table = np.append(address_hashes(categories), np.int64(-1))
    return table[codes]


Coded = tuple[np.ndarray, Sequence[str]]  # a categorical column: codes, categories


# Address pairs of a chunk hashed once each, then looked up per row, while their table
# stays small (8 MB); beyond, the rows are hashed one by one.
PAIR_TABLE_MAX = 1 << 20


def pairs_of(src: Coded, dst: Coded) -> np.ndarray:
    """Per row, the hash of its unordered IP pair (-1 for frames without one). A chunk
    holds few addresses: each pair of them is hashed once and looked up by the rows' codes
    (a gather in place of six passes over the rows)."""
    (src_codes, src_names), (dst_codes, dst_names) = src, dst
    if (len(src_names) + 1) * (len(dst_names) + 1) > PAIR_TABLE_MAX:
        return pair_hash(coded_hashes(*src), coded_hashes(*dst))
    from_src = np.append(address_hashes(src_names), np.int64(-1))  # code -1: the last
    to_dst = np.append(address_hashes(dst_names), np.int64(-1))
    table = pair_hash(from_src[:, None], to_dst[None, :])
    return table[src_codes, dst_codes]


def partition_of(src: Coded, dst: Coded, n: int) -> np.ndarray:
    """Per row, its partition in [0, n), LINK for frames without an IP pair."""
    return partition_of_pair(pairs_of(src, dst), n)


def partition_of_pair(pair: np.ndarray, n: int) -> np.ndarray:
    """The partition of each pair hash (LINK for -1)."""
    return np.where(pair >= 0, pair % max(n, 1), LINK)
