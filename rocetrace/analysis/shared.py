"""What every partition of a capture is given: the capture-wide facts it cannot see alone.

A partition holds the connections of some IP pairs; the clock, the link's PFC pauses, the
CM connections and the capture's end are the capture's. Two more are known only once the
partitions ran (assumptions.py): the NIC context of the episodes and the MTU a READ falls
back on; a partition first assumes its own, the reduce step checks, and a partition whose
assumption was not the capture's runs again with the capture's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import pandas as pd

from rocetrace.analysis.nic_context import NicContext
from rocetrace.analysis.pfc import PauseWindows
from rocetrace.analysis.prepared import ROCE_ENCAPS, category_in
from rocetrace.analysis.tolerances import Tolerances
from rocetrace.capture.damage import damage_facts


@dataclass(frozen=True)
class Shared:
    """The capture-wide inputs of a partition's analysis."""

    tolerances: Tolerances
    pfc: pd.DataFrame  # the PFC table (pfc.PFC_COLUMNS): pauses are link-wide
    connections: pd.DataFrame  # the CM connections (cm.CONNECTION_DTYPES)
    end_ns: int | None  # the capture's latest timestamp
    link_speed_bps: float = 100e9
    mtu: int | None = None  # the MTU a READ with no MTU of its own takes; None: the partition's
    nic: NicContext | None = None  # the capture's NIC context; None: the partition's own

    @cached_property
    def windows(self) -> PauseWindows:
        return PauseWindows(self.pfc)

    def given(self, mtu: int | None, nic: NicContext | None) -> Shared:
        """These facts with the capture's MTU fallback and NIC context."""
        return replace(self, mtu=mtu, nic=nic)


def _table_facts(packets: pd.DataFrame) -> dict[str, Callable[[], Any]]:
    """How to count each capture fact from the table itself (only when CaptureInfo lacks it)."""
    roce = lambda: category_in(packets["encap"], ROCE_ENCAPS)  # noqa: E731
    ts = packets["ts_ns"]
    return {
        "packets": lambda: len(packets),
        "roce_packets": lambda: int(roce().sum()),
        "non_roce_packets": lambda: int((~roce()).sum()),
        "malformed_packets": lambda: (
            int(packets["anomaly"].notna().sum()) if "anomaly" in packets else 0
        ),
        "truncated_packets": lambda: int((packets["cap_len"] < packets["wire_len"]).sum()),
        "incomplete_tail": lambda: False,
        "first_ts": lambda: float(ts.min()) / 1e9 if len(ts) else None,
        "last_ts": lambda: float(ts.max()) / 1e9 if len(ts) else None,
    }


def capture_facts(capture: Any, packets: pd.DataFrame | None) -> dict[str, Any]:
    """The summary's capture object, from CaptureInfo or, without one, from the table; with
    the file's damage: anomalies per reason, corrupt records skipped (capture.damage)."""
    if capture is None:
        assert packets is not None, "a capture without CaptureInfo is analysed in memory"
        table = _table_facts(packets)
        return {key: count() for key, count in table.items()} | damage_facts(None, packets)
    facts: dict[str, Any] = {}
    counted = ("packets", "roce_packets", "non_roce_packets", "malformed_packets")
    for key in (*counted, "truncated_packets"):
        facts[key] = int(getattr(capture, key)) if hasattr(capture, key) else _count(packets, key)
    facts["incomplete_tail"] = bool(getattr(capture, "incomplete_tail", False))
    for key in ("first_ts", "last_ts"):
        ns = getattr(capture, f"{key}_ns", None)
        facts[key] = float(ns) / 1e9 if ns is not None else _count(packets, key)
    return facts | damage_facts(capture, packets)


def _count(packets: pd.DataFrame | None, key: str) -> Any:
    if packets is None:
        return None
    return _table_facts(packets)[key]()
