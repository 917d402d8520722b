"""What the vantages add to the findings: where packets were lost (per segment, with the
frames and where to look), episodes whose loss no pair of vantages brackets, captures that
missed packets, clocks that could not be aligned. And per retransmission episode, the
segment where the packet it recovered vanished."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from rocetrace import schema
from rocetrace.analysis.advice import entry, plural
from rocetrace.flowkey import flow_keys
from rocetrace.psn import PSN_MOD
from rocetrace.schema.conform import conform

LOST_COLUMNS = ("lost_after", "lost_before")  # added to the merged retransmissions table


def _finding(
    severity: str,
    code: str,
    message: str,
    ts_ns: float = np.nan,
    frames: list[int] | None = None,
    flow: str | None = None,
    flow_id: Any = None,
    count: int = 1,
) -> dict[str, Any]:
    """A finding row of the declared findings table, its title, cause and advice from
    rocetrace.analysis.advice."""
    advice = entry(code)
    return {
        "severity": severity,
        "code": code,
        "title": advice.title,
        "message": message,
        "cause": advice.text("cause", {}),
        "advice": advice.text("advice", {}),
        "flow": flow,
        "flow_id": None if flow_id is None or pd.isna(flow_id) else int(flow_id),
        "flows": [flow] if flow else [],
        "count": count,
        "first_ts": float(ts_ns) / 1e9 if ts_ns == ts_ns else None,
        "first_ts_ns": int(ts_ns) if ts_ns == ts_ns else None,
        "frames": [int(f) for f in (frames or [])][: schema.MAX_FRAMES],
    }


def _listed(values: pd.Series, most: int = 5) -> str:
    items = [str(v) for v in values.unique()[:most]]
    more = values.nunique() - len(items)
    return ", ".join(items) + (f" and {more} more" if more > 0 else "")


def _located(losses: pd.DataFrame) -> Iterator[dict[str, Any]]:
    """One finding per segment (last vantage that saw the packets -> first that did not)."""
    for (a, b), g in losses.groupby(["last_seen_at", "missing_at"], sort=False):
        keys = pd.Series(flow_keys(g["src_ip"], g["dst_ip"], g["dest_qp"]), index=g.index)
        one = keys.nunique() == 1
        requests = ~g["opcode_name"].str.contains("ACKNOWLEDGE|CNP")  # resent when lost
        unsure = int((requests & ~g["resent"]).sum())
        doubt = (
            f"; {unsure} never resent (delivered, and missed by the capture at {b}?)"
            if unsure
            else ""
        )
        where = ", ".join(
            f"{f} frame {n}" for f, n in zip(g["file"][:5], g["frame"][:5], strict=True)
        )
        msg = (
            f"{plural(len(g), 'packet')} lost between {a} and {b} on "
            f"{plural(keys.nunique(), 'flow')} "
            f"({_listed(keys, 3)}){doubt}. Last seen at {a}: {where}. Check the links and "
            f"switch ports on the way from {a} to {b} toward {_listed(g['dst_ip'], 3)} "
            f"(e.g. the switch egress port toward it): their drop counters should show them."
        )
        yield _finding(
            "warning",
            "loss_located",
            msg,
            g["ts_ns"].min(),
            g["packet"].tolist(),
            keys.iloc[0] if one else None,
            g["flow_id"].iloc[0] if one else None,
            len(g),
        )


def _vantage_rules(vantages: pd.DataFrame) -> Iterator[dict[str, Any]]:
    for k, r in enumerate(vantages.to_dict("records")):
        name, missed = str(r["name"]), int(r["missed"])
        if k > 0 and np.isnan(r["offset_uncertainty_ns"]):
            yield _finding(
                "warning",
                "clock_unaligned",
                f"{name}: no packet crossed both ways between it and an aligned "
                "vantage, so its clock offset is a guess from one-way traffic (or "
                "the capture starts); its timing and loss placement are uncertain",
            )
        if missed:
            yield _finding(
                "info",
                "vantage_missed",
                f"the capture at {name} missed {plural(missed, 'packet')} that a vantage "
                "after it on their path saw (sniffer drops, or a path around it)",
                count=missed,
            )


def episode_segments(eps: pd.DataFrame, losses: pd.DataFrame) -> pd.DataFrame:
    """The retransmissions table with LOST_COLUMNS: per episode, the segment where the
    latest packet lost before it among the PSNs it resent vanished (a timeout resends from
    the first unacknowledged PSN, not from the lost one); null when none was located."""
    after, before = np.full(len(eps), None, object), np.full(len(eps), None, object)
    known = losses[losses["flow_id"].notna()]
    if len(eps) and len(known):
        left = pd.DataFrame({
            "at": np.arange(len(eps)), "t": eps["ts_ns"].to_numpy(np.int64),
            "flow_id": eps["flow_id"].to_numpy(dtype=np.float64, na_value=-1).astype(np.int64),
            "start": eps["start_psn"].to_numpy(np.int64),
            "span": (eps["last_psn"].to_numpy(np.int64) - eps["start_psn"].to_numpy(np.int64))
            % PSN_MOD,
        })  # fmt: skip
        right = pd.DataFrame({
            "flow_id": known["flow_id"].to_numpy(dtype=np.int64), "psn": known["psn"].to_numpy(),
            "lost_t": known["ts_ns"].to_numpy(), "a": known["last_seen_at"].to_numpy(),
            "b": known["missing_at"].to_numpy(),
        })  # fmt: skip
        x = left.merge(right, on="flow_id")
        inside = ((x["psn"] - x["start"]) % PSN_MOD <= x["span"]) & (x["lost_t"] < x["t"])
        x = x[inside].sort_values(["at", "lost_t"]).drop_duplicates("at", keep="last")
        after[x["at"].to_numpy()], before[x["at"].to_numpy()] = x["a"], x["b"]
    segments = eps.assign(
        lost_after=pd.Series(after, index=eps.index, dtype=object),
        lost_before=pd.Series(before, index=eps.index, dtype=object),
    )
    return conform(segments, schema.RETRANSMISSIONS)  # the columns in their declared dtypes


def _unlocated(eps: pd.DataFrame) -> Iterator[dict[str, Any]]:
    if not len(eps):
        return
    loose = eps[eps["lost_after"].isna() & (eps["trigger"] != "rnr").to_numpy(bool)]
    if len(loose):
        yield _finding(
            "info",
            "loss_unlocated",
            f"{plural(len(loose), 'retransmission episode')} resent a PSN that no two "
            "vantages saw vanish between them: lost before the first vantage that "
            "could see it or after the last, only its ACK lost, or it was late "
            "(reordered) and never lost",
            loose["ts_ns"].min(),
            loose["first_frame"].tolist(),
            count=len(loose),
        )


def with_vantage_findings(
    findings: pd.DataFrame, losses: pd.DataFrame, vantages: pd.DataFrame, eps: pd.DataFrame
) -> pd.DataFrame:
    """The merged analysis' findings and the vantages', most severe first, then by time."""
    rows = [*_located(losses), *_unlocated(eps), *_vantage_rules(vantages)]
    if not rows:
        return findings
    extra = conform(pd.DataFrame(rows), schema.FINDINGS)
    df = pd.concat([findings, extra], ignore_index=True) if len(findings) else extra
    rank = df["severity"].map({s: -i for i, s in enumerate(schema.SEVERITIES)})
    df = df.assign(_rank=rank).sort_values(["_rank", "first_ts"], kind="stable", na_position="last")
    return df.drop(columns="_rank").reset_index(drop=True)
