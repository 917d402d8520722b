"""What one capture point records: the vantage point picks packets at their true times, the
sniffer may miss some (capture drops, kept for the truth), malformed frames are injected on
request, and the vantage's clock stamps them (`clock.stamp`) without reordering them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rocetrace.generate.malformed import MALFORMED_NAMES
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.wire_table import (
    DELIVERED,
    LOST_BEFORE_MIRROR,
    MALFORMED,
    ROCE,
    ROLE_OTHER,
    PacketTable,
)

EPOCH_NS = 1_767_225_600 * 1_000_000_000  # 2026-01-01T00:00:00Z: every capture starts here
MALFORMED_QP = 0x0ABCDE


@dataclass
class Captured:
    table: PacketTable  # captured frames in capture order, "ts" the true time + EPOCH_NS
    drops: PacketTable  # frames the sniffer missed


def vantage_hosts(sc: Scenario, vantage: str) -> set[int] | None:
    if vantage == "sender":
        return set(range(sc.requesters))
    if vantage == "receiver":
        return set(range(sc.requesters, sc.requesters + sc.responders))
    return None


def select(all_rows: PacketTable, sc: Scenario, vantage: str) -> PacketTable:
    """Rows the vantage point sees, with their true time there, in arrival order."""
    hosts = vantage_hosts(sc, vantage)
    if hosts is None:
        seen = all_rows["lost"] != LOST_BEFORE_MIRROR
        ts = all_rows["t_sw"].copy()
        at_tx = np.zeros(len(all_rows), dtype=bool)
    else:
        out = np.isin(all_rows["src"], list(hosts))
        inc = np.isin(all_rows["dst"], list(hosts)) & (all_rows["lost"] == DELIVERED)
        seen, at_tx = out | inc, out
        ts = np.where(out, all_rows["t_tx"], all_rows["t_rx"])
    table = all_rows.take(np.flatnonzero(seen))
    table.cols["ts"] = ts[seen] + EPOCH_NS
    tx = at_tx[seen] & (table["kind"] == ROCE) & (table["opcode"] != 0x81)
    table.cols["ecn"] = np.where(tx, table["ecn_tx"], table["ecn"]).astype(np.uint8)
    order = np.lexsort((table["row"], table["ts"]))
    return table.take(order)


def drop_some(table: PacketTable, sc: Scenario, rng: np.random.Generator) -> Captured:
    """The sniffer misses bursts of frames: rate = chance a burst starts at each frame."""
    n = len(table)
    if sc.capture_drop_rate <= 0 or n == 0:
        return Captured(table, table.take(np.zeros(n, dtype=bool)))
    starts = np.flatnonzero(rng.random(n) < sc.capture_drop_rate)
    missed = np.zeros(n, dtype=bool)
    for s in starts:
        missed[s : s + sc.capture_drop_burst] = True
    return Captured(table.take(~missed), table.take(missed))


def inject_malformed(table: PacketTable, sc: Scenario) -> PacketTable:
    """Broken frames spread evenly through the capture, between hosts 0 and 1."""
    if not sc.malformed:
        return table
    codes = {v: k for k, v in MALFORMED_NAMES.items()}
    n = len(table)
    extra = PacketTable.empty(len(sc.malformed))
    for i, name in enumerate(sc.malformed):
        pos = (i + 1) * n // (len(sc.malformed) + 1)
        ts = int(table["ts"][pos - 1]) + 1 if pos > 0 else EPOCH_NS
        values = {"kind": MALFORMED, "malformed": codes[name], "src": 0, "dst": 1, "opcode": 0x04,
                  "dest_qp": MALFORMED_QP, "psn": i, "payload_len": 16, "role": ROLE_OTHER,
                  "ts": ts, "udp_sport": 49152, "dscp": sc.dscp, "ecn": sc.ecn}  # fmt: skip
        for k, v in values.items():
            extra.cols[k][i] = v
    merged = PacketTable.concat([table, extra])
    return merged.take(np.argsort(merged["ts"], kind="stable"))


def capture(
    all_rows: PacketTable, sc: Scenario, vantage: str, rng: np.random.Generator
) -> Captured:
    got = drop_some(select(all_rows, sc, vantage), sc, rng)
    return Captured(inject_malformed(got.table, sc), got.drops)
