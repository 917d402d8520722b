"""Scapy layers for every RoCE header, generated from the same Header tables as the decoder.

`fields_desc` are built from each `Header` layout, and the BTH picks its next layers by
walking the opcode table, so a READ RESPONSE gets its AETH because the table says so.

Import this module explicitly (scapy is slow to import):

    >>> from rocetrace.dissectors.scapy_layers import BTH, AETH
    >>> from rocetrace.dissectors.scapy_factory import roce_packet, cnp

Bindings: UDP dport 4791 -> BTH, EtherType 0x8915 -> GRH -> BTH (next header 0x1B),
EtherType 0x8808 -> PFC; a DETH to QP1 (the GSI QP) -> MAD -> the CM message of its
attribute ID (REQ, REP, RTU, ...), then Raw (PrivateData). `scapy.contrib.roce` binds UDP
4791 and 0x8915 too; whichever of the two modules is imported first, these bindings are put
first and win dissection.
"""

from __future__ import annotations

from typing import Any, ClassVar

from scapy.fields import AnyField, BitField, FCSField, XBitField
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Packet, Raw, bind_layers

from rocetrace.dissectors import (
    aeth,
    atomic,
    bth,
    cnp,
    deth,
    grh,
    immdt,
    mad,
    pfc_header,
    reth,
    xrceth,
)
from rocetrace.dissectors.header import Header
from rocetrace.dissectors.icrc import ICRC_LEN, compute_icrc, compute_icrc_v1, icrc_bytes
from rocetrace.dissectors.opcodes import lookup

ROCE_V2_UDP_PORT = 4791

# Shown in hex by scapy's show(): addresses, keys and queue numbers.
_HEX_FIELDS = frozenset(
    {"va", "r_key", "q_key", "dest_qp", "src_qp", "xrc_srqn", "ee_context", "sgid", "dgid"}
    | {"pkey", "class_enable", "opcode", "syndrome", "immdt", "orig_rem_dt"}
    | {"transaction_id", "attribute_id", "local_comm_id", "remote_comm_id", "service_id"}
    | {"local_ca_guid", "local_q_key", "local_qpn", "remote_qpn_eecn", "partition_key"}
)


def scapy_fields(header: Header, defaults: dict[str, Any] | None = None) -> list[AnyField]:
    """One BitField (XBitField for identifiers) per (name, bits) of the header table."""
    defaults = defaults or {}
    return [
        (XBitField if f.name in _HEX_FIELDS else BitField)(f.name, defaults.get(f.name, 0), f.bits)
        for f in header.fields
    ]


class ExtHeaderLayer(Packet):
    """An extended transport header: its successor comes from the opcode table."""

    header: ClassVar[Header]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        below = _bth_above(self)
        entry = lookup(below.opcode) if below is not None else None
        if entry is None or self.header not in entry.headers:
            return Raw
        return next_layer(entry.headers, entry.headers.index(self.header) + 1)


class RETH(ExtHeaderLayer):
    name = "RETH"
    header = reth.RETH
    fields_desc = scapy_fields(reth.RETH)


class FETH(ExtHeaderLayer):
    name = "FETH"
    header = reth.FETH
    fields_desc = scapy_fields(reth.FETH)


class AETH(ExtHeaderLayer):
    name = "AETH"
    header = aeth.AETH
    fields_desc = scapy_fields(aeth.AETH)


class DETH(ExtHeaderLayer):
    """Datagram ETH; what a UD packet to QP1 carries is a MAD."""

    name = "DETH"
    header = deth.DETH
    fields_desc = scapy_fields(deth.DETH)

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        successor = super().guess_payload_class(payload)
        bth_layer = _bth_above(self)
        to_gsi = bth_layer is not None and bth_layer.dest_qp == mad.GSI_QP
        return MAD if successor is Raw and to_gsi and len(payload) >= mad.MAD_SIZE else successor


class RDETH(ExtHeaderLayer):
    name = "RDETH"
    header = deth.RDETH
    fields_desc = scapy_fields(deth.RDETH)


class ImmDt(ExtHeaderLayer):
    name = "ImmDt"
    header = immdt.IMMDT
    fields_desc = scapy_fields(immdt.IMMDT)


class IETH(ExtHeaderLayer):
    name = "IETH"
    header = immdt.IETH
    fields_desc = scapy_fields(immdt.IETH)


class XRCETH(ExtHeaderLayer):
    name = "XRCETH"
    header = xrceth.XRCETH
    fields_desc = scapy_fields(xrceth.XRCETH)


class AtomicETH(ExtHeaderLayer):
    name = "AtomicETH"
    header = atomic.ATOMIC_ETH
    fields_desc = scapy_fields(atomic.ATOMIC_ETH)


class AtomicAckETH(ExtHeaderLayer):
    name = "AtomicAckETH"
    header = atomic.ATOMIC_ACK_ETH
    fields_desc = scapy_fields(atomic.ATOMIC_ACK_ETH)


class CNPPadding(ExtHeaderLayer):
    """The 16 reserved bytes after a CNP's BTH."""

    name = "CNP padding"
    header = cnp.CNP_PAYLOAD
    fields_desc = scapy_fields(cnp.CNP_PAYLOAD)


class MAD(Packet):
    """MAD common header (IBTA 13.4.3); a CM MAD continues with its message by attribute ID."""

    name = "MAD"
    header = mad.MAD_HEADER
    fields_desc = scapy_fields(
        mad.MAD_HEADER,
        {"base_version": mad.MAD_BASE_VERSION, "mgmt_class": mad.CM_MGMT_CLASS}
        | {"class_version": mad.CM_CLASS_VERSION, "method": mad.METHOD_SEND},
    )

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        if self.mgmt_class != mad.CM_MGMT_CLASS:
            return Raw
        message = mad.CM_MESSAGES.get(self.attribute_id)
        return LAYERS[message] if message is not None else Raw


class CmMessage(Packet):
    """The fixed fields of a CM message; its PrivateData (and MAD padding) follow as Raw."""

    header: ClassVar[Header]


def _cm_layer(header: Header) -> type[CmMessage]:
    """A CmMessage subclass for one CM table (seven messages, one shape)."""
    fields = scapy_fields(header)
    return type(header.name, (CmMessage,), {"name": header.name, "header": header,
                                            "fields_desc": fields})  # fmt: skip


CM_REQ, CM_REP, CM_RTU = (_cm_layer(h) for h in (mad.CM_REQ, mad.CM_REP, mad.CM_RTU))
CM_DREQ, CM_DREP = _cm_layer(mad.CM_DREQ), _cm_layer(mad.CM_DREP)
CM_REJ, CM_MRA = _cm_layer(mad.CM_REJ), _cm_layer(mad.CM_MRA)


class BTH(Packet):
    """Base Transport Header; the packet's ICRC is read from, and written to, its tail.

    `icrc` is the value as stored on the wire (little-endian), like the packet table's
    `icrc` column. Left as None, it is computed when the packet is built under UDP or GRH.
    """

    name = "BTH"
    header = bth.BTH
    fields_desc = [  # noqa: RUF012 (scapy declares it a plain class attribute)
        *scapy_fields(bth.BTH, {"pkey": 0xFFFF}),
        FCSField("icrc", None, fmt="<I"),
    ]

    def guess_payload_class(self, payload: bytes) -> type[Packet]:
        entry = lookup(self.opcode)
        return next_layer(entry.headers, 0) if entry is not None else Raw

    def post_build(self, p: bytes, pay: bytes) -> bytes:
        data = p + pay  # pay already ends with the 4 ICRC bytes (scapy's trailer field)
        if self.icrc is None:
            data = data[:-ICRC_LEN] + icrc_bytes(_icrc_from_underlayers(self, data))
        return data


class GRH(Packet):
    """Global Route Header of RoCEv1; `pay_len` left as None is filled in when built."""

    name = "GRH"
    header = grh.GRH
    fields_desc = scapy_fields(
        grh.GRH, {"ip_ver": 6, "next_hdr": grh.GRH_NEXT_HEADER_BTH, "hop_lmt": 64, "pay_len": None}
    )

    def post_build(self, p: bytes, pay: bytes) -> bytes:
        if self.pay_len is None:
            p = p[:4] + len(pay).to_bytes(2, "big") + p[6:]
        return p + pay


class PFC(Packet):
    """802.1Qbb PFC frame (MAC control); what follows in the frame is Ethernet padding."""

    name = "PFC"
    header = pfc_header.PFC
    fields_desc = scapy_fields(pfc_header.PFC, {"opcode": pfc_header.PFC_OPCODE})

    def extract_padding(self, s: bytes) -> tuple[bytes, bytes]:
        return b"", s


_ALL_LAYERS: tuple[type[Packet], ...] = (
    *(RETH, FETH, AETH, DETH, RDETH, ImmDt, IETH, XRCETH, AtomicETH, AtomicAckETH),
    *(CNPPadding, BTH, GRH, PFC, MAD),
    *(CM_REQ, CM_REP, CM_RTU, CM_DREQ, CM_DREP, CM_REJ, CM_MRA),
)
LAYERS: dict[Header, type[Packet]] = {cls.header: cls for cls in _ALL_LAYERS}


def next_layer(headers: tuple[Header, ...], index: int) -> type[Packet]:
    """The layer of headers[index], or Raw (payload, pad) past the last extended header."""
    return LAYERS[headers[index]] if index < len(headers) else Raw


def _bth_above(layer: Packet) -> BTH | None:
    """The BTH this extended header (or MAD) follows, None for a layer built alone."""
    below = layer.underlayer
    while below is not None and not isinstance(below, BTH):
        below = below.underlayer
    return below


def _icrc_from_underlayers(layer: Packet, data: bytes) -> int:
    """Rebuild the IP/UDP (or GRH) headers above `data` to compute the ICRC over them."""
    below = layer.underlayer
    if isinstance(below, GRH):
        grh_only = below.copy()
        grh_only.remove_payload()
        return compute_icrc_v1(bytes(grh_only / Raw(data)))
    if isinstance(below, UDP) and isinstance(below.underlayer, IP | IPv6):
        ip_udp = below.underlayer.copy()
        ip_udp[UDP].remove_payload()
        return compute_icrc(bytes(ip_udp / Raw(data)))
    return 0  # a lone BTH has no IP header to cover


def _bind_first(lower: type[Packet], upper: type[Packet], **fields: int) -> None:
    """bind_layers, then move this binding to the front so it wins over earlier ones."""
    bind_layers(lower, upper, **fields)
    guess = (fields, upper)
    lower.payload_guess = [guess] + [g for g in lower.payload_guess if g != guess]


_bind_first(UDP, BTH, dport=ROCE_V2_UDP_PORT)
_bind_first(Ether, GRH, type=grh.ROCE_V1_ETHERTYPE)
_bind_first(Dot1Q, GRH, type=grh.ROCE_V1_ETHERTYPE)
_bind_first(Ether, PFC, type=pfc_header.PFC_ETHERTYPE)
bind_layers(GRH, BTH, next_hdr=grh.GRH_NEXT_HEADER_BTH)

__all__ = [
    "AETH",
    "BTH",
    "CM_DREP",
    "CM_DREQ",
    "CM_MRA",
    "CM_REJ",
    "CM_REP",
    "CM_REQ",
    "CM_RTU",
    "DETH",
    "FETH",
    "GRH",
    "IETH",
    "LAYERS",
    "MAD",
    "PFC",
    "RDETH",
    "RETH",
    "XRCETH",
    "AtomicAckETH",
    "AtomicETH",
    "CNPPadding",
    "CmMessage",
    "ExtHeaderLayer",
    "ImmDt",
    "next_layer",
    "scapy_fields",
]
