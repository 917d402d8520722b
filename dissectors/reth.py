"""RDMA Extended Transport Header: WRITE FIRST/ONLY and READ REQUEST."""

from rocetrace.dissectors.header import Header

RETH = Header("RETH", (("va", 64), ("r_key", 32), ("dma_length", 32)))

# FLUSH Extended Transport Header (IBTA 1.5, FLUSH requests): selectivity level and
# placement type in the low bits of one 32-bit word.
FETH = Header("FETH", (("resv26", 26), ("selectivity_level", 2), ("placement_type", 4)))
