"""A flow's key as a person reads and types it: "10.0.0.1>10.0.0.2/0x11".

QPs are shown in hex, as Wireshark and every NIC tool show them; tables keep them as
integers. Keys typed back may give the QP in hex or in decimal.

>>> flow_key("10.0.0.1", "10.0.0.2", 17)
'10.0.0.1>10.0.0.2/0x11'
>>> parse_flow_key("10.0.0.1>10.0.0.2/17") == parse_flow_key("10.0.0.1>10.0.0.2/0x11")
True
"""

from __future__ import annotations

from typing import Any

import numpy as np


def hex_qp(qp: int) -> str:
    """A QP number as people read it: 0x11."""
    return f"{int(qp):#x}"


def flow_key(src_ip: Any, dst_ip: Any, dest_qp: Any) -> str:
    """The key of one flow: "src_ip>dst_ip/0xQP"."""
    return f"{src_ip}>{dst_ip}/{hex_qp(dest_qp)}"


def flow_keys(src_ip: Any, dst_ip: Any, dest_qp: Any) -> np.ndarray:
    """Keys of many flows at once (object array), one per row of the three columns."""
    qps = np.asarray(dest_qp, dtype=np.int64)
    return np.array(
        [
            f"{s}>{d}/{q:#x}"
            for s, d, q in zip(list(src_ip), list(dst_ip), qps.tolist(), strict=True)
        ],
        dtype=object,
    )


def parse_flow_key(key: str) -> tuple[str, str, int]:
    """(src_ip, dst_ip, dest_qp) of a key; the QP in hex (0x...) or decimal. ValueError
    names what is wrong."""
    head, slash, qp = str(key).strip().rpartition("/")
    src, arrow, dst = head.partition(">")
    if not (slash and arrow and src and dst and qp):
        raise ValueError(
            f"not a flow key: {key!r} (expected src_ip>dst_ip/qp, e.g. 10.0.0.1>10.0.0.2/0x11)"
        )
    try:
        number = int(qp, 0) if qp.lower().startswith("0x") else int(qp, 10)
    except ValueError:
        raise ValueError(f"not a QP number in flow key {key!r}: {qp!r}") from None
    return src.strip(), dst.strip(), number
