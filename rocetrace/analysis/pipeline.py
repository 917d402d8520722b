"""The analysis pipeline: capture-wide facts -> partitions -> reduce -> Analysis.

Partition, then reduce, is the only way work is split: in memory the whole capture is one
partition; streamed (rocetrace.scale) it is many, analysed alone (in Dask tasks) with the
same stages and joined by the same reduce. What runs where is declared once, in the
registry (registry.py, stages.py); this module only assembles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis import flows, stages
from rocetrace.analysis.assumptions import Assumed, capture_values, stale
from rocetrace.analysis.combine import ORDER, CaptureOrder, combine, keyed
from rocetrace.analysis.finish import finished
from rocetrace.analysis.packet_columns import packets_out
from rocetrace.analysis.prepared import Prepared
from rocetrace.analysis.registry import (
    CAPTURE,
    PARTITION,
    REDUCE,
    check_registry,
    partition_tables,
    run_scope,
)
from rocetrace.analysis.report_sample import reduced_sample, with_sample
from rocetrace.analysis.result import Analysis
from rocetrace.analysis.shared import Shared

Progress = Callable[[str], None]

_PROBLEMS = check_registry()
if _PROBLEMS:
    raise ImportError("rocetrace.analysis.stages: " + "; ".join(_PROBLEMS))


@dataclass
class PartitionResult:
    """What one partition hands to the reduce step: its tables (registry.partition_tables,
    keyed by capture order unless it is the whole capture) and what it assumed."""

    tables: dict[str, pd.DataFrame]
    assumed: Assumed
    packets: pd.DataFrame | None = None  # the packet table with flow ids (in memory only)


def shared_facts(
    packets: pd.DataFrame,
    capture: Any,
    mads: pd.DataFrame | None,
    options: dict[str, Any],
) -> Shared:
    """The capture scope of the registry on a whole packet table (in memory)."""
    ws = run_scope(
        CAPTURE, {"packets": packets, "capture": capture, "mads": mads, "options": options}
    )
    return Shared(
        ws["tolerances"], ws["pfc"], ws["connections"], ws["end_ns"], options["link_speed_bps"]
    )


def analyze_partition(
    packets: pd.DataFrame,
    shared: Shared,
    order: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    progress: Progress | None = None,
    keep_packets: bool = False,
) -> PartitionResult:
    """The partition scope on one partition's rows (in capture order). `order`: each row's
    capture-order keys (combine.py), None when the partition is the whole capture."""
    inputs = {"packets": packets, "shared": shared, "streamed": order is not None}
    ws = run_scope(PARTITION, inputs, progress)
    tables = {name: ws[name] for name in partition_tables()}
    if order is not None:
        tables = _keyed(tables, ws["pp"], ws["model"], CaptureOrder.of(ws["pp"].frame, *order))
    result = PartitionResult(tables, _assumed(ws, shared))
    if keep_packets:
        result.packets = _packets_with_columns(packets, ws)
    return result


def _packets_with_columns(packets: pd.DataFrame, ws: dict[str, Any]) -> pd.DataFrame:
    """packets_out, with the partition's workspace let go of first but for what it reads:
    adding the packet table's columns is the in-memory analysis' peak, and by then the
    events' times, PSNs and links, the read spans and the like are used (~30 MB at 1M
    frames, whose heap the new columns reuse). `ws` is emptied."""
    pp, model, row_of_episode = ws["pp"], ws["model"], ws["row_of_episode"]
    c, none = ws["conv"], np.zeros(0, np.int64)
    marks = dataclasses.replace(c, conv=none, ts=none, kind=none, ext=none, link=none)
    ws.clear()
    del c
    return packets_out(packets, pp, model, marks, row_of_episode)


def _assumed(ws: dict[str, Any], shared: Shared) -> Assumed:
    model, eps = ws["model"], ws["retransmissions"]
    hosts = frozenset(eps["src_ip"].astype(str)) if len(eps) else frozenset()
    given = shared.mtu is not None and shared.nic is not None
    mtu = int(model.mtu.max(initial=0))
    return Assumed(mtu, ws["span"].unsized, ws["nic_seen"], hosts, given)


def _keyed(
    tables: dict[str, pd.DataFrame], pp: Prepared, model: flows.FlowModel, order: CaptureOrder
) -> dict[str, pd.DataFrame]:
    """The partition's tables with capture-order keys (flows: of their first frame)."""
    out = {name: keyed(tables[name], how, order) for name, how in partition_tables().items()}
    first = pp.frame[model.order.first_rows()] if len(model) else np.zeros(0, np.int64)
    ts, seq = order.keys(first)
    out["flows"] = out["flows"].assign(**dict(zip(ORDER, (ts, seq), strict=True)))
    return out


def reduce_partitions(
    parts: list[PartitionResult],
    shared: Shared,
    capture: Any,
    options: dict[str, Any],
    *,
    packets: pd.DataFrame | None = None,
    kept: pd.DataFrame | None = None,
    rerun: Callable[[int, Shared], PartitionResult] | None = None,
    progress: Progress | None = None,
) -> Analysis:
    """The reduce scope: the partitions joined (combine.py) after those that assumed other
    capture-wide values than the capture's ran again (`rerun(index, shared)`). `packets`:
    the whole packet table when it is in memory; `kept`: the packets the Analysis keeps
    when it is not the one partition's (a streamed analysis keeps its link-level frames and
    the frames the report draws)."""
    mtu, nic = capture_values([p.assumed for p in parts])
    if len(parts) > 1:
        for i, p in enumerate(parts):
            if stale(p.assumed, mtu, nic):
                assert rerun is not None, "partitions that may be stale need a way to rerun"
                parts[i] = rerun(i, shared.given(mtu, nic))
    whole = len(parts) == 1 and ORDER[0] not in parts[0].tables["flows"]
    tables = parts[0].tables if whole else combine([p.tables for p in parts])
    if progress is not None:
        progress("findings")
    ws = run_scope(
        REDUCE,
        {"parts": parts, "shared": shared, "capture": capture, "packets": packets,
         "options": options, **tables},
    )  # fmt: skip
    sampled = kept is not None
    if kept is None:
        kept = parts[0].packets if len(parts) == 1 else None
    else:
        kept = with_sample(kept, reduced_sample(tables["report_packets"], ws["flows"]))
    return finished(
        Analysis(
            packets=kept if kept is not None else packets if packets is not None else _no_packets(),
            flows=ws["flows"],
            retransmissions=ws["retransmissions"],
            naks=ws["naks"],
            cnps=ws["cnps"],
            pfc=shared.pfc,
            findings=ws["findings"],
            capture=capture,
            options=options,
            tolerances=shared.tolerances,
            pfc_pauses=ws["pfc_pauses"],
            udp_sports=ws["sports"],
            capture_facts=ws["capture_facts"],
            cm_connections=shared.connections,
            anomalies=ws["anomalies"],
            packets_sampled=sampled,
        )
    )


def analyze_packets(
    packets: pd.DataFrame,
    capture: Any = None,
    *,
    link_speed_bps: float = 100e9,
    progress: Progress | None = None,
    mads: pd.DataFrame | None = None,
    **options: Any,
) -> Analysis:
    """Run every analysis on a packet table (schema: rocetrace/schema.py) in memory, as
    one partition; `mads`, the capture's CM MAD table (Capture.mads), pairs the QPs it
    connects."""
    options = {"link_speed_bps": link_speed_bps, **options}
    shared = shared_facts(packets, capture, mads, options)
    part = analyze_partition(packets, shared, progress=progress, keep_packets=True)
    return reduce_partitions([part], shared, capture, options, packets=packets, progress=progress)


def _no_packets() -> pd.DataFrame:
    """The packets of an analysis that did not keep them (streamed): no rows."""
    return pd.DataFrame({"frame": np.zeros(0, np.uint32), "ts_ns": np.zeros(0, np.int64)})


__all__ = ["PartitionResult", "analyze_packets", "analyze_partition", "reduce_partitions", "stages"]
