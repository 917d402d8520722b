"""The generator's packet table: one row per frame that existed on some wire.

The scenario model (discrete events) and the bulk path (vectorized) both produce this table;
the frame builder turns rows into bytes and the truth module counts from it. Columns that
only the truth needs (times at each point of the path, loss, episode) live beside the header
fields so a row is the whole story of one packet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

# Frame kinds.
ROCE, PFC, MALFORMED = 0, 1, 2

# Roles: which direction of a connection a packet belongs to (truth bookkeeping).
ROLE_REQUEST, ROLE_RESPONSE, ROLE_CNP, ROLE_PFC, ROLE_OTHER = 0, 1, 2, 3, 4

# Loss marks: where on the path a packet died.
DELIVERED, LOST_AFTER_MIRROR, LOST_BEFORE_MIRROR = 0, 1, 2

COLUMNS: dict[str, str] = {
    # header fields
    "src": "u2",  # host index
    "dst": "u2",
    "kind": "u1",
    "opcode": "u1",
    "dest_qp": "u4",
    "psn": "u4",
    "ack_req": "u1",
    "se": "u1",
    "becn": "u1",
    "payload_len": "u4",
    "payload_id": "u2",  # 0: default pattern; otherwise an index into Frames.payloads
    "va": "u8",
    "rkey": "u4",
    "dma_len": "u4",
    "syndrome": "u1",
    "msn": "u4",
    "imm": "u4",
    "qkey": "u4",
    "src_qp": "u4",
    "swap_add": "u8",
    "compare": "u8",
    "atomic_orig": "u8",
    "ecn": "u1",
    "dscp": "u1",
    "pcp": "u1",
    "udp_sport": "u2",
    "ip_id": "u2",
    "pfc_enable": "u2",
    **{f"pfc_q{p}": "u2" for p in range(8)},
    "malformed": "u1",  # MALFORMED kind: 1 bad_icrc, 2 truncated_bth, 3 unknown_opcode
    # truth bookkeeping
    "ts": "i8",  # capture timestamp, ns since the Unix epoch (set by the vantage point)
    "row": "i4",  # index of the packet in the model's list of everything sent
    "conn": "i4",
    "role": "u1",
    "span": "u4",  # PSNs this packet consumes (READ request: one per response packet)
    "msg": "i4",
    "episode": "i4",
    "t_tx": "i8",  # leaves the source NIC
    "t_sw": "i8",  # leaves the switch (egress mirror)
    "t_rx": "i8",  # reaches the destination NIC
    "lost": "u1",
    "ecn_tx": "u1",  # ECN as sent, before a switch marked CE
    "wire_len": "u4",  # frame length, set when frames are built
}

_DEFAULTS = {"conn": -1, "msg": -1, "episode": -1, "row": -1}


@dataclass
class PacketTable:
    """Columns of equal length, named as in COLUMNS."""

    cols: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.cols["kind"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    def take(self, index: np.ndarray) -> PacketTable:
        """Rows by index or boolean mask, every column."""
        return PacketTable({k: v[index] for k, v in self.cols.items()})

    def fill(self, **values: object) -> None:
        """Assign columns in place (scalars broadcast), keeping each column's dtype."""
        for name, v in values.items():
            self.cols[name][:] = v

    @classmethod
    def empty(cls, n: int) -> PacketTable:
        cols = {k: np.full(n, _DEFAULTS.get(k, 0), dtype=t) for k, t in COLUMNS.items()}
        return cls(cols)

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, int]]) -> PacketTable:
        """Build from row dicts (the event model's output); missing fields take defaults."""
        rows = list(rows)
        table = cls.empty(len(rows))
        for name, arr in table.cols.items():
            default = _DEFAULTS.get(name, 0)
            arr[:] = [r.get(name, default) for r in rows]
        return table

    @classmethod
    def concat(cls, tables: list[PacketTable]) -> PacketTable:
        return cls({k: np.concatenate([t.cols[k] for t in tables]) for k in COLUMNS})
