"""Priority Flow Control (IEEE 802.1Qbb) MAC control frames."""

from rocetrace.dissectors.header import Header

PFC_ETHERTYPE = 0x8808
PFC_OPCODE = 0x0101
PFC_DST_MAC = bytes.fromhex("0180c2000001")
PFC = Header(
    "PFC",
    (("opcode", 16), ("class_enable", 16), *((f"quanta_{p}", 16) for p in range(8))),
)


def pause_seconds(quanta: int, link_bps: float) -> float:
    """A quantum is 512 bit times: 0xFFFF quanta at 100 Gb/s is 335 us."""
    return quanta * 512 / link_bps
