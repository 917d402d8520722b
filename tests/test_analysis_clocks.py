"""A capture the way tcpdump writes it by default: microsecond timestamps on frames 100 ns
apart, so ten frames share one timestamp. Capture order (frame order) decides what came
first, never the timestamp: every CNP right after its CE mark pairs with it, and every
NAK-triggered go-back-N is found as such."""

from __future__ import annotations

import numpy as np
import pandas as pd
from analysis_builder import A, B

from rocetrace.analysis.pipeline import analyze_packets

SPACING_NS = 100
CE_EVERY = 4  # every 4th request is CE-marked, and the receiver's CNP follows it at once
LOSS_EVERY = 5000  # every 5000th PSN is lost: NAK, then go-back-N from it
REQ_QP, RESP_QP = 0x12, 0x34


def _timeline(n_requests: int) -> list[tuple[str, int, int]]:
    """(kind, PSN, ECN) in capture order: requests with periodic losses, each followed by
    the NAK and the go-back-N from the lost PSN through the newest sent, CE marks
    followed by their CNP."""
    out: list[tuple[str, int, int]] = []
    psn = sent = 0
    while sent < n_requests:
        lost = psn > 0 and psn % LOSS_EVERY == 0
        if not lost:
            ce = 3 if sent % CE_EVERY == CE_EVERY - 1 else 2
            out.append(("req", psn, ce))
            if ce == 3:
                out.append(("cnp", 0, 0))
        sent += 1
        if lost:
            out += [("req", psn + 1, 2), ("req", psn + 2, 2), ("nak", psn, 0)]
            out += [("req", p, 2) for p in range(psn, psn + 3)]
            psn += 3
            continue
        psn += 1
    return out


def microsecond_capture(n_requests: int) -> pd.DataFrame:
    """The timeline as a packet table, frames 100 ns apart, stamped in microseconds."""
    events = _timeline(n_requests)
    n = len(events)
    kind = np.array([k for k, _, _ in events])
    req, nak, cnp = kind == "req", kind == "nak", kind == "cnp"
    ts = (1_700_000_000_000_000_000 + SPACING_NS * np.arange(n, dtype=np.int64)) // 1000 * 1000
    return pd.DataFrame(
        {
            "frame": np.arange(1, n + 1, dtype=np.uint32),
            "ts_ns": ts,
            "cap_len": np.where(req, 1082, 62).astype(np.uint32),
            "wire_len": np.where(req, 1082, 62).astype(np.uint32),
            "src_ip": pd.Categorical(np.where(req, A, B)),
            "dst_ip": pd.Categorical(np.where(req, B, A)),
            "encap": pd.Categorical(["roce_v2"] * n),
            "opcode": pd.array(np.select([req, nak, cnp], [0x0A, 0x11, 0x81]), "UInt8"),
            "dest_qp": pd.array(np.where(req, REQ_QP, RESP_QP), "UInt32"),
            "psn": pd.array([p for _, p, _ in events], "UInt32"),
            "aeth_syndrome": pd.array(np.where(nak, 0x60, 0x1F), "UInt8"),
            "ecn": pd.array([e for _, _, e in events], "UInt8"),
            "dscp": pd.array(np.where(cnp, 48, 26), "UInt8"),
            "payload_len": pd.array(np.where(req, 1024, 0), "UInt16"),
            "udp_sport": pd.array(np.full(n, 50000), "UInt16"),
        }
    )


def test_microsecond_clock_pairs_every_cnp_and_finds_every_go_back_n() -> None:
    packets = microsecond_capture(300_000)
    a = analyze_packets(packets, ts_resolution_ns=1000)
    assert len(packets) >= 300_000
    assert a.tolerances.resolution_ns == 1000
    cnps = a.cnps
    assert len(cnps) == int((packets["opcode"] == 0x81).sum()) > 50_000
    assert bool(cnps["ce_before"].all())
    eps = a.retransmissions
    naks = int((packets["opcode"] == 0x11).sum())
    assert len(eps) == naks > 0
    assert set(eps["trigger"]) == {"nak"} and set(eps["mode"]) == {"go-back-n"}
    assert int((eps["trigger_certainty"] != "uncertain").sum()) == naks
    assert (eps["start_psn"] == eps["nak_psn"]).all() and (eps["packets"] == 3).all()
