"""A capture the way tcpdump writes it by default: microsecond timestamps on frames 100 ns
apart, so ten frames share one timestamp. Capture order (frame order) decides what came
first, never the timestamp: every CNP right after its CE mark pairs with it, and every
NAK-triggered go-back-N is found as such."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from analysis_builder import A, B
from nic_truth import generate, read_capture

from rocetrace.analysis import tolerances
from rocetrace.analysis.pipeline import analyze_packets
from rocetrace.analysis.stages import clock_sample, clock_totals
from rocetrace.generate import Loss

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


def _clock_of(tmp_path: Path, seed: int, **ov: object) -> tolerances.Tolerances:
    """What the analysis measures of a generated capture's clock and link."""
    path = tmp_path / "capture.pcap"
    generate("clean", path, seed=seed, **ov)
    packets = read_capture(path).packets
    head = clock_sample(packets.iloc[: tolerances.SAMPLE])
    return tolerances.measure_sample(head, clock_totals(packets), None)


def test_a_mirror_on_25g_links_shows_25g_though_sources_talk_to_two_hosts(
    tmp_path: Path,
) -> None:
    """At a switch mirror a source's frames to two destinations leave by two egress ports:
    one out of an idle port comes a third of a frame time after one that waited in a busy
    one. Only frames of one source to one destination show the sender's link."""
    tol = _clock_of(
        tmp_path, 800, link_speed_bps=25e9, vantage="mirror", requesters=2, responders=2,
        ops=("send",), qps=3, messages=7, message_size=16384, window=8, ack_req_every=4,
        link_delay_ns=2000, losses=(Loss(every=28),), max_packets=400,
    )  # fmt: skip
    assert tol.link_bps == 25e9
    assert tol.max_frame_ns >= 350  # a full frame's wire time at 25 Gb/s, not at 100


def test_an_exact_clock_at_a_receiver_shows_no_jitter_on_a_25g_link(tmp_path: Path) -> None:
    """A receiver's NAK storm: the switch queue spaces some back-to-back frames a frame or
    more apart, which only spreads spacings upward. An exact clock never brings a frame
    closer to the one before it than its wire time, so it shows no jitter, and the slack
    stays a nanosecond (half the whole spread made it 177 ns)."""
    tol = _clock_of(
        tmp_path, 0, link_speed_bps=25e9, vantage="receiver", recovery="selective-repeat",
        ops=("write", "send"), messages=5, message_size=4096, start_psn=16777200,
        losses=(Loss(rate=0.046875),),
    )  # fmt: skip
    assert tol.link_bps == 25e9
    assert tol.jitter_ns == 0 and tol.slack_ns == 1


def test_a_jittery_clock_still_shows_its_jitter() -> None:
    """Back-to-back spacings an exact frame time apart, each timestamp moved up to 50 ns
    either way: the spacings that fall short of the frame time show the jitter."""
    n, frame_ns = 2000, 360
    rng = np.random.default_rng(3)
    ts = np.arange(n, dtype=np.int64) * frame_ns + rng.integers(-50, 51, n)
    src, dst = np.zeros(n, np.int64), np.ones(n, np.int64)
    wire = np.full(n, 1082, np.int64)
    tol = tolerances.measure(ts, src, dst, wire, 1)
    assert tol.jitter_ns >= 50
