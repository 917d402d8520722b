"""Base Transport Header (IBTA 9.2): present on every RoCE packet."""

from rocetrace.dissectors.header import Header

BTH = Header(
    "BTH",
    (
        ("opcode", 8),
        ("se", 1),
        ("mig_req", 1),
        ("pad_count", 2),
        ("tver", 4),
        ("pkey", 16),
        ("fecn", 1),
        ("becn", 1),
        ("resv6", 6),
        ("dest_qp", 24),
        ("ack_req", 1),
        ("resv7", 7),
        ("psn", 24),
    ),
)
