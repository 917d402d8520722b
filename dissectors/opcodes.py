"""THE opcode table: for every IBTA opcode its name, transport, operation and the extended
headers that follow the BTH, in wire order.

Everything that needs to know "which headers come after this BTH" reads this table: the fast
decoder, the Scapy layer bindings, the generator. A missing AETH on a READ response (scapy's
RoCE module) is then impossible to get wrong in one place only.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from rocetrace.dissectors.aeth import AETH
from rocetrace.dissectors.atomic import ATOMIC_ACK_ETH, ATOMIC_ETH
from rocetrace.dissectors.cnp import CNP_PAYLOAD
from rocetrace.dissectors.deth import DETH, RDETH
from rocetrace.dissectors.header import Header
from rocetrace.dissectors.immdt import IETH, IMMDT
from rocetrace.dissectors.reth import FETH, RETH
from rocetrace.dissectors.xrceth import XRCETH


class Transport(Enum):
    RC = 0x00
    UC = 0x20
    RD = 0x40
    UD = 0x60
    CNP = 0x80
    XRC = 0xA0


class Operation(Enum):
    SEND = "send"
    WRITE = "write"
    READ_REQUEST = "read_request"
    READ_RESPONSE = "read_response"
    ACK = "ack"
    ATOMIC_ACK = "atomic_ack"
    CMP_SWAP = "cmp_swap"
    FETCH_ADD = "fetch_add"
    RESYNC = "resync"
    FLUSH = "flush"
    ATOMIC_WRITE = "atomic_write"
    CNP = "cnp"


REQUESTS = frozenset(
    {
        Operation.SEND,
        Operation.WRITE,
        Operation.READ_REQUEST,
        Operation.CMP_SWAP,
        Operation.FETCH_ADD,
        Operation.RESYNC,
        Operation.FLUSH,
        Operation.ATOMIC_WRITE,
    }
)


@dataclass(frozen=True)
class Opcode:
    code: int
    name: str
    transport: Transport
    operation: Operation
    position: str | None  # "first" | "middle" | "last" | "only" | None
    headers: tuple[Header, ...]  # extended headers after the BTH, in wire order

    @property
    def is_request(self) -> bool:
        return self.operation in REQUESTS

    @property
    def carries_aeth(self) -> bool:
        return AETH in self.headers

    @property
    def header_bytes(self) -> int:
        return sum(h.size for h in self.headers)


# (low 5 bits, suffix, operation, position, headers) of the reliable-connected operations;
# RC, RD and XRC share these codes and add their own transport headers.
_RC_OPS: tuple[tuple[int, str, Operation, str | None, tuple[Header, ...]], ...] = (
    (0x00, "SEND_FIRST", Operation.SEND, "first", ()),
    (0x01, "SEND_MIDDLE", Operation.SEND, "middle", ()),
    (0x02, "SEND_LAST", Operation.SEND, "last", ()),
    (0x03, "SEND_LAST_WITH_IMMEDIATE", Operation.SEND, "last", (IMMDT,)),
    (0x04, "SEND_ONLY", Operation.SEND, "only", ()),
    (0x05, "SEND_ONLY_WITH_IMMEDIATE", Operation.SEND, "only", (IMMDT,)),
    (0x06, "RDMA_WRITE_FIRST", Operation.WRITE, "first", (RETH,)),
    (0x07, "RDMA_WRITE_MIDDLE", Operation.WRITE, "middle", ()),
    (0x08, "RDMA_WRITE_LAST", Operation.WRITE, "last", ()),
    (0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", Operation.WRITE, "last", (IMMDT,)),
    (0x0A, "RDMA_WRITE_ONLY", Operation.WRITE, "only", (RETH,)),
    (0x0B, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", Operation.WRITE, "only", (RETH, IMMDT)),
    (0x0C, "RDMA_READ_REQUEST", Operation.READ_REQUEST, "only", (RETH,)),
    (0x0D, "RDMA_READ_RESPONSE_FIRST", Operation.READ_RESPONSE, "first", (AETH,)),
    (0x0E, "RDMA_READ_RESPONSE_MIDDLE", Operation.READ_RESPONSE, "middle", ()),
    (0x0F, "RDMA_READ_RESPONSE_LAST", Operation.READ_RESPONSE, "last", (AETH,)),
    (0x10, "RDMA_READ_RESPONSE_ONLY", Operation.READ_RESPONSE, "only", (AETH,)),
    (0x11, "ACKNOWLEDGE", Operation.ACK, None, (AETH,)),
    (0x12, "ATOMIC_ACKNOWLEDGE", Operation.ATOMIC_ACK, None, (AETH, ATOMIC_ACK_ETH)),
    (0x13, "COMPARE_SWAP", Operation.CMP_SWAP, "only", (ATOMIC_ETH,)),
    (0x14, "FETCH_ADD", Operation.FETCH_ADD, "only", (ATOMIC_ETH,)),
)
_RC_ONLY_OPS: tuple[tuple[int, str, Operation, str | None, tuple[Header, ...]], ...] = (
    (0x16, "SEND_LAST_WITH_INVALIDATE", Operation.SEND, "last", (IETH,)),
    (0x17, "SEND_ONLY_WITH_INVALIDATE", Operation.SEND, "only", (IETH,)),
    (0x1C, "FLUSH", Operation.FLUSH, "only", (FETH, RETH)),
    (0x1D, "ATOMIC_WRITE", Operation.ATOMIC_WRITE, "only", (RETH,)),
)


def _rc() -> list[Opcode]:
    return [
        Opcode(c, f"RC_{n}", Transport.RC, op, pos, h)
        for c, n, op, pos, h in _RC_OPS + _RC_ONLY_OPS
    ]


def _uc() -> list[Opcode]:
    return [
        Opcode(0x20 | c, f"UC_{n}", Transport.UC, op, pos, h)
        for c, n, op, pos, h in _RC_OPS[:12]  # SEND and RDMA WRITE only
    ]


def _rd() -> list[Opcode]:
    """RD: RDETH on every packet, DETH after it on requests (Wireshark's RDETH_DETH_* lists)."""
    ops = [
        Opcode(
            0x40 | c,
            f"RD_{n}",
            Transport.RD,
            op,
            pos,
            (RDETH, DETH, *h) if op in REQUESTS else (RDETH, *h),
        )
        for c, n, op, pos, h in _RC_OPS
    ]
    ops.append(Opcode(0x55, "RD_RESYNC", Transport.RD, Operation.RESYNC, "only", (RDETH, DETH)))
    # FLUSH is defined for RD too (Linux include/rdma/ib_pack.h: IB_OPCODE(RD, FLUSH) = 0x5C);
    # ATOMIC WRITE is not.
    ops.append(
        Opcode(0x5C, "RD_FLUSH", Transport.RD, Operation.FLUSH, "only", (RDETH, DETH, FETH, RETH))
    )
    return ops


def _ud() -> list[Opcode]:
    return [
        Opcode(0x64, "UD_SEND_ONLY", Transport.UD, Operation.SEND, "only", (DETH,)),
        Opcode(
            0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", Transport.UD, Operation.SEND, "only", (DETH, IMMDT)
        ),
    ]


def _xrc() -> list[Opcode]:
    """XRC (IBTA Annex A14): XRCETH right after the BTH on requests; responses look like RC.

    FLUSH and ATOMIC WRITE (IBTA 1.5 memory placement extensions) are listed as for RC.
    """
    return [
        Opcode(
            0xA0 | c,
            f"XRC_{n}",
            Transport.XRC,
            op,
            pos,
            (XRCETH, *h) if op in REQUESTS else h,
        )
        for c, n, op, pos, h in _RC_OPS + _RC_ONLY_OPS
    ]


def _cnp() -> list[Opcode]:
    return [Opcode(0x81, "CNP", Transport.CNP, Operation.CNP, None, (CNP_PAYLOAD,))]


OPCODES: dict[int, Opcode] = {op.code: op for op in _rc() + _uc() + _rd() + _ud() + _cnp() + _xrc()}

UNKNOWN_OPCODE_NAME = "UNKNOWN"


def lookup(code: int) -> Opcode | None:
    """The table entry for an opcode byte, or None for reserved/vendor opcodes."""
    return OPCODES.get(code)


def opcode_name(code: int) -> str:
    op = OPCODES.get(code)
    return op.name if op else UNKNOWN_OPCODE_NAME
