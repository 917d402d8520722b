"""Atomic request and acknowledge extended headers (compare-swap, fetch-add)."""

from rocetrace.dissectors.header import Header

ATOMIC_ETH = Header("AtomicETH", (("va", 64), ("r_key", 32), ("swap_add", 64), ("compare", 64)))
ATOMIC_ACK_ETH = Header("AtomicAckETH", (("orig_rem_dt", 64),))
