"""Immediate data and Invalidate ETH: one 32-bit word each."""

from rocetrace.dissectors.header import Header

IMMDT = Header("ImmDt", (("immdt", 32),))
IETH = Header("IETH", (("r_key", 32),))
