"""What each finding is called, what probably caused it and what to check or change.

One entry per finding code (docs/findings.md lists them). A cause or an advice may read
the facts the rules gathered (lists, one value per affected flow or port): the same code
says "the ACK timeout is too short for the RTT" only when the capture shows it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Facts = dict[str, list[Any]]
Text = str | Callable[[Facts], str]


@dataclass(frozen=True)
class Advice:
    title: str
    noun: tuple[str, str]  # what `count` counts: singular, plural
    cause: Text
    advice: Text
    headline: Callable[[Facts, int], str] | None = None  # else "<count> <noun>"
    severity: str = "warning"  # info, warning or critical

    def text(self, which: str, facts: Facts) -> str:
        value = getattr(self, which)
        return value(facts) if callable(value) else value

    def head(self, facts: Facts, count: int) -> str:
        """The message's opening: how much of what happened, aggregated."""
        return self.headline(facts, count) if self.headline else plural(count, self.noun)


def plural(n: int, noun: tuple[str, str] | str) -> str:
    """'1 NAK', '3 NAKs' (or the given plural)."""
    one, many = (noun, noun + "s") if isinstance(noun, str) else noun
    return f"{n:,} {one if n == 1 else many}"


def _known(facts: Facts, key: str) -> list[Any]:
    return [v for v in facts.get(key, []) if v is not None and v == v]


LOCATION = {
    "upstream": "before the capture point (the capture shows the PSN gap: it sits on the "
    "receiver's side of the loss)",
    "downstream": "after the capture point (the capture saw the packets that were resent: "
    "it sits on the sender's side of the loss)",
    "both": "both before and after the capture point (some gaps are seen here, some lost "
    "packets passed it)",
}


def _loss(what: str) -> Callable[[Facts], str]:
    def cause(facts: Facts) -> str:
        where = {v for v in _known(facts, "location")}
        place = "both" if len(where) > 1 else next(iter(where), None)
        text = f"{what} lost {LOCATION[place]}" if place else f"{what} lost on the way"
        return text + "."

    return cause


def _loss_advice(facts: Facts) -> str:
    pcp = sorted({int(p) for p in _known(facts, "pcp")})
    cls = f"PCP {', '.join(map(str, pcp))}" if pcp else "the RoCE traffic class"
    return (
        f"Find the drop: switch egress-queue drop and PFC counters for {cls} along the path "
        "(a lossless class should drop nothing: check PFC is enabled for that priority end "
        "to end), NIC out_of_sequence / packet_seq_err counters, link FCS errors; capture "
        "on the other side too to see which hop loses them."
    )


def _timeout_cause(facts: Facts) -> str:
    timeout, rtt = _known(facts, "ack_timeout_s"), _known(facts, "rtt_s")
    if timeout and rtt and min(timeout) < 4 * max(rtt):
        return (
            f"The ACK timeout (~{min(timeout) * 1e6:,.1f} us) is too short for the RTT "
            f"({max(rtt) * 1e6:,.1f} us): the timer fires while ACKs are on their way."
        )
    return (
        "No NAK came: the last packet of a burst, its ACK or the NAK itself was lost, and "
        "the requester waited for its ACK timer."
    )


def _timeout_advice(facts: Facts) -> str:
    timeout, rtt = _known(facts, "ack_timeout_s"), _known(facts, "rtt_s")
    if timeout and rtt and min(timeout) < 4 * max(rtt):
        return (
            "Raise the QP's ACK timeout (ibv_modify_qp attr.timeout, rdma_set_option "
            "RDMA_OPTION_ID_ACK_TIMEOUT; 4.096 us x 2^timeout) well above the RTT."
        )
    silence = _known(facts, "silence_s")
    wait = f" (each cost ~{max(silence) * 1e6:,.0f} us of silence)" if silence else ""
    return (
        "Find the tail loss like any loss (switch drop counters on the path); if such "
        f"timeouts are frequent{wait}, a shorter ACK timeout recovers sooner."
    )


def _ecn_advice(facts: Facts) -> str:
    dscp = sorted({int(d) for d in _known(facts, "dscp")})
    on = f" (DSCP {', '.join(map(str, dscp))})" if dscp else ""
    return (
        f"Enable ECN marking on the RoCE class{on}: send ECT (tclass with the ECN bits, "
        "e.g. perftest --tclass=106; mlx5: /sys/class/net/<if>/ecn/roce_rp/enable/<prio> "
        "and roce_np) and configure ECN/RED on the switch queue of that class."
    )


def _signals(facts: Facts, count: int) -> str:
    ce, cnps = sum(_known(facts, "ce")), sum(_known(facts, "cnps"))
    return f"{plural(ce, 'CE-marked packet')} and {plural(cnps, 'CNP')}"


def _senders(facts: Facts, count: int) -> str:
    per = dict(zip(facts.get("receiver", []), facts.get("senders", []), strict=True))
    return "; ".join(f"{n} senders to {dst} at once" for dst, n in per.items() if n)


def _pfc_advice(facts: Facts) -> str:
    data, paused = set(_known(facts, "data_pcp")), set(_known(facts, "priority"))
    if data and paused and not data & paused:
        return (
            f"PFC pauses priority {', '.join(map(str, sorted(paused)))} while the RoCE data "
            f"rides PCP {', '.join(map(str, sorted(data)))}: check the PFC priority (the "
            "lossless class and the data's class must be the same)."
        )
    return (
        "Pauses mean a lossless queue filled: if they are frequent with ECN on, lower the "
        "switch's ECN thresholds (Kmin/Kmax) below the PFC Xoff so DCQCN reacts first."
    )


def _mtu_advice(facts: Facts) -> str:
    if any("path MTU" in str(m) for m in facts.get("message", [])):
        return (
            "The requester and responder disagree on the path MTU: set the same MTU on both "
            "ends (ibv_modify_qp path_mtu; for RoCE the netdev MTU of both hosts, see "
            "ibv_devinfo active_mtu)."
        )
    return "Compare both ends' QP attributes (path MTU, starting PSNs) and NIC firmware."


ENTRIES: dict[str, Advice] = {
    "psn_sequence_error": Advice(
        "Packet loss (NAK: PSN sequence error)",
        ("NAK (PSN sequence error)", "NAKs (PSN sequence error)"),
        _loss("Request packets were"),
        _loss_advice,
    ),
    "read_reissue": Advice(
        "Packet loss (READ responses re-requested)",
        ("READ re-issue", "READ re-issues"),
        _loss("READ responses were"),
        _loss_advice,
    ),
    "retransmission_unknown": Advice(
        "Retransmission with no visible cause",
        ("retransmission episode", "retransmission episodes"),
        "Resends with no NAK, timer silence or READ re-issue before them: the NAK was "
        "probably lost before the capture point.",
        "Capture nearer the requester to see the NAK; look for loss in the reverse direction.",
        severity="info",
    ),
    "timeout_retransmission": Advice(
        "Retransmission after a timeout",
        ("timeout retransmission", "timeout retransmissions"),
        _timeout_cause,
        _timeout_advice,
    ),
    "go_back_0_livelock": Advice(
        "Go-back-0 livelock",
        ("restart", "restarts"),
        "Go-back-0 restarts the whole message after every loss; with periodic loss it "
        "never completes.",
        "Fix the periodic drop first; then use a NIC/firmware that goes back N (or "
        "selective repeat) instead of to the message start, or send smaller messages.",
        severity="critical",
    ),
    "rnr_nak": Advice(
        "Receiver not ready (RNR NAK)",
        ("RNR NAK", "RNR NAKs"),
        "The responder had no receive WQE posted when a SEND arrived.",
        "Post receive buffers earlier and deeper (a larger receive queue or an SRQ), or "
        "raise min_rnr_timer so the requester waits longer before retrying.",
    ),
    "nak_error": Advice(
        "Operation failed (NAK error)",
        ("error NAK", "error NAKs"),
        "The responder refused the operation: the QP goes to the error state.",
        "Remote access error: check the rkey, the registered range and its access flags; "
        "invalid request: the opcode or length the responder's QP allows; remote "
        "operational error: the responder's QP state and its NIC's error counters.",
        severity="critical",
    ),
    "capture_gap": Advice(
        "Capture drops",
        ("PSN missing from the capture", "PSNs missing from the capture"),
        "PSNs missing here were never resent nor NAKed: the capture (sniffer) dropped them, "
        "not the network.",
        "Capture with a bigger buffer (tcpdump -B), a short snap length (-s 128) and to a "
        "fast disk; compare the NIC's own counters before trusting gaps here.",
        severity="info",
    ),
    "congestion": Advice(
        "Congestion signalled (ECN CE, CNPs)",
        ("congestion signal", "congestion signals"),
        "Switch queues passed their ECN threshold and the receivers sent CNPs: DCQCN "
        "slowed the senders.",
        "Expected under load; if throughput suffers, look for many-to-one traffic (incast) "
        "and tune the switch ECN thresholds (Kmin/Kmax/Pmax) and the DCQCN parameters.",
        _signals,
        severity="info",
    ),
    "incast": Advice(
        "Incast (many senders to one receiver)",
        ("sender", "senders"),
        "Several hosts sent to one receiver at the same time: its switch port is the "
        "bottleneck and marks (or pauses) them all.",
        "Spread the many-to-one traffic in time (collective algorithm, fewer concurrent "
        "senders per receiver) and keep ECN marking and DCQCN on for the class.",
        _senders,
    ),
    "cnp_without_ce": Advice(
        "CNPs without ECN marks",
        ("CNP without CE", "CNPs without CE"),
        "The receiver sent CNPs with no CE-marked packet before them: out-of-sequence or "
        "slow-restart CNPs (loss), or marks not visible at this capture point.",
        "Look for loss on the flow (NIC out_of_sequence counter); capture at the receiver "
        "to see the marks the switch set.",
        severity="info",
    ),
    "ecn_not_capable": Advice(
        "RoCE traffic not ECN-capable",
        ("frame sent with ECN 00", "frames sent with ECN 00"),
        "Data is sent with ECN 00 (Not-ECT): switches cannot mark it, DCQCN is blind and "
        "only PFC or loss can slow the senders.",
        _ecn_advice,
    ),
    "cnp_priority": Advice(
        "CNPs not prioritised",
        ("CNP", "CNPs"),
        "CNPs travel in a class no higher than the data they throttle, so they queue "
        "behind it and arrive late.",
        "Send CNPs in a strict-priority class above the data (e.g. DSCP 48; mlx5 cnp_dscp "
        "and cnp_802p_prio) and map it to a high-priority queue on the switches.",
    ),
    "udp_sport_collision": Advice(
        "No ECMP entropy (UDP source port shared)",
        ("QP sharing a source port", "QPs sharing a source port"),
        "QPs between the same hosts use one UDP source port, so ECMP hashes them onto one path.",
        "Update the NIC driver/firmware (a known bug put every QP on 49152) or let RDMA CM "
        "derive the source port from the flow label, so each QP gets its own port.",
    ),
    "pfc_storm": Advice(
        "PFC storm",
        ("PFC storm", "PFC storms"),
        "A port paused its upstream without a break for 100 ms or more: its receiver cannot "
        "drain (a stuck NIC or host, or a buffer deadlock).",
        "Find the pausing port by its MAC, check that host/NIC; enable the switch's PFC "
        "watchdog (storm prevention) so one port cannot stall the class.",
        severity="critical",
    ),
    "pfc_pause": Advice(
        "PFC pauses",
        ("PFC pause frame", "PFC pause frames"),
        "A lossless queue filled and its port paused the upstream sender.",
        _pfc_advice,
        severity="info",
    ),
    "bad_icrc": Advice(
        "Bad ICRC",
        ("frame with a bad ICRC", "frames with a bad ICRC"),
        "Frames corrupted on a link, or rewritten by a device that did not recompute the "
        "ICRC (NAT, overlay gateway).",
        "Check link error counters (FCS, symbol errors) on the path and any device that "
        "rewrites headers.",
    ),
    "corrupt_records": Advice(
        "Corrupt records in the capture file",
        ("corrupt record", "corrupt records"),
        "The capture file is damaged: the frames there are lost to the file, not the network.",
        "Capture again or copy the file intact; findings near the damaged offsets may miss frames.",
    ),
    "malformed_frames": Advice(
        "Malformed RoCE frames",
        ("malformed frame", "malformed frames"),
        "Frames on the RoCE port whose headers cannot be trusted.",
        "Check what sends them (another protocol on UDP 4791, a broken encapsulation) "
        "and the snap length.",
    ),
    "incomplete_tail": Advice(
        "Capture file cut off",
        ("cut record", "cut records"),
        "The file ends inside a record: tcpdump was killed or the disk filled.",
        "Stop captures with SIGINT (Ctrl-C) so tcpdump flushes its last record.",
        severity="info",
    ),
    "psn_reuse": Advice(
        "PSN reused by a new request",
        ("PSN reuse", "PSN reuses"),
        "A new request took a PSN an earlier request already had: the two ends count "
        "PSNs differently.",
        _mtu_advice,
        severity="critical",
    ),
    "ack_unsent_psn": Advice(
        "ACK of a PSN never sent",
        ("ACK of an unsent PSN", "ACKs of unsent PSNs"),
        "The responder acknowledged a PSN the requester never sent: the ends count PSNs "
        "differently (MTU) or the responder misbehaves.",
        _mtu_advice,
    ),
    "stall": Advice(
        "Stalled QP",
        ("stall", "stalls"),
        "Requests stayed outstanding with no progress until the capture ended: the "
        "responder stopped answering or the requester gave up.",
        "Check both QPs' state (rdma res show qp; async events, QP in error) and whether "
        "the remote process or host is alive; capture longer to see a retry.",
        severity="critical",
    ),
    "qp_reuse": Advice(
        "QP number reused",
        ("QP reuse", "QP reuses"),
        "A new RDMA CM connection took a QP number again: a new flow starts there.",
        "Nothing to fix; the flows are split where the new connection starts.",
        severity="info",
    ),
    "reordering": Advice(
        "Reordering",
        ("late packet", "late packets"),
        "Packets arrived out of order (adaptive routing, packet spraying): late, not lost.",
        "An IBTA responder NAKs reordered packets and causes spurious resends: enable "
        "out-of-order receive on the NIC or keep the class on one path.",
        severity="info",
    ),
}


# Several vantages of the same traffic merged (rocetrace.vantage, docs/vantages.md).
ENTRIES |= {
    "loss_located": Advice(
        "Loss located between two vantages",
        ("packet lost between two vantages", "packets lost between two vantages"),
        "Packets seen at one vantage never reached the next one on their path: they were "
        "dropped on the links and switch ports between the two.",
        "Read the drop counters of the switch ports between the two vantages (the egress "
        "port toward the receiver first) and the link error counters there.",
    ),
    "loss_unlocated": Advice(
        "Loss not located by the vantages",
        ("retransmission episode", "retransmission episodes"),
        "No two vantages saw the resent packet vanish between them: lost before the first "
        "vantage or after the last, only its ACK lost, or late and never lost.",
        "Add a vantage closer to the sender or the receiver to bracket the loss.",
        severity="info",
    ),
    "clock_unaligned": Advice(
        "Vantage clock not aligned",
        ("vantage", "vantages"),
        "No packet crossed both ways between this vantage and an aligned one, so its clock "
        "offset is a guess.",
        "Capture traffic in both directions at this vantage (or longer) so its clock can "
        "be aligned; until then read its times and loss placement as approximate.",
    ),
    "vantage_missed": Advice(
        "Capture missed packets at a vantage",
        ("packet missed by a capture", "packets missed by a capture"),
        "A capture point did not record packets a later vantage on their path saw: sniffer "
        "drops, or a path that goes around it.",
        "Give that capture a bigger buffer (tcpdump -B) or check the mirror session; do not "
        "read its gaps as network loss.",
        severity="info",
    ),
}


def entry(code: str) -> Advice:
    """The entry of a code; an unknown code gets a plain one (its name in words)."""
    return ENTRIES.get(code) or Advice(code.replace("_", " "), ("event", "events"), "", "")
