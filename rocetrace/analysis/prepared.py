"""The packet table as plain numpy arrays with each frame's role in the transport.

Every analysis reads these arrays instead of the Arrow-backed table: the conversion (nulls to
-1, IPs to one shared code space, opcodes to kinds via lookup tables) is done once, vectorized.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.dissectors.aeth import AckKind
from rocetrace.dissectors.opcodes import OPCODES, Operation, Transport
from rocetrace.schema import MALFORMED_ROCE, ROCE_ENCAPS

# Packet kinds: what a frame is in its connection.
OTHER, REQUEST, READ_RESPONSE, ACK, NAK, RNR_NAK, ATOMIC_ACK, CNP, PFC = range(9)
N_KINDS = 9
# Message position codes.
POS_NONE, POS_FIRST, POS_MIDDLE, POS_LAST, POS_ONLY = range(5)
TRANSPORTS = ("RC", "UC", "RD", "UD", "CNP", "XRC")
_TRANSPORT_CODE = {Transport.RC: 0, Transport.UC: 1, Transport.RD: 2, Transport.UD: 3}
_TRANSPORT_CODE |= {Transport.CNP: 4, Transport.XRC: 5}
_POSITION_CODE = {None: POS_NONE, "first": POS_FIRST, "middle": POS_MIDDLE}
_POSITION_CODE |= {"last": POS_LAST, "only": POS_ONLY}
UD = _TRANSPORT_CODE[Transport.UD]
IP_CODE = np.int32  # Prepared.src / dst: codes into Prepared.ips, -1 none


def _luts() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """256-entry tables opcode -> base kind, transport code, position code, is READ REQUEST."""
    kind = np.full(256, OTHER, np.int8)
    transport = np.full(256, -1, np.int8)
    position = np.zeros(256, np.int8)
    read_req = np.zeros(256, bool)
    for code, op in OPCODES.items():
        transport[code] = _TRANSPORT_CODE.get(op.transport, -1)
        position[code] = _POSITION_CODE[op.position]
        read_req[code] = op.operation is Operation.READ_REQUEST
        if op.is_request:
            kind[code] = REQUEST
        elif op.operation is Operation.READ_RESPONSE:
            kind[code] = READ_RESPONSE
        elif op.operation is Operation.ACK:
            kind[code] = ACK
        elif op.operation is Operation.ATOMIC_ACK:
            kind[code] = ATOMIC_ACK
        elif op.operation is Operation.CNP:
            kind[code] = CNP
    return kind, transport, position, read_req


KIND_LUT, TRANSPORT_LUT, POSITION_LUT, READ_REQUEST_LUT = _luts()


def _ints(df: pd.DataFrame, name: str, dtype: type = np.int64) -> np.ndarray:
    """A column as signed integers with nulls as -1 (missing columns are all -1). `dtype`
    narrower than int64 for small fields (ECN, DSCP, ports): less memory to touch."""
    if name not in df.columns:
        return np.full(len(df), -1, dtype)
    return _series_ints(df[name], dtype)


def _ints_at(df: pd.DataFrame, name: str, rows: np.ndarray, dtype: type = np.int64) -> np.ndarray:
    """_ints(df, name)[rows], converting only those rows (an Arrow take: iloc costs more)."""
    if name not in df.columns:
        return np.full(len(rows), -1, dtype)
    col = df[name]
    if isinstance(col.dtype, pd.ArrowDtype):
        return _arrow_ints(pa.chunked_array(col.array._pa_array).take(rows), dtype)
    return _series_ints(col.iloc[rows], dtype)


def _series_ints(col: pd.Series, dtype: type) -> np.ndarray:
    """A column as integers, nulls -1: Arrow ones from their buffers (to_numpy would go
    through floats or objects)."""
    if isinstance(col.dtype, pd.ArrowDtype):
        return _arrow_ints(pa.chunked_array(col.array._pa_array), dtype)
    return col.to_numpy(dtype=dtype, na_value=-1)


def _arrow_ints(column: pa.ChunkedArray, dtype: type) -> np.ndarray:
    """Each chunk read from its buffers straight into its slice of one array (a table
    decoded window by window has a chunk per window: no concatenation pass)."""
    chunks = column.chunks
    if len(chunks) == 1:
        return _chunk_ints(chunks[0], dtype)
    out: np.ndarray = np.empty(len(column), dtype)
    at = 0
    for c in chunks:  # a few windows, each converted with array operations
        _chunk_ints(c, dtype, out[at : at + len(c)])
        at += len(c)
    return out


def _chunk_ints(chunk: pa.Array, dtype: type, out: np.ndarray | None = None) -> np.ndarray:
    """An Arrow integer or boolean chunk read straight from its buffers (into `out` when
    given); nulls become -1."""
    n, off = len(chunk), chunk.offset
    out = np.empty(n, dtype) if out is None else out
    if chunk.null_count == n:  # a header absent from the whole chunk
        out.fill(-1)
        return out
    validity, data = chunk.buffers()[:2]
    if pa.types.is_boolean(chunk.type):
        bits = np.unpackbits(np.frombuffer(data, np.uint8), bitorder="little")
        out[:] = bits[off : off + n]
    else:
        stored = np.dtype(chunk.type.to_pandas_dtype())
        out[:] = np.frombuffer(data, stored, count=n, offset=off * stored.itemsize)
    if chunk.null_count == 0 or validity is None:
        return out
    valid = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[off : off + n]
    out += 1  # (v + 1) * valid - 1: v where valid, -1 where null, in three in-place passes
    out *= valid
    out -= 1
    return out


def category_in(col: pd.Series, names: tuple[str, ...]) -> np.ndarray:
    """Membership test on a categorical column through its codes (no string compares): a
    compare per wanted code when they are few, else a table lookup."""
    if not isinstance(col.dtype, pd.CategoricalDtype):
        return col.astype(object).isin(names).to_numpy(bool)
    wanted = np.isin(np.asarray(col.cat.categories, dtype=object), names)
    codes = col.array.codes  # the Categorical's own array (cat.codes builds a Series)
    if np.count_nonzero(wanted) <= 3:
        found = np.zeros(len(codes), bool)
        for code in np.flatnonzero(wanted).tolist():  # Python ints keep the int8 compares
            found |= codes == code
        return found
    return np.take(np.append(wanted, False), codes)  # code -1 (null) reads the added False


def _categorical(col: pd.Series) -> pd.Categorical:
    """The column as a Categorical (no conversion when it is one: astype would copy it)."""
    return col.array if isinstance(col.dtype, pd.CategoricalDtype) else pd.Categorical(col)


def _ip_codes(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source and destination IPs as codes into one shared array of address strings.

    int32 (IP_CODE): two per frame live through the whole analysis, int64 would hold 8 MB
    more per million frames at its peak; what packs or multiplies codes widens them first
    (flows' keys pack them in 20 bits each)."""
    src, dst = _categorical(df["src_ip"]), _categorical(df["dst_ip"])
    names = np.array(sorted(set(src.categories) | set(dst.categories)), dtype=object)
    if len(names) == 0:
        return np.full(len(df), -1, IP_CODE), np.full(len(df), -1, IP_CODE), names
    codes = []
    for col in (src, dst):
        at = np.searchsorted(names, np.asarray(col.categories, dtype=object)).astype(IP_CODE)
        codes.append(np.take(np.append(at, IP_CODE(-1)), col.codes))  # null (-1) reads -1
    return codes[0], codes[1], names


def malformed_roce(df: pd.DataFrame) -> np.ndarray:
    """Frames whose RoCE headers are not trusted (schema.MALFORMED_ROCE: no whole BTH, an
    unknown opcode, lying IP / UDP lengths, a fragment): in the table, in no flow or PSN
    stream, so they never make a PSN finding (an 11-byte frame read as PSN -1 did)."""
    if "anomaly" not in df.columns:
        return np.zeros(len(df), bool)
    return category_in(df["anomaly"], MALFORMED_ROCE)


def _ints_if(needed: bool, df: pd.DataFrame, name: str) -> np.ndarray:
    """A column only some frames read (READ lengths, UD source QPs): when no frame needs
    it, all -1 as a zero-copy view instead of a converted copy."""
    return _ints(df, name) if needed else np.broadcast_to(np.int64(-1), (len(df),))


def _roce_only(roce: np.ndarray, everywhere: bool, values: np.ndarray, fill: int) -> np.ndarray:
    """`values` on RoCE frames, `fill` elsewhere (no pass at all when every frame is RoCE);
    keeps the dtype of `values` (int8 kinds stay int8)."""
    return values if everywhere else np.where(roce, values, values.dtype.type(fill))


@dataclass
class Prepared:
    """Per-frame arrays (all of length n, in frame order); -1 stands for null.

    Frame numbers, opcodes and READ lengths, which few passes read, are converted on first
    use: a full array no pass reads would cost its memory's first touch (~1.5 ms per 8 MB).
    UDP source ports, payload lengths, ECN, DSCP and PCP, which a few passes read before
    the state machine's and one or two after, are converted when asked (`column`) and not
    kept: 13.5 MB per million frames less at the analysis' peak, for ~0.2 ms a conversion.
    """

    ts: np.ndarray
    wire_len: np.ndarray  # uint32 (the decoder's column itself) or int64: widen to add
    src: np.ndarray  # IP_CODE
    dst: np.ndarray
    ips: np.ndarray
    qp: np.ndarray
    psn: np.ndarray
    kind: np.ndarray
    transport: np.ndarray
    position: np.ndarray
    read_request: np.ndarray
    syndrome: np.ndarray
    deth_src_qp: np.ndarray
    table: pd.DataFrame = field(repr=False, compare=False)  # the columns converted on use
    roce: np.ndarray | None = field(repr=False, compare=False)  # RoCE frames; None: all
    in_time_order: bool = True  # timestamps never decrease from one frame to the next

    def __len__(self) -> int:
        return len(self.ts)

    def udp_sports(self) -> np.ndarray:
        """The UDP source port of each frame (int32, -1 none), converted on each call."""
        return _ints(self.table, "udp_sport", np.int32)

    def column(self, name: str, rows: np.ndarray | None = None) -> np.ndarray:
        """One of ON_USE per frame (only `rows` when given), -1 for null, converted on
        each call."""
        source, dtype = ON_USE[name]
        if rows is None:
            return _ints(self.table, source, dtype)
        return _ints_at(self.table, source, rows, dtype)

    @cached_property
    def frame(self) -> np.ndarray:
        return _ints(self.table, "frame")

    @cached_property
    def opcode(self) -> np.ndarray:
        opcode = _ints(self.table, "opcode")
        return opcode if self.roce is None else np.where(self.roce, opcode, -1)

    @cached_property
    def dma_length(self) -> np.ndarray:
        if not self.read_request.any():  # no frame reads it: all -1, a zero-copy view
            return np.broadcast_to(np.int64(-1), (len(self),))
        return _ints(self.table, "reth_dma_length")

    def opcodes_at(self, rows: np.ndarray) -> np.ndarray:
        """opcode[rows] as int16 (what the state machine reads), converting only those
        rows: the whole int64 column would stay cached for the analysis' lifetime."""
        if "opcode" in self.__dict__:
            return self.opcode[rows].astype(np.int16)
        opcode = _ints_at(self.table, "opcode", rows, np.int16)
        return opcode if self.roce is None else np.where(self.roce[rows], opcode, np.int16(-1))

    def frames_at(self, rows: np.ndarray) -> np.ndarray:
        """frame[rows], converting only those rows while no pass has needed all of them."""
        return self.frame[rows] if "frame" in self.__dict__ else _ints_at(self.table, "frame", rows)

    def dma_length_at(self, rows: np.ndarray) -> np.ndarray:
        """dma_length[rows], converting only those rows while no pass has needed all."""
        if "dma_length" in self.__dict__ or not self.read_request.any():
            return self.dma_length[rows]
        return _ints_at(self.table, "reth_dma_length", rows)


def _kinds(
    df: pd.DataFrame, encap: pd.Series, roce: np.ndarray, everywhere: bool, op: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Kind per frame (ACKs split by AETH syndrome into ACK / NAK / RNR NAK), and syndromes."""
    kind = _roce_only(roce, everywhere, np.take(KIND_LUT, op), OTHER)
    kind[np.flatnonzero(category_in(encap, ("pfc",)))] = PFC
    syndrome = _ints(df, "aeth_syndrome", np.int16)
    acks = np.flatnonzero(kind == ACK)
    ack_kind = (syndrome[acks] >> 5) & 3
    kind[acks[ack_kind == AckKind.NAK]] = NAK
    kind[acks[ack_kind == AckKind.RNR_NAK]] = RNR_NAK
    return kind, syndrome


# Prepared field -> (packet table column, dtype) for the columns converted as they are.
# QPs and PSNs are 24-bit: int32 halves two arrays the whole analysis keeps (8 MB at 1M
# frames, at its peak); what packs or subtracts them widens them first (pairing.flow_keys,
# rocetrace.psn) and the tables they land in hold them as int64.
_PLAIN: dict[str, tuple[str, type]] = {
    "qp": ("dest_qp", np.int32),
    "psn": ("psn", np.int32),
}
# Prepared.column's names -> (packet table column, dtype): per-frame values no pass keeps.
ON_USE: dict[str, tuple[str, type]] = {
    "payload_len": ("payload_len", np.int32),
    "ecn": ("ecn", np.int16),
    "dscp": ("dscp", np.int16),
    "pcp": ("vlan_pcp", np.int16),
}


def _wire_lengths(df: pd.DataFrame) -> np.ndarray:
    """The wire lengths: the decoder's uint32 column itself (no copy: an int64 one would be
    8 MB per million frames kept to the analysis' end), any other as int64 with -1 for
    null. Sums widen them to int64 first (a uint32 cumsum is uint64, np.add.at with a
    uint32 operand takes a slow path)."""
    if "wire_len" in df.columns and df["wire_len"].dtype == np.uint32:
        return df["wire_len"].to_numpy()
    return _ints(df, "wire_len")


def prepare(df: pd.DataFrame) -> Prepared:
    """Convert the packet table once: integer columns with -1 for null, IPs as codes,
    opcodes as kinds, transports and message positions.

    All on the calling thread: arrays a short-lived helper thread allocates live in its own
    malloc arena, whose memory goes back to the OS between runs (prepare measured 8 ms
    here, 18-60 ms with the conversions on a helper, in the 1M-frame pipeline).
    """
    qp, psn = (_ints(df, name, dtype) for name, dtype in _PLAIN.values())
    src, dst, ips = _ip_codes(df)
    opcode = _ints(df, "opcode")
    encap = df["encap"]
    roce = category_in(encap, ROCE_ENCAPS) & (opcode >= 0) & ~malformed_roce(df)
    everywhere = bool(roce.all())
    op = _roce_only(roce, everywhere, opcode, 0)
    kind, syndrome = _kinds(df, encap, roce, everywhere, op)
    ts = _ints(df, "ts_ns")
    in_time_order = bool(np.all(ts[1:] >= ts[:-1]))
    transport = _roce_only(roce, everywhere, np.take(TRANSPORT_LUT, op), -1)
    return Prepared(
        qp=_roce_only(roce, everywhere, qp, -1),
        psn=_roce_only(roce, everywhere, psn, -1),
        ts=ts,
        wire_len=_wire_lengths(df),
        src=_roce_only(roce, everywhere, src, -1),
        dst=_roce_only(roce, everywhere, dst, -1),
        ips=ips,
        kind=kind,
        transport=transport,
        position=_roce_only(roce, everywhere, np.take(POSITION_LUT, op), POS_NONE),
        read_request=_roce_only(roce, everywhere, np.take(READ_REQUEST_LUT, op), False),
        syndrome=syndrome,
        deth_src_qp=_ints_if(bool((transport == UD).any()), df, "deth_src_qp"),
        table=df,
        roce=None if everywhere else roce,
        in_time_order=in_time_order,
    )


def isin_small(values: np.ndarray, codes: tuple[int, ...]) -> np.ndarray:
    """np.isin for small non-negative codes (kinds, positions): a few int8 compares, or a
    table lookup for wider values and longer code lists; far faster than np.isin."""
    if values.dtype == np.int8 and len(codes) <= 6:  # kinds, positions: SIMD compares
        found = np.zeros(len(values), bool)  # 4 codes on 1M: 0.18 ms (a lookup: 0.7-1 ms)
        for code in codes:
            found |= values == code
        return found
    table = np.zeros(256, bool)
    table[list(codes)] = True
    return table[values.astype(np.intp) & 0xFF] & (values >= 0)
