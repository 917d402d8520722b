"""Named scenarios: each one a story a RoCE engineer will recognise, small by default.

Options override any field (`rocetrace generate gbn-loss --qps 8 --vantage receiver`).
"""

from __future__ import annotations

from rocetrace.generate.scenario import Loss, PfcOnLoss, PfcStorm, Scenario

PRESETS: dict[str, Scenario] = {
    "clean": Scenario(
        name="clean",
        description="4 RC QPs, WRITE/SEND/READ mix, coalesced ACKs, no faults: every count is "
        "zero except packets (the real-capture baseline).",
        qps=4, ops=("write", "send", "read"), messages=12, message_size=4096,
    ),
    "bulk": Scenario(
        name="bulk",
        description="Fault-free RC mix at line rate on 8 QPs (WRITE, SEND, READ with its "
        "responses, coalesced ACKs), built on the vectorized path (>= 200 k packets/s); "
        "scale it with --packets.",
        qps=8, ops=("write", "send", "read"), messages=64, message_size=65536, bulk=True,
    ),
    "gbn-loss": Scenario(
        name="gbn-loss",
        description="One WRITE QP loses PSN 7396; the responder NAKs it (PSN sequence error) and "
        "the requester goes back N: resends from 7396 through everything it had sent.",
        ops=("write",), messages=16, message_size=16384, start_psn=7300, window=32,
        losses=(Loss(psns=(7396,)),),
    ),
    "selective-repeat": Scenario(
        name="selective-repeat",
        description="ConnectX-6 Dx style selective repeat on WRITEs: each lost PSN is resent "
        "alone, plus the last PSN of the window with AckReq.",
        ops=("write",), messages=16, message_size=16384, start_psn=1000, window=32,
        recovery="selective-repeat", losses=(Loss(psns=(1037, 1100)),),
    ),
    "go-back-0-livelock": Scenario(
        name="go-back-0-livelock",
        description="Go-back-0 with every 32nd request packet dropped: each NAK restarts the "
        "64-packet message from its first PSN, which never completes (production livelock).",
        ops=("write",), messages=2, message_size=65536, window=64, recovery="go-back-0",
        losses=(Loss(every=32),), max_packets=1500,
    ),
    "tail-timeout": Scenario(
        name="tail-timeout",
        description="The last packet of the last message is lost, so no NAK can come: the "
        "requester resends from the first unacknowledged PSN after the ACK timeout "
        "(4.096 us * 2^10). PSNs wrap through 0.",
        ops=("write",), messages=6, message_size=4096, start_psn=0xFFFFF8, timeout=10,
        losses=(Loss(psns=(0x00000F,)),),
    ),
    "rnr": Scenario(
        name="rnr",
        description="SENDs arrive before receive WQEs are posted: 3 RNR NAKs, each retried after "
        "the RNR timer (code 5: 60 us).",
        ops=("send",), messages=8, message_size=2048, rnr_naks=3, rnr_timer=5,
    ),
    "read-loss": Scenario(
        name="read-loss",
        description="RDMA READs lose two response packets; the requester re-issues a READ "
        "request from each missing PSN with adjusted VA and length (no NAK exists for READ). "
        "Captured at the requester, where the missing responses are PSN gaps.",
        ops=("read",), messages=6, message_size=8192, start_psn=5000, vantage="sender",
        losses=(Loss(psns=(5010, 5027), direction="response", kind="read_response"),),
    ),
    "ecn-cnp": Scenario(
        name="ecn-cnp",
        description="Two senders share one receiver port: the switch marks CE past Kmin (RED), "
        "the receiver answers with CNPs (min 4 us apart per QP), DCQCN cuts the rate.",
        requesters=2, qps=2, ops=("write",), messages=8, message_size=16384,
        kmin_bytes=8_000, kmax_bytes=64_000, pmax=0.5, vantage="receiver",
    ),
    "pfc-storm": Scenario(
        name="pfc-storm",
        description="The receiver NIC pauses priority 3 for 120 ms (pause refreshed every "
        "300 us, then resume): a PFC storm; the switch propagates the pause to the sender.",
        ops=("write",), messages=8, message_size=4096, timeout=18, vantage="receiver",
        pfc_storm=PfcStorm(priority=3, start_us=2.0, duration_us=120_000.0, refresh_us=300.0),
    ),
    "pfc-recovery": Scenario(
        name="pfc-recovery",
        description="WRITE packets are lost at random (1 %, first sends only, never an AckReq "
        "packet, so a NAK always follows); 0-3 us after each drop reaches the switch it pauses "
        "the requester's priority 3 for 5-60 us (pause refreshed every 10 us, then resume), so "
        "the NAK arrives or the go-back-N waits while the sender is paused. The ACK timeout "
        "(1 ms) is far longer than any pause: no timeout fires. Draws follow the seed.",
        ops=("write",), messages=24, message_size=16384, window=64, timeout=8,
        losses=(Loss(rate=0.01, first_only=True, spare_ack_req=True),),
        pfc_on_loss=PfcOnLoss(), vantage="sender",
    ),
    "mtu-mismatch": Scenario(
        name="mtu-mismatch",
        description="soft-RoCE MTU disagreement: the requester believes path MTU 2048, the "
        "responder uses 1024. A 2400-byte READ is answered in 3 responses but the requester "
        "counted 2 PSNs, so its next WRITE reuses the READ's last response PSN; the responder "
        "answers with an ACK of PSN 0xFFFFFF and the QP stalls. Nothing is resent: the ACK "
        "timeout (4.096 us * 2^18 = 1.07 s) lies past the end of the run.",
        ops=("read", "write"), messages=4, message_size=2400, mtu=2048, responder_mtu=1024,
        start_psn=0, timeout=18,
    ),
    "qp-reuse": Scenario(
        name="qp-reuse",
        description="RDMA CM connects QP 0x11C0 to 0x22C0 (REQ, REP, RTU), WRITEs and READs "
        "flow, the connection is torn down (DREQ, DREP); 21 ms after its last packet a new "
        "connection reuses both QP numbers from a new random starting PSN, with its own "
        "REQ/REP/RTU. Two connections on one QP pair, nothing resent.",
        ops=("write", "read"), messages=4, message_size=4096, cm=True, qp_reuse_gap_us=21_000.0,
    ),
    "bidirectional": Scenario(
        name="bidirectional",
        description="Both ends post requests on one QP pair (as in rxe_rdma_cm.pcap): host 1 "
        "sends SENDs and WRITEs to QP 0x22C0, host 2 sends SENDs to QP 0x11C0, each side from "
        "its own starting PSN, each acknowledged by the other; RDMA CM sets the pair up (the "
        "REQ announces host 2's starting PSN). Two PSN spaces, nothing resent.",
        ops=("send", "write"), responder_ops=("send",), messages=6, message_size=4096, cm=True,
    ),
    "reorder": Scenario(
        name="reorder",
        description="Packet spraying: 5 % of WRITE packets take a slower path through the "
        "switch (0.5-3 us longer) and arrive out of order. The IBTA responder NAKs the first "
        "out-of-sequence PSN and the requester goes back N although nothing was lost; with "
        "--responder-ooo it accepts out-of-order packets within its window and sends no NAK. "
        "Captured at the receiver.",
        ops=("write",), messages=16, message_size=16384, reorder_rate=0.05, vantage="receiver",
    ),
    "incast": Scenario(
        name="incast",
        description="8 senders to one receiver at line rate: the egress queue builds, CE marks "
        "and CNPs spread over all QPs, DCQCN throttles them.",
        requesters=8, ops=("write",), messages=4, message_size=16384,
        kmin_bytes=20_000, kmax_bytes=200_000, pmax=0.2, vantage="receiver",
    ),
    "overlay": Scenario(
        name="overlay",
        description="RoCEv2 inside VXLAN (VNI 5001) on VLAN 100 priority 3: WRITE and READ on "
        "2 QPs with one lost packet recovered by go-back-N.",
        qps=2, ops=("write", "read"), messages=6, message_size=4096, start_psn=100,
        vxlan_vni=5001, vlan=100, losses=(Loss(psns=(109,), conn=0),),
    ),
}  # fmt: skip


def preset(name: str) -> Scenario:
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; presets: {', '.join(PRESETS)}") from None
