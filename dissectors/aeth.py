"""ACK Extended Transport Header: ACK/NAK/RNR NAK, READ responses, ATOMIC ACK.

The syndrome's bits 6-5 select the kind; the low 5 bits are a credit count (ACK), the RNR
timer code (RNR NAK) or the NAK code.
"""

from enum import IntEnum

from rocetrace.dissectors.header import Header

AETH = Header("AETH", (("syndrome", 8), ("msn", 24)))


class AckKind(IntEnum):
    ACK = 0
    RNR_NAK = 1
    RESERVED = 2
    NAK = 3


class NakCode(IntEnum):
    PSN_SEQUENCE_ERROR = 0
    INVALID_REQUEST = 1
    REMOTE_ACCESS_ERROR = 2
    REMOTE_OPERATIONAL_ERROR = 3
    INVALID_RD_REQUEST = 4


# RNR timer codes (IBTA table 45), in microseconds: code 0 is 655.36 ms.
RNR_TIMER_US = (
    655360.0, 10.0, 20.0, 30.0, 40.0, 60.0, 80.0, 120.0, 160.0, 240.0, 320.0, 480.0,
    640.0, 960.0, 1280.0, 1920.0, 2560.0, 3840.0, 5120.0, 7680.0, 10240.0, 15360.0,
    20480.0, 30720.0, 40960.0, 61440.0, 81920.0, 122880.0, 163840.0, 245760.0,
    327680.0, 491520.0,
)  # fmt: skip


def ack_kind(syndrome: int) -> AckKind:
    return AckKind((syndrome >> 5) & 0x3)


def syndrome(kind: AckKind, value: int) -> int:
    """Build a syndrome byte from its kind and low 5 bits (credits, timer or NAK code)."""
    return (int(kind) << 5) | (value & 0x1F)
