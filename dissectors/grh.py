"""Global Route Header (RoCEv1, EtherType 0x8915): an IPv6-shaped 40-byte header."""

from rocetrace.dissectors.header import Header

ROCE_V1_ETHERTYPE = 0x8915
GRH = Header(
    "GRH",
    (
        ("ip_ver", 4),
        ("tclass", 8),
        ("flow_label", 20),
        ("pay_len", 16),
        ("next_hdr", 8),
        ("hop_lmt", 8),
        ("sgid", 128),
        ("dgid", 128),
    ),
)
GRH_NEXT_HEADER_BTH = 0x1B
