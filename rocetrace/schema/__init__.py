"""Every table rocetrace writes, declared once: columns, dtypes, units and meanings.

- the packet table (`PACKET_COLUMNS`, docs/packet-table.md), what the decoder produces;
- the analysis' output tables (`TABLES`, docs/tables.md): every `Analysis` table is cast to
  its declaration (`rocetrace.schema.conform`), so its dtypes are the same empty or not,
  and Parquet written from it reads back with plain `pandas.read_parquet`.

Importing this package does not import pandas (`rocetrace decode` never does);
`PACKET_DTYPES` and `rocetrace.schema.conform` do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocetrace.schema.column import CATEGORY, FLAG, U8, U16, U32, U64, Column, Table
from rocetrace.schema.event_tables import CNPS, NAKS, PACKET_EXTRAS, RETRANSMISSIONS
from rocetrace.schema.fabric_tables import ANOMALIES as ANOMALY_TABLE
from rocetrace.schema.fabric_tables import CM_CONNECTIONS, PFC, PFC_PAUSES, UDP_SPORTS
from rocetrace.schema.finding_table import FINDINGS, MAX_FRAMES, SEVERITIES
from rocetrace.schema.flow_columns import FLOWS, NAK_KINDS
from rocetrace.schema.packet_table import (
    ANOMALIES,
    ENCAPS,
    ICRC_STATUSES,
    MAD_DTYPES,
    MALFORMED_ROCE,
    PACKET_COLUMN_NAMES,
    PACKET_COLUMNS,
    ROCE_ENCAPS,
    packet_dtypes,
)
from rocetrace.schema.vantage_columns import MERGED_PACKET_EXTRAS, VANTAGE_TABLES

if TYPE_CHECKING:
    # Built on first use (module __getattr__): `rocetrace decode` never imports pandas.
    PACKET_DTYPES: dict[str, object]

# The analysis packet table: the decoder's columns, then the analysis'.
PACKETS = Table("packets", PACKET_EXTRAS.row, PACKET_COLUMNS + PACKET_EXTRAS.columns)

# Every table of an Analysis, by its attribute name (and Parquet file stem), in the order
# docs/tables.md lists them.
TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        FLOWS,
        RETRANSMISSIONS,
        NAKS,
        CNPS,
        PFC,
        PFC_PAUSES,
        UDP_SPORTS,
        ANOMALY_TABLE,
        CM_CONNECTIONS,
        FINDINGS,
        PACKETS,
    )
}


def __getattr__(name: str) -> object:
    if name == "PACKET_DTYPES":
        return packet_dtypes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ANOMALIES",
    "CATEGORY",
    "ENCAPS",
    "FLAG",
    "ICRC_STATUSES",
    "MAD_DTYPES",
    "MALFORMED_ROCE",
    "MAX_FRAMES",
    "MERGED_PACKET_EXTRAS",
    "NAK_KINDS",
    "PACKETS",
    "PACKET_COLUMNS",
    "PACKET_COLUMN_NAMES",
    "ROCE_ENCAPS",
    "SEVERITIES",
    "TABLES",
    "U8",
    "U16",
    "U32",
    "U64",
    "VANTAGE_TABLES",
    "Column",
    "Table",
]
