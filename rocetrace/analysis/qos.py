"""QoS audit: the DSCP / PCP / ECN each flow uses, the class CNPs travel in, and UDP
source-port entropy per host pair (many QPs on one source port hash onto one ECMP path).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from rocetrace.analysis.flows import GSI_QP, FlowModel, majority
from rocetrace.analysis.prepared import REQUEST, Prepared


def qos_per_flow(pp: Prepared, model: FlowModel) -> pd.DataFrame:
    """Per flow: its usual DSCP, PCP and UDP source port, and whether it is ECN-capable
    (no packet of it, CNPs aside, sent with ECN 00)."""
    n = len(model)
    out = pd.DataFrame(index=pd.RangeIndex(n))
    out["udp_sport"] = model.sport
    out["dscp"] = majority(model.flow_id, model.order, pp.dscp)
    out["vlan_pcp"] = majority(model.flow_id, model.order, pp.pcp)
    not_capable = model.ecn[:, 0]
    out["ecn_not_capable_packets"] = not_capable
    out["ecn_capable"] = not_capable == 0
    out["requests"] = model.kinds[:, REQUEST]
    return out


def sport_entropy(flows: pd.DataFrame) -> pd.DataFrame:
    """Per host pair (direction): QPs, distinct UDP source ports, QPs sharing a port."""
    data = flows[(flows["requests"] > 0) & (flows["dest_qp"] != GSI_QP) & (flows["udp_sport"] >= 0)]
    cols = ["src_ip", "dst_ip", "qps", "distinct_sports", "colliding_qps", "busiest_sport"]
    if data.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    counts: Any = data.groupby(["src_ip", "dst_ip", "udp_sport"], observed=True).size()
    per_port: Any = counts.rename("qps_on_port").reset_index()
    g = per_port.groupby(["src_ip", "dst_ip"], observed=True)["qps_on_port"]
    out = pd.DataFrame({"qps": g.sum(), "distinct_sports": g.size()})
    shared = per_port[per_port["qps_on_port"] > 1].groupby(["src_ip", "dst_ip"], observed=True)
    out["colliding_qps"] = shared["qps_on_port"].sum().reindex(out.index).fillna(0).astype(int)
    top = per_port.sort_values("qps_on_port", ascending=False).drop_duplicates(["src_ip", "dst_ip"])
    out["busiest_sport"] = top.set_index(["src_ip", "dst_ip"])["udp_sport"].reindex(out.index)
    return out.reset_index()[cols]


def cnp_class_audit(cnps: pd.DataFrame, flows: pd.DataFrame) -> pd.DataFrame:
    """CNPs whose class is not above the data they throttle (PCP when both are tagged,
    DSCP otherwise)."""
    known = cnps[cnps["flow_id"].notna()]
    data = flows.set_index("flow_id").loc[known["flow_id"].astype(int), ["dscp", "vlan_pcp"]]
    data_dscp, data_pcp = data["dscp"].to_numpy(), data["vlan_pcp"].to_numpy()
    tagged = (known["vlan_pcp"].to_numpy() >= 0) & (data_pcp >= 0)
    low = np.where(
        tagged,
        known["vlan_pcp"].to_numpy() <= data_pcp,
        known["dscp"].to_numpy() <= data_dscp,
    )
    return known[low & (data_dscp >= 0)]
