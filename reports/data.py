"""Reading the analysis tables the way the report needs them: plain numpy, seconds, ordering.

Why in one place: the tables use nullable Arrow/extension dtypes and their producers may add
or omit optional columns; every figure and table goes through these helpers instead of
guessing on its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.report_sample import eventful
from rocetrace.analysis.result import Analysis
from rocetrace.dissectors.opcodes import OPCODES, Operation
from rocetrace.flowkey import flow_keys as rocetrace_flow_keys
from rocetrace.schema import ROCE_ENCAPS

SEVERITY_RANK = {"critical": 0, "warning": 1, "info": 2}
ACK_OPCODE = np.zeros(256, dtype=bool)
READ_REQUEST_OPCODE = np.zeros(256, dtype=bool)
for _code, _op in OPCODES.items():
    ACK_OPCODE[_code] = _op.operation in (Operation.ACK, Operation.ATOMIC_ACK)
    READ_REQUEST_OPCODE[_code] = _op.operation is Operation.READ_REQUEST


def ints(values: Any, missing: int = -1) -> np.ndarray:
    """Any integer-like column (nullable, Arrow, float with NaN) as int64, nulls -> missing."""
    s = pd.Series(values)
    if len(s) == 0:
        return np.zeros(0, dtype=np.int64)
    if s.dtype == object or isinstance(s.dtype, pd.CategoricalDtype):
        s = pd.to_numeric(s.astype(object), errors="coerce")
    if s.dtype.kind == "f":
        s = s.round()
    return s.astype("Int64").to_numpy(dtype=np.int64, na_value=missing)


def bools(values: Any) -> np.ndarray:
    """A boolean-like column as bool, nulls -> False."""
    s = pd.Series(values)
    return s.fillna(False).to_numpy(dtype=bool) if len(s) else np.zeros(0, dtype=bool)


def seconds(value: Any) -> float | None:
    """A timestamp from the tables (epoch seconds, or nanoseconds) as epoch seconds."""
    if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
        return None
    v = float(value)
    return v / 1e9 if abs(v) > 1e14 else v


def _roce_rows(packets: pd.DataFrame) -> np.ndarray:
    """Rows of RoCE frames (requests, responses, CNPs): by encapsulation, else by flow."""
    if "encap" in packets:
        encap = packets["encap"].astype(object).to_numpy()
        return np.flatnonzero(np.isin(encap, ROCE_ENCAPS))
    if "flow_id" in packets:
        return np.flatnonzero(packets["flow_id"].notna().to_numpy(bool))
    return np.arange(len(packets))


def time_origin_ns(analysis: Analysis) -> int:
    """Time zero of every graph: the first RoCE frame (a capture often starts with other
    traffic; every time in the report is counted from here)."""
    packets = analysis.packets
    if "ts_ns" in packets and len(packets):
        rows = _roce_rows(packets)
        ts = packets["ts_ns"].to_numpy(np.int64, na_value=0)
        return int(ts[rows].min() if len(rows) else ts.min())
    cap = analysis.capture
    first = seconds(getattr(cap, "first_ts_ns", None) or getattr(cap, "first_ts", None))
    return int(first * 1e9) if first is not None else 0


def rel_ms(ts_ns: Any, origin_ns: int) -> np.ndarray:
    """Nanosecond timestamps as milliseconds since the first RoCE frame."""
    return (ints(ts_ns, missing=origin_ns) - origin_ns) / 1e6


def flow_keys(flows: pd.DataFrame) -> pd.Series:
    """Key string per flow ("src_ip>dst_ip/0xQP", as the findings name flows), by flow_id."""
    if flows.empty:
        return pd.Series(dtype=str)
    keys = rocetrace_flow_keys(flows["src_ip"], flows["dst_ip"], ints(flows["dest_qp"]))
    return pd.Series(keys, index=ints(flows["flow_id"]))


def sorted_findings(findings: pd.DataFrame) -> pd.DataFrame:
    """Findings most severe first, then earliest first."""
    if findings.empty:
        return findings
    rank = findings["severity"].map(SEVERITY_RANK).fillna(3)
    first = pd.to_numeric(findings["first_ts"], errors="coerce").fillna(np.inf)
    order = np.lexsort((first.to_numpy(), rank.to_numpy()))
    return findings.iloc[order].reset_index(drop=True)


def data_flows(flows: pd.DataFrame, packets: pd.DataFrame) -> pd.DataFrame:
    """Flows that carry requests or responses (not only ACKs), most eventful first; none
    without packets (a report from a JSON summary has no graphs)."""
    if flows.empty or packets.empty or "opcode" not in packets:
        return flows.iloc[0:0]
    has_flow = packets["flow_id"].notna()
    opcode = ints(packets.loc[has_flow, "opcode"], missing=0) & 0xFF
    not_ack = pd.Series(~ACK_OPCODE[opcode], index=packets.index[has_flow])
    carries = not_ack.groupby(ints(packets.loc[has_flow, "flow_id"])).any()
    fid = ints(flows["flow_id"])
    keep = pd.Series(fid).map(carries).fillna(False).to_numpy(dtype=bool)
    out = flows[keep].copy()
    out["_score"] = eventful(out)  # the ranking a streamed analysis keeps packets by
    return out.sort_values("_score", ascending=False, kind="stable").drop(columns="_score")


@dataclass(frozen=True)
class PacketArrays:
    """The packet columns the figures draw, as numpy, extracted once per report."""

    frame: np.ndarray
    ms: np.ndarray  # milliseconds since the first RoCE frame
    flow_id: np.ndarray  # -1 when not in a flow
    psn: np.ndarray
    opcode: np.ndarray  # 0..255, -1 when absent
    syndrome: np.ndarray  # AETH syndrome, -1 when absent
    wire_len: np.ndarray
    retransmitted: np.ndarray
    ce: np.ndarray
    gap: np.ndarray  # PSNs the analysis found skipped right before the frame (psn_gap > 0)

    @classmethod
    def of(cls, packets: pd.DataFrame, origin_ns: int) -> PacketArrays:
        def col(name: str, missing: int = -1) -> np.ndarray:
            if name in packets:
                return ints(packets[name], missing)
            return np.full(len(packets), missing, dtype=np.int64)

        def flag(name: str) -> np.ndarray:
            return bools(packets[name]) if name in packets else np.zeros(len(packets), bool)

        ce = flag("ce") if "ce" in packets else col("ecn") == 3
        return cls(
            frame=col("frame"),
            ms=rel_ms(packets["ts_ns"], origin_ns),
            flow_id=col("flow_id"),
            psn=col("psn", 0),
            opcode=col("opcode"),
            syndrome=col("aeth_syndrome"),
            wire_len=col("wire_len", 0),
            retransmitted=flag("retransmitted"),
            ce=ce,
            gap=col("psn_gap", 0) > 0,
        )

    def rows_of(self, flow_id: int) -> np.ndarray:
        """Row numbers of one flow's frames, in capture order."""
        return np.flatnonzero(self.flow_id == flow_id)
