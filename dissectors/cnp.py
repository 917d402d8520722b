"""Congestion Notification Packet (RoCEv2 Annex A17): BTH opcode 0x81 + 16 reserved bytes."""

from rocetrace.dissectors.header import Header

CNP_OPCODE = 0x81
CNP_PAYLOAD = Header("CNP", (("resv128", 128),))
