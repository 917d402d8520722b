"""Datagram ETH (UD, RD requests) and Reliable Datagram ETH."""

from rocetrace.dissectors.header import Header

DETH = Header("DETH", (("q_key", 32), ("resv8", 8), ("src_qp", 24)))
RDETH = Header("RDETH", (("resv8", 8), ("ee_context", 24)))
