"""Each packet's path of sightings, and what it says: a packet seen at A and missing at B
later on its path (while B was capturing) was lost between A and B; one missing at B but
seen after B was missed by B's capture, not lost. Per flow and segment: losses, one-way
delay, reordering.

A direction's path (which vantage comes after which) is read from the packets themselves:
for each pair of vantages, the median aligned time difference of the packets both saw.
All of it is per direction of a host pair, so it runs per connection partition too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

ALONG_COLUMNS: dict[str, tuple[str, str]] = {
    "packet": ("int64", "distinct packet id"),
    "src": ("int32", "source IP code"),
    "dst": ("int32", "destination IP code"),
    "vantage": ("int16", "a vantage on the path of the packet's direction"),
    "position": ("int16", "its place on that path (0: first; equal: no order known)"),
    "seen": ("bool", "the vantage saw the packet"),
    "t": ("int64", "aligned time of the sighting (reference clock; 0 when not seen)"),
    "sighting": ("int64", "row of the sighting in the sighting table (-1 when not seen)"),
}


def on_paths(s: pd.DataFrame) -> np.ndarray:
    """Per sighting, whether it is of a packet between two hosts that may be seen elsewhere."""
    return np.asarray(s["matchable"].to_numpy() & (s["src"].to_numpy() >= 0), dtype=bool)


def matched(s: pd.DataFrame, packet: np.ndarray, aligned: np.ndarray) -> pd.DataFrame:
    """The matchable sightings of packets between hosts (a PFC frame has no path): packet,
    vantage, src, dst, aligned time t, sighting row."""
    m = on_paths(s)
    return pd.DataFrame(
        {
            "packet": packet[m],
            "vantage": s["vantage"].to_numpy()[m],
            "src": s["src"].to_numpy()[m],
            "dst": s["dst"].to_numpy()[m],
            "t": aligned[m],
            "sighting": np.flatnonzero(m),
        }
    )


def path_order(pk: pd.DataFrame) -> pd.DataFrame:
    """Per direction (src, dst) and vantage that saw some of its packets: `position`, the
    number of vantages that see that direction's packets before it (median aligned time
    difference over the packets both saw). `pk`: matchable sightings with packet, vantage,
    src, dst and aligned time t."""
    present = (
        pk.groupby(["src", "dst", "vantage"], sort=True)
        .size()
        .reset_index()[["src", "dst", "vantage"]]
    )
    before = []
    names = np.unique(pk["vantage"].to_numpy())
    for i, u in enumerate(names):
        for v in names[i + 1 :]:
            a = pk[pk["vantage"] == u][["packet", "src", "dst", "t"]]
            b = pk[pk["vantage"] == v][["packet", "t"]]
            both = a.merge(b, on="packet", suffixes=("_u", "_v"))
            med = (both["t_v"] - both["t_u"]).groupby([both["src"], both["dst"]]).median()
            med = med[med != 0].reset_index(name="d")
            med["vantage"] = np.where(med["d"] > 0, v, u)  # the later of the two
            before.append(med[["src", "dst", "vantage"]])
    later = pd.concat(before, ignore_index=True) if before else present.iloc[:0]
    count = later.groupby(["src", "dst", "vantage"]).size().rename("position")
    out = present.merge(count.reset_index(), on=["src", "dst", "vantage"], how="left")
    return out.assign(position=out["position"].fillna(0).astype(np.int16))


def along_paths(pk: pd.DataFrame, order: pd.DataFrame) -> pd.DataFrame:
    """ALONG_COLUMNS: every packet against every vantage on its direction's path."""
    first = pk.drop_duplicates("packet")[["packet", "src", "dst"]]
    grid = first.merge(order, on=["src", "dst"])
    seen = pk[["packet", "vantage", "t", "sighting"]]
    out = grid.merge(seen, on=["packet", "vantage"], how="left")
    return out.assign(
        seen=out["sighting"].notna(),
        t=out["t"].fillna(0).astype(np.int64),
        sighting=out["sighting"].fillna(-1).astype(np.int64),
    )[list(ALONG_COLUMNS)]


def last_sightings(along: pd.DataFrame) -> pd.DataFrame:
    """Per packet, its last sighting along the path (latest position, then latest time)."""
    seen = along[along["seen"]]
    return seen.sort_values(["packet", "position", "t"]).drop_duplicates("packet", keep="last")


def coverage(along: pd.DataFrame) -> pd.DataFrame:
    """When vantage u was capturing, in vantage w's time: the first and last time w saw a
    packet that u saw too (indexed by (u, w)). A packet w saw in between passed u while
    u's capture ran, whatever the clocks' errors: packets keep their order along a path."""
    seen = along[along["seen"]][["packet", "vantage", "t"]]
    both = seen.merge(seen, on="packet", suffixes=("_u", "_w"))
    both = both[both["vantage_u"] != both["vantage_w"]]
    return both.groupby(["vantage_u", "vantage_w"])["t_w"].agg(["min", "max"])


def _covered(cov: pd.DataFrame, u: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    span = cov.reindex(pd.MultiIndex.from_arrays([u, w]))
    return ((span["min"].to_numpy() <= t) & (t <= span["max"].to_numpy())).astype(bool)


def vanished(along: pd.DataFrame, cov: pd.DataFrame) -> pd.DataFrame:
    """Per packet lost between two vantages: the last one that saw it (`from_v`, its
    sighting and time) and the first after it on the path that did not (`to_v`), only when
    `to_v` was capturing then (`cov`: `coverage`)."""
    last = last_sightings(along)[["packet", "position", "vantage", "t", "sighting"]]
    last = last.rename(columns={"position": "last_pos", "vantage": "from_v"})
    rows = along[~along["seen"]].merge(last, on="packet", suffixes=("_x", ""))
    rows = rows[rows["position"] > rows["last_pos"]]
    nxt = rows.sort_values(["packet", "position"]).drop_duplicates("packet")
    v, w, t = nxt["vantage"].to_numpy(), nxt["from_v"].to_numpy(), nxt["t"].to_numpy()
    return nxt[_covered(cov, v, w, t)].rename(columns={"vantage": "to_v"})[
        ["packet", "from_v", "to_v", "t", "sighting"]
    ]


def missed(along: pd.DataFrame, cov: pd.DataFrame, n_vantages: int) -> np.ndarray:
    """Per vantage, packets it did not see although a vantage after it on the path did,
    while it was capturing: its capture's drops (or a path that bypasses it)."""
    last = last_sightings(along)[["packet", "position", "vantage", "t"]]
    rows = along[~along["seen"]].merge(last, on="packet", suffixes=("", "_last"))
    rows = rows[rows["position"] < rows["position_last"]]
    v, w, t = rows["vantage"].to_numpy(), rows["vantage_last"].to_numpy(), rows["t_last"].to_numpy()
    v = v[_covered(cov, v, w, t)]
    return np.bincount(v.astype(np.int64), minlength=n_vantages)


def overtaken(pairs: pd.DataFrame, group: list[str]) -> np.ndarray:
    """Per segment pair, whether a packet that passed `from_v` after it reached `to_v`
    before it (reordering: in the order of `from_v`'s capture, a later packet arrives
    first at `to_v`, in `to_v`'s capture order)."""
    if len(pairs) == 0:
        return np.zeros(0, bool)
    p = pairs.assign(_i=np.arange(len(pairs))).sort_values([*group, "row_from"])
    rev = p.iloc[::-1]
    later = rev.groupby(group, sort=False)["row_to"].shift(1)  # the next packet at from_v
    soonest = later.groupby([rev[g] for g in group], sort=False).cummin()
    late = (rev["row_to"] > soonest).to_numpy(bool)
    out = np.zeros(len(pairs), bool)
    out[rev["_i"].to_numpy()] = late
    return out
