"""What to simulate: a `Scenario` is plain data, built by a preset and adjusted by overrides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from rocetrace.generate.clock import Clock, parse_clock, split_vantage

RECOVERY_MODES = ("go-back-n", "go-back-0", "selective-repeat")
VANTAGES = ("sender", "receiver", "mirror")
OPS = ("write", "write_imm", "send", "send_imm", "read", "cmp_swap", "fetch_add")
BULK_OPS = ("write", "write_imm", "send", "send_imm", "read")  # the vectorized path's ops
LOSS_DIRECTIONS = ("request", "response", "any")
LOSS_KINDS = ("data", "ack", "nak", "read_response", "any")


@dataclass(frozen=True)
class Loss:
    """Packets dropped in the network: chosen PSNs, every Nth, or at random, per kind."""

    psns: tuple[int, ...] = ()  # wire PSNs; their first `times` transmissions are lost
    times: int = 1
    every: int = 0  # every Nth matching packet (counting every transmission)
    rate: float = 0.0
    direction: str = "request"  # request | response | any
    kind: str = "data"  # data | ack | nak | read_response | any
    conn: int | None = None  # only this connection (index), None: all
    before_mirror: bool = False  # dropped before the mirror port sees it
    first_only: bool = False  # only first transmissions: resends always get through
    spare_ack_req: bool = False  # never an AckReq packet: a later one always shows the gap


@dataclass(frozen=True)
class PfcStorm:
    """A NIC that keeps pausing one priority: refreshed pause frames, then a resume."""

    priority: int = 3
    start_us: float = 20.0
    duration_us: float = 120_000.0
    refresh_us: float = 150.0
    quanta: int = 0xFFFF
    propagate: bool = True  # the switch pauses the senders too


@dataclass(frozen=True)
class PfcOnLoss:
    """After the network drops a request packet, the switch pauses that requester's priority
    for a while (drawn per drop from the seed): pause frames refreshed, then a resume."""

    priority: int = 3
    delay_ns: tuple[int, int] = (0, 3_000)  # drop reaches the switch -> first pause frame
    duration_ns: tuple[int, int] = (5_000, 60_000)  # first pause frame -> resume frame
    refresh_ns: int = 10_000
    quanta: int = 0xFFFF


@dataclass(frozen=True)
class Scenario:
    """Every knob of a generated capture; presets fill it, options override fields."""

    name: str = "custom"
    # topology and traffic
    requesters: int = 1  # requester hosts
    responders: int = 1  # responder hosts
    qps: int = 1  # connections per (requester, responder) pair
    transport: str = "RC"  # RC | UC | UD
    ops: tuple[str, ...] = ("write",)  # cycled per message
    messages: int = 8  # per QP
    message_size: int = 4096
    mtu: int = 1024
    start_psn: int | None = None  # None: drawn from the seed per QP
    window: int = 64  # outstanding PSNs per QP
    ack_req_every: int = 0  # also request an ACK every N packets (0: last packet only)
    # requester behaviour
    recovery: str = "go-back-n"
    timeout: int = 8  # ACK timeout exponent: 4.096 us * 2^timeout
    retry_cnt: int = 7
    rnr_retry: int = 7  # 7 = infinite
    rnr_timer: int = 5  # RNR timer code (IBTA table 45)
    rnr_naks: int = 0  # the responder answers this many SENDs with RNR NAK
    # network
    link_speed_bps: float = 100e9
    link_delay_ns: int = 500
    ack_delay_ns: int = 300
    losses: tuple[Loss, ...] = ()
    # congestion
    ecn: int = 2  # ECN bits of RoCE traffic (2 = ECT(0), 0 = not ECN-capable)
    dscp: int = 26
    pcp: int = 3
    cnp_dscp: int = 48
    cnp_pcp: int = 6
    ce_rate: float = 0.0  # probability of a CE mark regardless of the queue
    kmin_bytes: int = 0  # queue marking (RED); 0 disables it
    kmax_bytes: int = 0
    pmax: float = 0.2
    cnp_interval_us: float = 4.0  # min_time_between_cnps
    cnp_on_oos: bool = False
    dcqcn: bool = True
    pfc_storm: PfcStorm | None = None
    pfc_on_loss: PfcOnLoss | None = None
    # path and peer quirks
    reorder_rate: float = 0.0  # request packets that take a slower path through the switch
    reorder_delay_ns: tuple[int, int] = (500, 3_000)  # their extra delay, drawn per packet
    responder_ooo: bool = False  # the responder accepts out-of-order requests (no NAK)
    responder_mtu: int | None = None  # the responder's path MTU when it disagrees (soft-RoCE)
    qp_reuse_gap_us: float | None = None  # then new connections reuse the QPNs, this much later
    responder_ops: tuple[str, ...] = ()  # the responders post these requests too, same QPs
    # encapsulation
    ip_version: int = 4
    vlan: int | None = None
    roce_v1: bool = False
    vxlan_vni: int | None = None
    udp_sport_collision: bool = False
    cm: bool = False  # connection-setup MADs before the traffic
    # capture
    vantage: str = "mirror"
    vantages: tuple[str, ...] = ()  # several captures of one run: out.<vantage>.pcap each
    snaplen: int = 65535
    fmt: str = "pcap"
    nanosecond: bool = True  # the default clock's resolution (False: microseconds)
    clock_offset_ns: int = 0  # the default clock of every vantage
    clock_drift_ppm: float = 0.0
    clock_jitter_ns: int = 0
    clocks: tuple[Clock, ...] = ()  # per-vantage clocks (replace the default for theirs)
    capture_drop_rate: float = 0.0
    capture_drop_burst: int = 1
    malformed: tuple[str, ...] = ()  # kinds: bad_icrc, truncated_bth, unknown_opcode
    # limits and engine
    max_time_us: float = 1_000_000.0
    max_packets: int = 200_000
    bulk: bool = False  # vectorized path: no faults, for speed
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def with_overrides(self, **overrides: Any) -> Scenario:
        """A copy with fields replaced; unknown names are an error (typos must not pass)."""
        known = {f.name for f in fields(self)}
        unknown = set(overrides) - known
        if unknown:
            raise ValueError(f"unknown scenario options: {sorted(unknown)}")
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    @property
    def ack_timeout_ns(self) -> int:
        return int(4096 * 2**self.timeout)

    @property
    def captured(self) -> tuple[str, ...]:
        """The vantages written: `vantages`, or the one `vantage`."""
        return self.vantages or (self.vantage,)

    @property
    def default_clock(self) -> Clock:
        return Clock(
            "", self.clock_offset_ns, self.clock_drift_ppm, 1 if self.nanosecond else 1000,
            self.clock_jitter_ns,
        )  # fmt: skip

    def clock(self, vantage: str) -> Clock:
        """The clock of one vantage: its own from `clocks`, else the default."""
        own = [c for c in self.clocks if c.vantage == vantage]
        return own[-1] if own else replace(self.default_clock, vantage=vantage)

    def validate(self) -> None:
        checks = [
            (self.recovery in RECOVERY_MODES, f"recovery must be one of {RECOVERY_MODES}"),
            (self.vantage in VANTAGES, f"vantage must be one of {VANTAGES}"),
            (self.transport in ("RC", "UC", "UD"), "transport must be RC, UC or UD"),
            (all(o in OPS for o in self.ops), f"ops must be among {OPS}"),
            (self.mtu in (256, 512, 1024, 2048, 4096), "mtu must be 256..4096 (IB MTU)"),
            (self.fmt in ("pcap", "pcapng"), "format must be pcap or pcapng"),
            (self.window >= 1 and self.messages >= 0 and self.qps >= 1, "bad counts"),
            (self.ip_version in (4, 6), "ip_version must be 4 or 6"),
        ]
        for ok, message in checks + self._quirk_checks():
            if not ok:
                raise ValueError(message)
        for c in self.clocks:
            c.validate()

    def _quirk_checks(self) -> list[tuple[bool, str]]:
        vantages_ok = set(self.vantages) <= set(VANTAGES)
        return [
            (vantages_ok and len(set(self.vantages)) == len(self.vantages),
             f"vantages must be distinct among {VANTAGES}"),
            ({c.vantage for c in self.clocks} <= set(self.captured),
             f"clocks only for captured vantages {self.captured}"),
            (self.responder_mtu is None or self.responder_mtu < self.mtu,
             "responder_mtu must be smaller than mtu (the requester's belief)"),
            (0.0 <= self.reorder_rate <= 1.0, "reorder_rate is a probability"),
            (all(o in ("write", "write_imm", "send", "send_imm") for o in self.responder_ops),
             "responder_ops are SEND and WRITE operations"),
            (not self.responder_ops or (self.transport == "RC" and self.responder_mtu is None
                                        and self.qp_reuse_gap_us is None),
             "responder_ops need RC, one MTU and no QP reuse"),
        ]  # fmt: skip


def with_clocks(sc: Scenario, clocks: Any) -> Scenario:
    """`clocks` given as {vantage: Clock or "offset=+30us,res=us"}, or as "VANTAGE:SPEC"
    strings, made into the Scenario's tuple of Clocks. A spec string starts from the
    scenario's default clock; a Clock is taken as it is."""
    if not clocks:
        return sc
    if isinstance(clocks, Mapping):
        items = list(clocks.items())
    else:
        items = [split_vantage(c) if isinstance(c, str) else (c.vantage, c) for c in clocks]
    out = []
    for vantage, c in items:
        clock = parse_clock(c, sc.default_clock) if isinstance(c, str) else c
        out.append(replace(clock, vantage=vantage))
    return replace(sc, clocks=tuple(out))
