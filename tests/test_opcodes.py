"""The opcode table against the IBTA opcode list, written out here independently.

Sources for the expected list: IBTA Vol. 1 table 38 (opcodes) and the per-opcode header
sequences of 9.2-9.5, as also coded in Wireshark's packet-infiniband.c (opCode_* header
lists), Linux include/rdma/ib_pack.h (FLUSH 0x1C, ATOMIC WRITE 0x1D, RD FLUSH) and
drivers/infiniband/sw/rxe/rxe_opcode.c (FLUSH = FETH then RETH; XRC: XRCETH first on
requests, responses as RC); RoCEv2 annex A17 for CNP.
"""

from __future__ import annotations

import pytest

from rocetrace.dissectors.opcodes import (
    OPCODES,
    UNKNOWN_OPCODE_NAME,
    Operation,
    Transport,
    lookup,
    opcode_name,
)

R, D, I = ("RDETH",), ("RDETH", "DETH"), ("ImmDt",)  # noqa: E741
X = ("XRCETH",)

# code: (name, extended headers after the BTH in wire order)
IBTA_OPCODES: dict[int, tuple[str, tuple[str, ...]]] = {
    0x00: ("RC_SEND_FIRST", ()),
    0x01: ("RC_SEND_MIDDLE", ()),
    0x02: ("RC_SEND_LAST", ()),
    0x03: ("RC_SEND_LAST_WITH_IMMEDIATE", I),
    0x04: ("RC_SEND_ONLY", ()),
    0x05: ("RC_SEND_ONLY_WITH_IMMEDIATE", I),
    0x06: ("RC_RDMA_WRITE_FIRST", ("RETH",)),
    0x07: ("RC_RDMA_WRITE_MIDDLE", ()),
    0x08: ("RC_RDMA_WRITE_LAST", ()),
    0x09: ("RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", I),
    0x0A: ("RC_RDMA_WRITE_ONLY", ("RETH",)),
    0x0B: ("RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", ("RETH", "ImmDt")),
    0x0C: ("RC_RDMA_READ_REQUEST", ("RETH",)),
    0x0D: ("RC_RDMA_READ_RESPONSE_FIRST", ("AETH",)),
    0x0E: ("RC_RDMA_READ_RESPONSE_MIDDLE", ()),
    0x0F: ("RC_RDMA_READ_RESPONSE_LAST", ("AETH",)),
    0x10: ("RC_RDMA_READ_RESPONSE_ONLY", ("AETH",)),
    0x11: ("RC_ACKNOWLEDGE", ("AETH",)),
    0x12: ("RC_ATOMIC_ACKNOWLEDGE", ("AETH", "AtomicAckETH")),
    0x13: ("RC_COMPARE_SWAP", ("AtomicETH",)),
    0x14: ("RC_FETCH_ADD", ("AtomicETH",)),
    0x16: ("RC_SEND_LAST_WITH_INVALIDATE", ("IETH",)),
    0x17: ("RC_SEND_ONLY_WITH_INVALIDATE", ("IETH",)),
    0x1C: ("RC_FLUSH", ("FETH", "RETH")),
    0x1D: ("RC_ATOMIC_WRITE", ("RETH",)),
    0x20: ("UC_SEND_FIRST", ()),
    0x21: ("UC_SEND_MIDDLE", ()),
    0x22: ("UC_SEND_LAST", ()),
    0x23: ("UC_SEND_LAST_WITH_IMMEDIATE", I),
    0x24: ("UC_SEND_ONLY", ()),
    0x25: ("UC_SEND_ONLY_WITH_IMMEDIATE", I),
    0x26: ("UC_RDMA_WRITE_FIRST", ("RETH",)),
    0x27: ("UC_RDMA_WRITE_MIDDLE", ()),
    0x28: ("UC_RDMA_WRITE_LAST", ()),
    0x29: ("UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", I),
    0x2A: ("UC_RDMA_WRITE_ONLY", ("RETH",)),
    0x2B: ("UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", ("RETH", "ImmDt")),
    0x40: ("RD_SEND_FIRST", D),
    0x41: ("RD_SEND_MIDDLE", D),
    0x42: ("RD_SEND_LAST", D),
    0x43: ("RD_SEND_LAST_WITH_IMMEDIATE", (*D, "ImmDt")),
    0x44: ("RD_SEND_ONLY", D),
    0x45: ("RD_SEND_ONLY_WITH_IMMEDIATE", (*D, "ImmDt")),
    0x46: ("RD_RDMA_WRITE_FIRST", (*D, "RETH")),
    0x47: ("RD_RDMA_WRITE_MIDDLE", D),
    0x48: ("RD_RDMA_WRITE_LAST", D),
    0x49: ("RD_RDMA_WRITE_LAST_WITH_IMMEDIATE", (*D, "ImmDt")),
    0x4A: ("RD_RDMA_WRITE_ONLY", (*D, "RETH")),
    0x4B: ("RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE", (*D, "RETH", "ImmDt")),
    0x4C: ("RD_RDMA_READ_REQUEST", (*D, "RETH")),
    0x4D: ("RD_RDMA_READ_RESPONSE_FIRST", (*R, "AETH")),
    0x4E: ("RD_RDMA_READ_RESPONSE_MIDDLE", R),
    0x4F: ("RD_RDMA_READ_RESPONSE_LAST", (*R, "AETH")),
    0x50: ("RD_RDMA_READ_RESPONSE_ONLY", (*R, "AETH")),
    0x51: ("RD_ACKNOWLEDGE", (*R, "AETH")),
    0x52: ("RD_ATOMIC_ACKNOWLEDGE", (*R, "AETH", "AtomicAckETH")),
    0x53: ("RD_COMPARE_SWAP", (*D, "AtomicETH")),
    0x54: ("RD_FETCH_ADD", (*D, "AtomicETH")),
    0x55: ("RD_RESYNC", D),
    0x5C: ("RD_FLUSH", (*D, "FETH", "RETH")),
    0x64: ("UD_SEND_ONLY", ("DETH",)),
    0x65: ("UD_SEND_ONLY_WITH_IMMEDIATE", ("DETH", "ImmDt")),
    0x81: ("CNP", ("CNP",)),
    0xA0: ("XRC_SEND_FIRST", X),
    0xA1: ("XRC_SEND_MIDDLE", X),
    0xA2: ("XRC_SEND_LAST", X),
    0xA3: ("XRC_SEND_LAST_WITH_IMMEDIATE", (*X, "ImmDt")),
    0xA4: ("XRC_SEND_ONLY", X),
    0xA5: ("XRC_SEND_ONLY_WITH_IMMEDIATE", (*X, "ImmDt")),
    0xA6: ("XRC_RDMA_WRITE_FIRST", (*X, "RETH")),
    0xA7: ("XRC_RDMA_WRITE_MIDDLE", X),
    0xA8: ("XRC_RDMA_WRITE_LAST", X),
    0xA9: ("XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE", (*X, "ImmDt")),
    0xAA: ("XRC_RDMA_WRITE_ONLY", (*X, "RETH")),
    0xAB: ("XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", (*X, "RETH", "ImmDt")),
    0xAC: ("XRC_RDMA_READ_REQUEST", (*X, "RETH")),
    0xAD: ("XRC_RDMA_READ_RESPONSE_FIRST", ("AETH",)),
    0xAE: ("XRC_RDMA_READ_RESPONSE_MIDDLE", ()),
    0xAF: ("XRC_RDMA_READ_RESPONSE_LAST", ("AETH",)),
    0xB0: ("XRC_RDMA_READ_RESPONSE_ONLY", ("AETH",)),
    0xB1: ("XRC_ACKNOWLEDGE", ("AETH",)),
    0xB2: ("XRC_ATOMIC_ACKNOWLEDGE", ("AETH", "AtomicAckETH")),
    0xB3: ("XRC_COMPARE_SWAP", (*X, "AtomicETH")),
    0xB4: ("XRC_FETCH_ADD", (*X, "AtomicETH")),
    0xB6: ("XRC_SEND_LAST_WITH_INVALIDATE", (*X, "IETH")),
    0xB7: ("XRC_SEND_ONLY_WITH_INVALIDATE", (*X, "IETH")),
    0xBC: ("XRC_FLUSH", (*X, "FETH", "RETH")),
    0xBD: ("XRC_ATOMIC_WRITE", (*X, "RETH")),
}

HEADER_SIZES = {
    "RETH": 16,
    "AETH": 4,
    "DETH": 8,
    "RDETH": 4,
    "ImmDt": 4,
    "IETH": 4,
    "XRCETH": 4,
    "AtomicETH": 28,
    "AtomicAckETH": 8,
    "FETH": 4,
    "CNP": 16,
}


@pytest.mark.parametrize("code", sorted(IBTA_OPCODES), ids=lambda c: f"{c:#04x}")
def test_every_ibta_opcode_has_its_name_and_headers(code: int) -> None:
    name, headers = IBTA_OPCODES[code]
    entry = lookup(code)
    assert entry is not None, f"{code:#04x} {name} missing from the table"
    assert entry.name == name
    assert tuple(h.name for h in entry.headers) == headers
    assert entry.header_bytes == sum(HEADER_SIZES[h] for h in headers)


def test_table_has_nothing_beyond_the_spec() -> None:
    assert set(OPCODES) == set(IBTA_OPCODES), sorted(set(OPCODES) ^ set(IBTA_OPCODES))


@pytest.mark.parametrize("code", [0x15, 0x18, 0x1B, 0x1E, 0x1F, 0x2C, 0x3F, 0x56, 0x60, 0x66])
def test_reserved_codes_are_unknown(code: int) -> None:
    assert lookup(code) is None
    assert opcode_name(code) == UNKNOWN_OPCODE_NAME == "UNKNOWN"


def test_vendor_and_unused_spaces_are_unknown() -> None:
    for code in [0x80, 0x82, 0x9F, 0xB5, 0xBE, 0xC0, 0xE0, 0xFF]:
        assert lookup(code) is None, f"{code:#04x}"
        assert opcode_name(code) == "UNKNOWN"


def test_transport_is_the_top_three_bits() -> None:
    for code, entry in OPCODES.items():
        assert entry.transport is Transport(code & 0xE0)
        assert entry.code == code


def test_read_responses_first_last_only_carry_aeth_middle_does_not() -> None:
    responses = [e for e in OPCODES.values() if e.operation is Operation.READ_RESPONSE]
    assert len(responses) == 12  # RC, RD, XRC x first/middle/last/only
    for entry in responses:
        assert entry.carries_aeth == (entry.position != "middle"), entry.name


def test_every_acknowledge_carries_aeth_and_no_request_does() -> None:
    for entry in OPCODES.values():
        if entry.operation in (Operation.ACK, Operation.ATOMIC_ACK):
            assert entry.carries_aeth and not entry.is_request, entry.name
        if entry.is_request:
            assert not entry.carries_aeth, entry.name


def test_opcode_names_are_looked_up() -> None:
    assert opcode_name(0x11) == "RC_ACKNOWLEDGE"
    assert opcode_name(0x81) == "CNP"
    assert opcode_name(0x64) == "UD_SEND_ONLY"
