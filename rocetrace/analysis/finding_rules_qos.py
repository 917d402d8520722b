"""Finding rules for congestion and QoS: congestion signals, incast, CNPs without marks or
in a low class, traffic that switches cannot mark, QPs sharing a UDP source port."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rocetrace.analysis.advice import plural
from rocetrace.analysis.finding_rules_loss import _flow_groups, _obs
from rocetrace.analysis.flows import GSI_QP

if TYPE_CHECKING:
    from rocetrace.analysis.findings import Observation, Tables

INCAST_SENDERS = 3  # hosts sending to one receiver at the same time, congestion signalled


def _data_rows(flows: pd.DataFrame) -> np.ndarray:
    """Rows of flows carrying requests (not the CM's QP1)."""
    data = (flows["requests"].to_numpy() > 0) & (flows["dest_qp"].to_numpy() != GSI_QP)
    return np.flatnonzero(data)


def _congestion(t: Tables) -> Iterator[Observation]:
    f = t.flows
    ce, cnps = f["ecn_ce_packets"].to_numpy(np.int64), f["cnps"].to_numpy(np.int64)
    for row in np.flatnonzero((ce > 0) | (cnps > 0)):
        detail = f"{plural(int(ce[row]), 'CE-marked packet')}, {plural(int(cnps[row]), 'CNP')}"
        first = int(f["first_ts_ns"].iloc[row])
        fid = int(f["flow_id"].iloc[row])
        frames = t.cnps["frame"][t.cnps["flow_id"] == fid].tolist() if len(t.cnps) else []
        facts = {"ce": int(ce[row]), "cnps": int(cnps[row])}
        n = int(ce[row] + cnps[row])
        yield _obs("congestion", n, detail, first, frames, fid, facts)


def _most_at_once(first: np.ndarray, last: np.ndarray) -> int:
    """The most intervals [first, last] open at one instant."""
    edges = np.concatenate([np.stack([first, np.ones_like(first)], 1),
                            np.stack([last, -np.ones_like(last)], 1)])  # fmt: skip
    edges = edges[np.lexsort((-edges[:, 1], edges[:, 0]))]  # opens before closes at a tie
    return int(np.cumsum(edges[:, 1]).max(initial=0))


def _incast(t: Tables) -> Iterator[Observation]:
    """Per receiver: senders active at once while congestion was signalled on their flows."""
    f = t.flows.iloc[_data_rows(t.flows)]
    if f.empty:
        return
    signalled = (f["ecn_ce_packets"].to_numpy() > 0) | (f["cnps"].to_numpy() > 0)
    for dst, g in f[signalled].groupby(f["dst_ip"].astype(str)[signalled]):
        by_host = g.groupby(g["src_ip"].astype(str))
        first, last = by_host["first_ts_ns"].min(), by_host["last_ts_ns"].max()
        senders = _most_at_once(first.to_numpy(np.int64), last.to_numpy(np.int64))
        if senders < INCAST_SENDERS:
            continue
        start = int(g["first_ts_ns"].min())
        for fid in g["flow_id"].to_numpy(np.int64):
            yield _obs("incast", 0, "", start, [], int(fid))
        facts = {"receiver": dst, "senders": senders}  # the headline says it all
        yield _obs("incast", senders, "", start, [], facts=facts)


def _unmarked_cnps(t: Tables) -> Iterator[Observation]:
    if t.cnps.empty:
        return
    unmarked = t.cnps[~t.cnps["ce_before"].to_numpy(bool)]
    for fid, g in _flow_groups(unmarked):
        detail = f"{plural(len(g), 'CNP')} with no CE-marked packet since the previous one"
        yield _obs("cnp_without_ce", len(g), detail, g["ts_ns"].min(), g["frame"].tolist(), fid)


def _not_ecn_capable(t: Tables) -> Iterator[Observation]:
    f = t.flows
    for row in _data_rows(f):
        if bool(f["ecn_capable"].iloc[row]):
            continue
        dscp = int(f["dscp"].iloc[row])
        n = int(f["ecn_not_capable_packets"].iloc[row])
        detail = f"in DSCP {dscp}"
        fid, first = int(f["flow_id"].iloc[row]), int(f["first_ts_ns"].iloc[row])
        yield _obs("ecn_not_capable", n, detail, first, [], fid, {"dscp": dscp})


def _class(dscp: Any, pcp: Any) -> str:
    return f"DSCP {int(dscp)}" + (f" / PCP {int(pcp)}" if int(pcp) >= 0 else " (untagged)")


def _low_class_cnps(t: Tables) -> Iterator[Observation]:
    for fid, g in _flow_groups(t.low_class_cnps):
        f = t.flows.iloc[fid]
        detail = (
            f"{plural(len(g), 'CNP')} in {_class(g['dscp'].iloc[0], g['vlan_pcp'].iloc[0])}, not "
            f"above the data they throttle ({_class(f['dscp'], f['vlan_pcp'])})"
        )
        frames = g["frame"].tolist()
        yield _obs("cnp_priority", len(g), detail, g["ts_ns"].min(), frames, fid)


def _sport_collisions(t: Tables) -> Iterator[Observation]:
    f = t.flows.iloc[_data_rows(t.flows)]
    f = f[f["udp_sport"].to_numpy() >= 0]
    shared = f.duplicated(["src_ip", "dst_ip", "udp_sport"], keep=False).to_numpy(bool)
    for row in np.flatnonzero(shared):
        port = int(f["udp_sport"].iloc[row])
        fid, first = int(f["flow_id"].iloc[row]), int(f["first_ts_ns"].iloc[row])
        detail = f"UDP source port {port} shared with other QPs of its host pair"
        yield _obs("udp_sport_collision", 1, detail, first, [], fid)


def observations(t: Tables) -> Iterator[Observation]:
    yield from _incast(t)
    yield from _congestion(t)
    yield from _unmarked_cnps(t)
    yield from _not_ecn_capable(t)
    yield from _low_class_cnps(t)
    yield from _sport_collisions(t)
