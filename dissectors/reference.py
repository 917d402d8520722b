"""Reference (slow, per packet) decode of a RoCE transport header stack into table columns.

Walks the opcode table and `Header.decode`; obviously correct rather than fast, it is what
the vectorized decoder, the Scapy layers and tshark are held against in the tests.
"""

from __future__ import annotations

from rocetrace.dissectors.aeth import AETH
from rocetrace.dissectors.atomic import ATOMIC_ACK_ETH, ATOMIC_ETH
from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.deth import DETH
from rocetrace.dissectors.header import Header, NeedData
from rocetrace.dissectors.immdt import IETH, IMMDT
from rocetrace.dissectors.opcodes import lookup
from rocetrace.dissectors.reth import RETH
from rocetrace.dissectors.xrceth import XRCETH

# Packet-table column of each (header, field); headers without columns (RDETH, FETH, CNP
# padding) are decoded for their size only.
COLUMNS: dict[Header, dict[str, str]] = {
    BTH: {f.name: f.name for f in BTH.fields if not f.reserved},
    RETH: {"va": "reth_va", "r_key": "reth_rkey", "dma_length": "reth_dma_length"},
    AETH: {"syndrome": "aeth_syndrome", "msn": "aeth_msn"},
    DETH: {"q_key": "deth_qkey", "src_qp": "deth_src_qp"},
    IMMDT: {"immdt": "immdt"},
    IETH: {"r_key": "ieth_rkey"},
    ATOMIC_ETH: {
        "va": "atomic_va",
        "r_key": "atomic_rkey",
        "swap_add": "atomic_swap_add",
        "compare": "atomic_compare",
    },
    ATOMIC_ACK_ETH: {"orig_rem_dt": "atomic_ack_orig"},
    XRCETH: {"xrc_srqn": "xrc_srqn"},
}


def decode_transport(data: bytes, offset: int = 0) -> tuple[dict[str, int], int]:
    """Columns of the BTH and the extended headers at data[offset:], and the bytes they span.

    Unknown opcodes give the BTH columns only. Raises NeedData when the buffer ends inside
    the BTH or an extended header (the caller flags the truncation).
    """
    columns = _named(BTH, BTH.decode(data, offset))
    end = offset + BTH.size
    entry = lookup(columns["opcode"])
    for header in entry.headers if entry else ():
        if len(data) - end < header.size:
            raise NeedData(f"{header.name} at byte {end} needs {header.size} bytes")
        columns.update(_named(header, header.decode(data, end)))
        end += header.size
    return columns, end - offset


def _named(header: Header, values: dict[str, int]) -> dict[str, int]:
    names = COLUMNS.get(header, {})
    return {names[k]: v for k, v in values.items() if k in names}
