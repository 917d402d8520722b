"""The packets a streamed analysis keeps for its report: the PSN-vs-time graphs of the most
eventful flows (and the ACKs and NAKs of their peers), thinned per flow with every anomaly
kept. An in-memory analysis keeps every packet; a streamed one cannot, so each partition
samples its own most eventful flows and the reduce step keeps the capture's.

Why bounded: a partition hands its sample to the reduce step (over Dask, pickled), and the
Analysis keeps it; a clean stretch of a PSN graph is a straight line that a few thousand
points draw as well as a million (the report thins again to what it draws).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from rocetrace.analysis import connection, flows
from rocetrace.analysis.prepared import ACK, ATOMIC_ACK, NAK, RNR_NAK, Prepared, isin_small
from rocetrace.psn import delta as psn_delta

GRAPHED_FLOWS = 8  # the report's PSN graphs (rocetrace.commands.options.DEFAULT_TOP_FLOWS)
FLOW_BUDGET = 4_000  # rows kept per flow beyond its anomalies (reports/decimate.py's budget)
NOT_DATA = (ACK, NAK, RNR_NAK, ATOMIC_ACK)  # frames that carry no request or response data
# The packet columns the sample keeps (what the report reads, and the columns declared
# never null); the others are null in it. Not the addresses: each partition's categories
# differ, and joining them made object columns (10M packets: +95 MB peak RSS); a sampled
# row's flow_id names its flow in the flows table.
REPORT_COLUMNS = (
    "frame", "ts_ns", "cap_len", "wire_len", "encap", "opcode", "dest_qp", "psn",
    "aeth_syndrome", "ecn",
)  # fmt: skip

# Flow-table counters that make a flow worth a graph, and their weights.
_HEAVY = ("retransmitted_packets", "naks_psn_sequence_error")
_LIGHT = ("psn_gaps", "timeouts", "cnps", "ecn_ce_packets", "naks_rnr")


def _counts(flow_df: pd.DataFrame, name: str) -> np.ndarray:
    if name not in flow_df:
        return np.zeros(len(flow_df))
    return pd.to_numeric(flow_df[name], errors="coerce").fillna(0).to_numpy(np.float64)


def eventful(flow_df: pd.DataFrame) -> np.ndarray:
    """Per flow row, how eventful it is: resends and sequence-error NAKs outweigh gaps,
    timeouts, CNPs, CE marks and RNR NAKs, which outweigh size. The report draws the most
    eventful flows; the sample keeps the same ones."""
    score = _counts(flow_df, "packets")
    for name in _HEAVY:
        score = score + _counts(flow_df, name) * 1e6
    for name in _LIGHT:
        score = score + _counts(flow_df, name) * 1e5
    return score


def graphed_flows(flow_df: pd.DataFrame, carriers: np.ndarray, top: int) -> np.ndarray:
    """Flow ids of the `top` most eventful flows among `carriers` (flow ids that carry
    data), and of their peers (whose ACKs and NAKs the graphs draw)."""
    fid = pd.to_numeric(flow_df["flow_id"], errors="coerce").fillna(-1).to_numpy(np.int64)
    candidates = np.flatnonzero(np.isin(fid, carriers))
    by = np.argsort(-eventful(flow_df.iloc[candidates]), kind="stable")[:top]
    chosen = candidates[by]
    pair = flow_df["pair_flow_id"] if "pair_flow_id" in flow_df else pd.Series([-1] * len(fid))
    peers = pd.to_numeric(pair, errors="coerce").fillna(-1).to_numpy(np.int64)[chosen]
    return np.unique(np.concatenate([fid[chosen], peers[peers >= 0]]))


def thinned(must: np.ndarray, budget: int | None = None) -> np.ndarray:
    """A flow's rows to keep: every `must` row (thinned evenly only beyond four budgets),
    the first and last, and every stride-th other row so that about `budget` (default
    FLOW_BUDGET) remain."""
    budget = FLOW_BUDGET if budget is None else budget
    n = len(must)
    if n <= budget:
        return np.ones(n, bool)
    n_must = int(must.sum())
    if n_must > 4 * budget:  # a pathological flow: even its anomalies are thinned
        must = must & (np.cumsum(must) % math.ceil(n_must / (4 * budget)) == 0)
    stride = max(1, math.ceil((n - n_must) / max(budget - n_must, budget // 10)))
    keep = must | (np.arange(n) % stride == 0)
    keep[0] = keep[-1] = True
    return keep


def sample_rows(
    pp: Prepared, model: flows.FlowModel, conv: connection.Conversations, flow_df: pd.DataFrame
) -> np.ndarray:
    """Rows (in capture order) of the partition's graphed flows, each flow thinned: PSN
    jumps (both ends), resends, gaps, NAKs and CE marks all kept."""
    inside = model.flow_id >= 0
    data = inside & ~isin_small(pp.kind, NOT_DATA)
    carriers = np.unique(model.flow_id[data])
    wanted = graphed_flows(flow_df, carriers, GRAPHED_FLOWS)
    if len(wanted) == 0:
        return np.zeros(0, np.int64)
    marked = np.zeros(len(pp), bool)  # per frame: an anomaly the graph must show
    marked[conv.row[(conv.flags & connection.RESENT) > 0]] = True
    marked[conv.row[conv.gap > 0]] = True
    marked |= isin_small(pp.kind, (NAK, RNR_NAK)) | (pp.column("ecn") == 3)
    keep = []
    for f in wanted.tolist():  # a few flows, each thinned with array operations
        rows = np.flatnonzero(model.flow_id == f)
        must = marked[rows].copy()
        if len(rows) > 1:
            step = psn_delta(pp.psn[rows[1:]], pp.psn[rows[:-1]]) != 1
            must[1:] |= step
            must[:-1] |= step
        keep.append(rows[thinned(must)])
    return np.sort(np.concatenate(keep))


def reduced_sample(sample: pd.DataFrame, flow_df: pd.DataFrame) -> pd.DataFrame:
    """The partitions' samples joined, cut to the capture's graphed flows (a partition
    kept its own most eventful ones, which may not be the capture's)."""
    if sample.empty:
        return sample
    fid = pd.to_numeric(sample["flow_id"], errors="coerce").fillna(-1).to_numpy(np.int64)
    opcode = pd.to_numeric(sample["opcode"], errors="coerce").fillna(-1).to_numpy(np.int64)
    data = (fid >= 0) & ~np.isin(opcode, _ACK_OPCODES)
    wanted = graphed_flows(flow_df, np.unique(fid[data]), GRAPHED_FLOWS)
    return sample[np.isin(fid, wanted)].reset_index(drop=True)


def _ack_opcodes() -> np.ndarray:
    from rocetrace.dissectors.opcodes import OPCODES, Operation

    acks = (Operation.ACK, Operation.ATOMIC_ACK)
    return np.array(sorted(c for c, op in OPCODES.items() if op.operation in acks), np.int64)


_ACK_OPCODES = _ack_opcodes()


def with_sample(link: pd.DataFrame, sample: pd.DataFrame) -> pd.DataFrame:
    """The link-level frames and the report's sample as one packet table, by time then
    frame (columns a streamed partition does not read, such as MACs, are null in it)."""
    from rocetrace import schema
    from rocetrace.schema.conform import conform

    if sample.empty:
        return link
    if link.empty:
        return sample
    both = pd.concat(
        [conform(link, schema.PACKETS), conform(sample, schema.PACKETS)], ignore_index=True
    )
    ts, frame = (both[c].to_numpy(np.int64) for c in ("ts_ns", "frame"))
    return both.take(np.lexsort((frame, ts))).reset_index(drop=True)
