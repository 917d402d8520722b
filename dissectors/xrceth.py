"""XRC Extended Transport Header: the XRC shared receive queue number."""

from rocetrace.dissectors.header import Header

XRCETH = Header("XRCETH", (("resv8", 8), ("xrc_srqn", 24)))
