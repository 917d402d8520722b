# The C module rocetrace.capture._kernels (rocetrace/capture/_kernels.c). Arrays are any
# C-contiguous buffers of the stated element type; per-frame kernels take [start, stop).
from typing import Any

# fmt: off

Array = Any

CODE_NAMES: tuple[str, ...]
MAX_INTERFACES: int
MAX_RECORD: int
MAX_OFFSET: int
SOURCE_HASH: str

def configure(values: tuple[int, ...], /) -> None: ...
def scan_pcap(
    buf: Array, pos: int, big: bool, frac_ns: int, linktype: int, max_cap: int, limit: int,
    out_off: Array, out_cap: Array, out_wire: Array, out_ts: Array, out_lt: Array, /,
) -> tuple[int, int, int]: ...
def resync_pcap(
    buf: Array, pos: int, last: bool, big: bool, frac_ns: int, linktype: int, max_cap: int,
    strict: bool, /,
) -> tuple[int, int, int]: ...
def resync_pcapng(
    buf: Array, pos: int, last: bool, big: bool, n_interfaces: int, strict: bool, /,
) -> tuple[int, int, int]: ...
def scan_pcapng(
    buf: Array, pos: int, state: Array, if_lt: Array, if_res: Array, if_snap: Array,
    if_offs: Array, limit: int, out_off: Array, out_cap: Array, out_wire: Array,
    out_ts: Array, out_lt: Array, /,
) -> tuple[int, int, int]: ...
def units_to_ns(units: int, tsresol: int, /) -> int: ...
def walk_gather(
    buf: Array, base: Array, caps: Array, lts: Array, slots: Array, ports: Array,
    lut_off: Array, lut_len: Array, table: Array, encap: Array, anomaly: Array,
    payload: Array, icrc_out: Array, status: Array, spec: Array, masks: Array,
    out8: Array, out16: Array, out32: Array, out64: Array, flags: Array, vbits: Array,
    counts: Array, start: int, stop: int, /,
) -> None: ...
def address_codes(
    buf: Array, base: Array, caps: Array, slots: Array, spec: Array, codes: Array,
    u_hi: Array, u_lo: Array, u_kind: Array, n_unique: Array, /,
) -> None: ...
def factorize_keys(
    key_hi: Array, key_lo: Array, key_kind: Array, codes: Array, first: Array, /
) -> int: ...
def copy_records(
    out: Array, starts: Array, rec: Array, buf: Array, offsets: Array, caps: Array,
    trailer: Array, rec_len: Array, /,
) -> None: ...
