"""Every analysis of the pipeline, declared in the registry (registry.py): what it reads,
what it writes, where it runs. Each stage only adapts a module's pure functions to the
workspace's names; the rules live in those modules.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import (
    anomalies,
    cm,
    congestion,
    connection,
    episodes,
    findings,
    flows,
    pfc,
    qos,
    report_sample,
    sequence,
    tolerances,
)
from rocetrace.analysis.flow_table import flows_table, timeouts
from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.packet_columns import packets_out
from rocetrace.analysis.prepared import Prepared, category_in, prepare
from rocetrace.analysis.registry import (
    CAPTURE,
    CAPTURE_ORDER,
    PARTITION,
    REDUCE,
    Combine,
    stage,
)
from rocetrace.analysis.shared import Shared, capture_facts
from rocetrace.heap import give_back

# --- capture: facts every partition needs, measured once on the whole capture ---


@stage(CAPTURE, ("packets", "capture", "options"), ("tolerances",))
def clock(packets: pd.DataFrame, capture: Any, options: dict[str, Any]) -> tolerances.Tolerances:
    """The capture's clock (tolerances.py): its first records and totals over all."""
    totals = clock_totals(packets)
    sample = clock_sample(packets.iloc[: tolerances.SAMPLE])
    return tolerances.measure_sample(sample, totals, declared_resolution(capture, options))


@stage(CAPTURE, ("packets", "options"), ("pfc",))
def pfc_frames(packets: pd.DataFrame, options: dict[str, Any]) -> pd.DataFrame:
    return pfc.pfc_table(packets, options["link_speed_bps"])


@stage(CAPTURE, ("mads",), ("connections",))
def cm_exchanges(mads: pd.DataFrame | None) -> pd.DataFrame:
    return cm.cm_connections(mads)


@stage(CAPTURE, ("packets",), ("end_ns",))
def capture_end(packets: pd.DataFrame) -> int | None:
    """The latest timestamp of the capture (a stall lasts until then)."""
    return int(packets["ts_ns"].max()) if len(packets) else None


# --- partition: the connections of some IP pairs, in capture order ---


@stage(PARTITION, ("packets",), ("pp",), progress="flows")
def arrays(packets: pd.DataFrame) -> Prepared:
    return prepare(packets)


@stage(PARTITION, ("pp", "shared"), ("model",))
def flow_model(pp: Prepared, shared: Shared) -> flows.FlowModel:
    return flows.build_flow_model(pp, shared.connections)


@stage(PARTITION, ("pp", "model", "shared"), ("span",))
def read_spans(pp: Prepared, model: flows.FlowModel, shared: Shared) -> flows.ReadSpans:
    return flows.read_spans(pp, model, shared.mtu)


@stage(
    PARTITION,
    ("pp", "model"),
    ("cnps", "congestion", "qos"),
    combine={"cnps": Combine()},
)
def congestion_tables(pp: Prepared, model: flows.FlowModel) -> tuple[pd.DataFrame, ...]:
    cnps = congestion.cnp_table(pp, model)
    congested = congestion.congestion_per_flow(pp, model, cnps)
    return cnps, congested, qos.qos_per_flow(pp, model)


@stage(PARTITION, ("pp", "model", "span", "shared"), ("conv",), progress="sequences")
def conversations(
    pp: Prepared, model: flows.FlowModel, span: flows.ReadSpans, shared: Shared
) -> connection.Conversations:
    """The state machine's passes; once more where a split in doubt took a NAK a later
    restart answers (episodes.reserved_naks: the split was more of its run)."""
    tol = shared.tolerances
    conv = connection.run_conversations(
        pp, model, span, host_pairs(model), tol.slack_ns, tol.max_frame_ns, shared.windows
    )
    if len(conv.episodes):  # a capture with no resend has no split to weigh
        reserved = episodes.reserved_naks(_episode_context(conv, pp, model, shared))
        if reserved.any():
            conv = connection.rerun(conv, reserved)
    conv.inputs = None
    give_back()  # the state machine's inputs the output does not hold (PSNs, spans, ...)
    return conv


def _episode_context(
    conv: connection.Conversations, pp: Prepared, model: flows.FlowModel, shared: Shared
) -> episodes.Context:
    """What the episode rules read besides the episode records: the PFC pause of each
    episode's priority while it waited, which conversations lost requests upstream, and
    which showed a late original (seen after a stage that reorders)."""
    e = conv.episodes
    windows = shared.windows
    paused = np.zeros(len(e), np.int64)
    if len(e) and windows:
        t0 = conv.ts[e["first_ev"]]
        since = np.where(e["nak_ev"] >= 0, conv.ts[np.maximum(e["nak_ev"], 0)], t0)
        paused = windows.overlap(model.priority[e["conv"]], since, t0)
    upstream = _flagged(conv, len(model), connection.GAP | connection.LATE)
    reorders = _flagged(conv, len(model), connection.REORDER)
    return episodes.Context(
        conv, pp, model, shared.tolerances, paused, upstream, shared.nic, reorders=reorders
    )


def _flagged(conv: connection.Conversations, n_flows: int, flags: int) -> np.ndarray:
    """Per flow id: does any of its conversation's events carry one of `flags`?"""
    out = np.zeros(n_flows, bool)
    hit = conv.conv[(conv.flags & flags) > 0]
    out[hit[hit >= 0]] = True
    return out


@stage(
    PARTITION,
    ("conv", "pp", "model"),
    ("naks",),
    progress="retransmissions",
    combine={"naks": Combine(("flow_id", "nak_flow_id"))},
)
def naks(conv: connection.Conversations, pp: Prepared, model: flows.FlowModel) -> pd.DataFrame:
    return sequence.nak_table(conv, pp, model)


@stage(
    PARTITION,
    ("conv", "pp", "model", "shared"),
    ("retransmissions", "row_of_episode", "nic_seen"),
    combine={"retransmissions": Combine(order=("ts_ns", "first_frame"), frame_column="")},
)
def retransmissions(
    conv: connection.Conversations, pp: Prepared, model: flows.FlowModel, shared: Shared
) -> tuple[pd.DataFrame, np.ndarray, NicContext]:
    """The retransmissions table, episodes weighed (episodes/) with the capture's PFC
    pauses and NIC context; and the NIC context this partition's episodes showed."""
    ctx = _episode_context(conv, pp, model, shared)
    table, row_of = episodes.episode_table(ctx)
    return table, row_of, episodes.seen_context(ctx)


@stage(
    PARTITION,
    ("pp", "model", "conv", "naks", "retransmissions", "congestion", "qos"),
    ("flows",),
    combine={"flows": Combine(("flow_id", "pair_flow_id"), order="flow", frame_column="")},
)
def flow_rows(
    pp: Prepared,
    model: flows.FlowModel,
    conv: connection.Conversations,
    nak_rows: pd.DataFrame,
    eps: pd.DataFrame,
    congested: pd.DataFrame,
    qos_df: pd.DataFrame,
) -> pd.DataFrame:
    """The flows table: keys and counters, every per-flow column of the other stages."""
    n = len(model)
    retx, gap_counts = sequence.flow_counts(conv, model)
    parts = {
        "retx": retx,
        "gaps": gap_counts,
        "nak_counts": sequence.nak_counts(nak_rows, n),
        "episodes": eps,
        "timeouts": timeouts(eps, n),
        "congestion": congested,
        "qos": qos_df,
        "rtt": sequence.rtt_per_flow(conv, pp, n),
    }
    flow_df = flows_table(pp, model, parts)
    flow_df["rnr_timer_us"] = _rnr_timers(nak_rows, n)
    flow_df["history"] = pd.Series(conv.history, dtype=object)
    return flow_df


@stage(
    PARTITION,
    ("conv", "pp", "model"),
    ("capture_gaps",),
    progress="findings",
    combine={"capture_gaps": Combine(("flow_id", "conv"), order=("conv", CAPTURE_ORDER))},
)
def capture_gaps(
    conv: connection.Conversations, pp: Prepared, model: flows.FlowModel
) -> pd.DataFrame:
    return sequence.capture_gaps(conv, pp, model)


@stage(
    PARTITION,
    ("conv", "pp", "model", "shared"),
    ("anomalies",),
    combine={"anomalies": Combine(order=("ts_ns", "frame"))},
)
def named_anomalies(
    conv: connection.Conversations, pp: Prepared, model: flows.FlowModel, shared: Shared
) -> pd.DataFrame:
    return anomalies.anomaly_table(conv, pp, model, shared.connections, shared.end_ns)


@stage(PARTITION, ("packets",), ("bad_icrc",), combine={"bad_icrc": Combine(())})
def bad_icrc(packets: pd.DataFrame) -> pd.DataFrame:
    """Frames whose ICRC does not match (corrupted or rewritten in flight)."""
    if "icrc_status" not in packets.columns:
        return pd.DataFrame({"frame": np.zeros(0, np.int64)})
    bad = np.flatnonzero(category_in(packets["icrc_status"], ("bad",)))
    return pd.DataFrame({"frame": packets["frame"].to_numpy()[bad].astype(np.int64)})


@stage(
    PARTITION,
    ("packets", "pp", "model", "conv", "flows", "streamed"),
    ("report_packets",),
    combine={"report_packets": Combine(("flow_id",))},
)
def report_packets(
    packets: pd.DataFrame,
    pp: Prepared,
    model: flows.FlowModel,
    conv: connection.Conversations,
    flow_df: pd.DataFrame,
    streamed: bool,
) -> pd.DataFrame:
    """A streamed partition's packets the report draws (report_sample.py), with the
    analysis' columns; none in memory, where the Analysis keeps every packet."""
    rows = report_sample.sample_rows(pp, model, conv, flow_df) if streamed else np.zeros(0, int)
    kept = [c for c in report_sample.REPORT_COLUMNS if c in packets.columns]
    return packets_out(packets[kept], pp, model, conv, None, rows)


# --- reduce: the partitions' tables joined (combine.py), then capture-wide analyses ---


@stage(REDUCE, ("shared",), ("pfc_pauses",))
def pfc_runs(shared: Shared) -> pd.DataFrame:
    return pfc.pause_runs(shared.pfc)


@stage(REDUCE, ("cnps", "flows"), ("low_class_cnps",))
def cnp_classes(cnps: pd.DataFrame, flow_df: pd.DataFrame) -> pd.DataFrame:
    return qos.cnp_class_audit(cnps, flow_df)


@stage(REDUCE, ("flows",), ("sports",))
def ecmp_entropy(flow_df: pd.DataFrame) -> pd.DataFrame:
    return qos.sport_entropy(flow_df)


@stage(REDUCE, ("capture", "packets"), ("capture_facts",))
def facts(capture: Any, packets: pd.DataFrame | None) -> dict[str, Any]:
    return capture_facts(capture, packets)


@stage(
    REDUCE,
    ("flows", "retransmissions", "naks", "cnps", "pfc_pauses", "low_class_cnps", "sports",
     "bad_icrc", "capture_facts", "capture_gaps", "anomalies", "shared"),
    ("findings",),
)  # fmt: skip
def finding_rows(
    flow_df: pd.DataFrame,
    eps: pd.DataFrame,
    nak_rows: pd.DataFrame,
    cnps: pd.DataFrame,
    runs: pd.DataFrame,
    low: pd.DataFrame,
    sports: pd.DataFrame,
    bad: pd.DataFrame,
    info: dict[str, Any],
    gaps: pd.DataFrame,
    named: pd.DataFrame,
    shared: Shared,
) -> pd.DataFrame:
    """The findings, with advice (findings.py); PFC frames for the pause findings."""
    tables = findings.Tables(
        flows=flow_df,
        retransmissions=eps,
        naks=nak_rows,
        cnps=cnps,
        pfc_runs=runs,
        low_class_cnps=low,
        sports=sports,
        bad_icrc_frames=bad["frame"].astype(int).tolist(),
        capture=info,
        capture_gaps=gaps,
        anomalies=named,
        pfc=shared.pfc,
    )
    return findings.build_findings(tables)


# --- helpers ---


def clock_sample(head: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The columns the clock is measured on (ts, source, destination, wire length) of the
    capture's first records, as the analysis reads them (prepared.py: only RoCE frames
    have a source)."""
    pp = prepare(head)
    return pp.ts, pp.src, pp.dst, pp.wire_len


def clock_totals(packets: pd.DataFrame) -> tolerances.ClockTotals:
    """ClockTotals of every record; per file for a capture of several (a step back from one
    file's record to another's is an offset between their clocks, not jitter)."""
    ts, wire = packets["ts_ns"].to_numpy(np.int64), packets["wire_len"].to_numpy()
    if "file" not in packets.columns:
        return tolerances.ClockTotals.of(ts, wire)
    codes = np.asarray(packets["file"].array.codes)
    totals = tolerances.ClockTotals()
    for f in np.unique(codes):
        rows = np.flatnonzero(codes == f)
        totals = totals.join(tolerances.ClockTotals.of(ts[rows], wire[rows]), adjacent=False)
    return totals


def declared_resolution(capture: Any, options: dict[str, Any]) -> int | None:
    """The timestamp resolution the capture file declares (or the caller says)."""
    given = options.get("ts_resolution_ns") or getattr(capture, "ts_resolution_ns", None)
    return int(given) if given else None


def host_pairs(model: flows.FlowModel) -> np.ndarray:
    """Per flow, a code of its (source, destination) host pair."""
    if len(model) == 0:
        return np.zeros(0, np.int64)
    return pd.factorize(model.src.astype(np.int64) << 32 | model.dst)[0].astype(np.int64)


def _rnr_timers(nak_rows: pd.DataFrame, n: int) -> np.ndarray:
    """Per flow, the timer of the last RNR NAK about it (NaN when none)."""
    timers = np.full(n, np.nan)
    rnr = np.flatnonzero((nak_rows["kind"] == "rnr") & nak_rows["flow_id"].notna())
    if len(rnr):
        flow = nak_rows["flow_id"].to_numpy(np.int64, na_value=-1)[rnr][::-1]
        _, last = np.unique(flow, return_index=True)  # first of the reversed rows: the last
        timers[flow[last]] = nak_rows["rnr_timer_us"].to_numpy()[rnr][::-1][last]
    return timers
