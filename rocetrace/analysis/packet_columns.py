"""The packet table with the analysis' columns (schema.PACKET_EXTRAS): each frame's flow,
whether it was resent, its episode, the PSNs skipped before it, its CE mark, its UTC time.
Built in their declared dtypes so the last cast (finish.py) has nothing to copy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from rocetrace.analysis import connection, flows
from rocetrace.analysis.prepared import Prepared
from rocetrace.capture.packets import numeric_array
from rocetrace.capture.zeroed import zeroed
from rocetrace.schema.conform import time_column


def nullable_ints(values: np.ndarray, null: np.ndarray) -> pd.arrays.ArrowExtensionArray:
    """int64 values as the declared Arrow column, null where `null` (rocetrace.schema);
    the values become the Arrow buffer as they are (pa.array would copy them: 8 MB per
    column per million packets, at the analysis' peak)."""
    data = np.ascontiguousarray(values, np.int64)
    return pd.arrays.ArrowExtensionArray(
        numeric_array(data, pa.int64(), ~null if null.any() else None)
    )


def packets_out(
    packets: pd.DataFrame,
    pp: Prepared,
    model: flows.FlowModel,
    conv: connection.Conversations,
    row_of_episode: np.ndarray | None,
    rows: np.ndarray | None = None,
) -> pd.DataFrame:
    """The packet table with the analysis' columns; only `rows` of it when given (a
    streamed partition's report sample), whose episodes are null: they number the
    partition's episodes, which the reduce step renumbers (`row_of_episode` None)."""
    if rows is not None and len(rows) == 0:  # in memory, no sample: no per-frame pass
        none = np.zeros(0, np.int64)
        return _with_columns(packets.iloc[:0], none, none, none < 0, none < 0, none, none)
    if rows is not None:  # a sample: its rows' values only, no per-frame arrays
        retransmitted, gap = _at_rows(conv, rows)
        return _with_columns(
            packets.take(rows).reset_index(drop=True), pp.ts[rows], model.flow_id[rows],
            pp.column("ecn", rows) == 3, retransmitted, np.full(len(rows), -1, np.int64), gap,
        )  # fmt: skip
    retransmitted = np.zeros(len(pp), bool)
    retransmitted[conv.row[(conv.flags & connection.RESENT) > 0]] = True
    # episode and gap are written at the few resent or gapped frames only: in pages never
    # written elsewhere (zeroed), which take no memory; episode is null but where written
    episode, numbered = zeroed((len(pp),), np.int64), np.zeros(len(pp), bool)
    resent = np.flatnonzero(conv.episode >= 0)
    if len(resent) and row_of_episode is not None:
        at, number = conv.row[resent], row_of_episode[conv.episode[resent]]
        episode[at], numbered[at] = number, number >= 0
    gap = zeroed((len(pp),), np.int64)
    gapped = np.flatnonzero(conv.gap > 0)
    gap[conv.row[gapped]] = conv.gap[gapped]
    return _with_columns(
        packets, pp.ts, model.flow_id, pp.column("ecn") == 3, retransmitted, episode, gap, ~numbered
    )


def _at_rows(conv: connection.Conversations, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Whether each of `rows` (sorted frame rows) was resent, and the PSNs skipped before
    it, looked up among the events that have either."""
    resent = np.isin(rows, conv.row[(conv.flags & connection.RESENT) > 0])
    gap = np.zeros(len(rows), np.int64)
    gapped = np.flatnonzero(conv.gap > 0)
    if len(gapped):
        at = np.searchsorted(rows, conv.row[gapped])
        found = at < len(rows)
        found[found] = rows[at[found]] == conv.row[gapped][found]
        gap[at[found]] = conv.gap[gapped][found]
    return resent, gap


def _with_columns(
    packets: pd.DataFrame, ts: np.ndarray, flow_id: np.ndarray, ce: np.ndarray,
    retransmitted: np.ndarray, episode: np.ndarray, gap: np.ndarray,
    no_episode: np.ndarray | None = None,
) -> pd.DataFrame:  # fmt: skip
    """`no_episode`: where episode is null (default: where it is negative)."""

    def column(values: pd.api.extensions.ExtensionArray) -> pd.Series:
        return pd.Series(values, index=packets.index, copy=False)  # a copy of time: 8 MB

    return packets.assign(
        time=column(time_column(ts)),
        flow_id=column(nullable_ints(flow_id, flow_id < 0)),
        retransmitted=column(pd.arrays.ArrowExtensionArray(pa.array(retransmitted))),
        episode=column(nullable_ints(episode, episode < 0 if no_episode is None else no_episode)),
        psn_gap=column(nullable_ints(gap, np.zeros(0, bool))),
        ce=column(pd.arrays.ArrowExtensionArray(pa.array(ce))),
    )
