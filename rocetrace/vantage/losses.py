"""Where packets were lost, and how each segment of each flow's path behaved: the loss,
segment and segment-total tables (declared in rocetrace.schema.vantage_columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.schema.vantage_columns import LOSSES, SEGMENT_TOTALS, SEGMENTS
from rocetrace.vantage.paths import overtaken
from rocetrace.vantage.vantage_tables import Built, typed


def resent_later(merged: pd.DataFrame) -> np.ndarray:
    """Per merged row, whether its flow sent the same PSN again in a later row (RC recovers
    every lost request by a resend; a packet a capture only missed needs none, though a
    go-back-N may resend it anyway). Rows, not timestamps: a microsecond clock gives a
    packet and its resend one stamp."""
    keys = ["src_ip", "dst_ip", "dest_qp", "psn"]
    key = merged.groupby(keys, observed=True, sort=False, dropna=False).ngroup().to_numpy()
    last = pd.Series(np.arange(len(merged))).groupby(key).transform("max").to_numpy()
    return (np.arange(len(merged)) < last) & merged["psn"].notna().to_numpy()


def loss_table(b: Built, lost: pd.DataFrame, merged: pd.DataFrame) -> pd.DataFrame:
    """LOSSES: one row per packet lost between two vantages, in time order (ties by
    merged row: the order does not depend on how packets were numbered, per partition or
    not)."""
    at = b.row_of[lost["packet"].to_numpy()]
    by = np.lexsort((at, lost["t"].to_numpy()))
    lost, at = lost.iloc[by], at[by]
    m = merged.iloc[at]
    names = np.array(b.names, dtype=object)
    files, _, frames = b.located(lost["sighting"].to_numpy())
    data = {
        "packet": at + 1,
        "flow_id": m["flow_id"].to_numpy(),
        "src_ip": m["src_ip"].astype(str),
        "dst_ip": m["dst_ip"].astype(str),
        "dest_qp": m["dest_qp"].to_numpy(np.int64),
        "psn": m["psn"].to_numpy(np.int64),
        "opcode_name": m["opcode_name"].astype(str),
        "last_seen_at": names[lost["from_v"].to_numpy(np.int64)],
        "missing_at": names[lost["to_v"].to_numpy(np.int64)],
        "ts_ns": lost["t"].to_numpy(),
        "file": files,
        "frame": frames,
        "resent": resent_later(merged)[at],
    }
    return typed(
        {
            k: np.asarray(v) if not isinstance(v, pd.Series) else v.to_numpy()
            for k, v in data.items()
        },
        LOSSES,
    )


def hops(order: pd.DataFrame) -> pd.DataFrame:
    """Per direction, each vantage paired with every vantage at the next position."""
    o = order.assign(rank=order.groupby(["src", "dst"])["position"].rank(method="dense"))
    nxt = o.assign(rank=o["rank"] - 1)
    pairs = o.merge(nxt, on=["src", "dst", "rank"], suffixes=("_from", "_to"))
    return pairs.rename(columns={"vantage_from": "from_v", "vantage_to": "to_v"})[
        ["src", "dst", "from_v", "to_v"]
    ]


def crossings(along: pd.DataFrame, order: pd.DataFrame, flow: np.ndarray) -> pd.DataFrame:
    """Per packet and hop it crossed (seen at both ends): flow, delay, sighting rows."""
    seen = along[along["seen"]][["packet", "src", "dst", "vantage", "t", "sighting"]]
    a = seen.merge(
        hops(order), left_on=["src", "dst", "vantage"], right_on=["src", "dst", "from_v"]
    )
    both = a.merge(
        seen[["packet", "vantage", "t", "sighting"]],
        left_on=["packet", "to_v"],
        right_on=["packet", "vantage"],
        suffixes=("_from", "_to"),
    )
    return pd.DataFrame(
        {
            "packet": both["packet"].to_numpy(),
            "flow": flow[both["packet"].to_numpy()],
            "from_v": both["from_v"].to_numpy(),
            "to_v": both["to_v"].to_numpy(),
            "delay": (both["t_to"] - both["t_from"]).to_numpy(),
            "row_from": both["sighting_from"].to_numpy(),
            "row_to": both["sighting_to"].to_numpy(),
        }
    )


def _stats(x: pd.DataFrame, lost: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per group: crossings, losses, delay quantiles, reordered packets (x: crossings with
    `late`, whether a later packet of the flow overtook it on the hop)."""
    g = x.groupby(by)
    out = pd.DataFrame(
        {
            "crossed": g.size(),
            "delay_min_ns": g["delay"].min(),
            "delay_p50_ns": g["delay"].quantile(0.5),
            "delay_p99_ns": g["delay"].quantile(0.99),
            "delay_max_ns": g["delay"].max(),
            "reordered": g["late"].sum(),
        }
    )
    losses = lost.groupby(by).size().rename("losses")
    out = out.join(losses, how="outer").fillna({"crossed": 0, "losses": 0, "reordered": 0})
    return out.assign(packets=out["crossed"] + out["losses"]).reset_index()


def _flows(merged: pd.DataFrame) -> np.ndarray:
    """Per merged row, a code of its flow: (src, dst, dest QP, flow id), so packets outside
    the analysis' flows (CNPs) keep a flow of their own."""
    keys = ["src_ip", "dst_ip", "dest_qp", "flow_id"]
    return merged.groupby(keys, observed=True, sort=False, dropna=False).ngroup().to_numpy()


def segment_tables(
    b: Built, along: pd.DataFrame, order: pd.DataFrame, lost: pd.DataFrame, merged: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SEGMENTS per flow and hop, and SEGMENT_TOTALS per hop over every flow."""
    names = np.array(b.names, dtype=object)
    code = _flows(merged)
    flow = code[b.row_of]  # per packet id
    x = crossings(along, order, flow)
    x = x.assign(late=overtaken(x, ["flow", "from_v", "to_v"]))
    lost = lost.assign(flow=flow[lost["packet"].to_numpy()])
    per = _stats(x, lost, ["flow", "from_v", "to_v"])
    first = pd.Series(np.arange(len(code))).groupby(code).first()
    m = merged.iloc[first.reindex(per["flow"]).to_numpy()]
    data = {
        "flow_id": m["flow_id"].to_numpy(),
        "src_ip": m["src_ip"].astype(str).to_numpy(),
        "dst_ip": m["dst_ip"].astype(str).to_numpy(),
        "dest_qp": m["dest_qp"].to_numpy(np.int64),
        "from_vantage": names[per["from_v"].to_numpy(np.int64)],
        "to_vantage": names[per["to_v"].to_numpy(np.int64)],
        **{k: per[k].to_numpy() for k in SEGMENTS.names if k in per},
    }
    tot = _stats(x, lost, ["from_v", "to_v"])
    flows = x.groupby(["from_v", "to_v"])["flow"].nunique().rename("flows")
    tot = tot.merge(flows.reset_index(), on=["from_v", "to_v"], how="left").fillna({"flows": 0})
    totals = {
        "from_vantage": names[tot["from_v"].to_numpy(np.int64)],
        "to_vantage": names[tot["to_v"].to_numpy(np.int64)],
        **{k: tot[k].to_numpy() for k in SEGMENT_TOTALS.names if k in tot},
    }
    return typed(data, SEGMENTS), typed(totals, SEGMENT_TOTALS)
