"""The fabric: hosts on one switch, serialization at link speed, propagation delay, an egress
queue per host port (ECN marking by RED or by rate), PFC pause windows, and losses.

Every transmitted packet becomes a row with its times at the three capture points: leaving
the source NIC (t_tx), leaving the switch (t_sw, the egress mirror) and reaching the
destination NIC (t_rx).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import numpy as np

from rocetrace.generate.encap import Encap, roce_layout
from rocetrace.generate.faults import LossModel, SlowPath
from rocetrace.generate.scenario import Scenario
from rocetrace.generate.wire_table import DELIVERED, LOST_BEFORE_MIRROR, ROCE
from rocetrace.link import wire_ns

Packet = dict[str, Any]
Handler = Callable[[int, Packet], None]


class EventLoop:
    """A time-ordered queue of callbacks; ties keep insertion order (determinism)."""

    def __init__(self, max_time_ns: int) -> None:
        self.heap: list[tuple[int, int, Callable[..., None], tuple[Any, ...]]] = []
        self.seq = 0
        self.now = 0
        self.max_time_ns = max_time_ns

    def at(self, t: int, fn: Callable[..., None], *args: Any) -> None:
        if t <= self.max_time_ns:
            heapq.heappush(self.heap, (t, self.seq, fn, args))
            self.seq += 1

    def run(self, stop: Callable[[], bool]) -> None:
        while self.heap and not stop():
            t, _, fn, args = heapq.heappop(self.heap)
            self.now = t
            fn(t, *args)


def unpause(t: int, windows: list[tuple[int, int]]) -> int:
    """The first time >= t outside every pause window."""
    for start, end in windows:
        if start <= t < end:
            t = end
    return t


class Network:
    """Hosts on one switch; `send` records the packet and schedules its delivery."""

    def __init__(self, sc: Scenario, encap: Encap, loop: EventLoop, rng: np.random.Generator):
        self.sc, self.encap, self.loop, self.rng = sc, encap, loop, rng
        self.losses = LossModel(sc.losses, rng)
        self.port_free: dict[int, int] = {}
        self.egress_free: dict[int, int] = {}
        self.host_pause: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self.egress_pause: dict[tuple[int, int], list[tuple[int, int]]] = {}
        self.rows: list[Packet] = []
        self.ip_id: dict[int, int] = {}
        self.on_drop: Callable[[Packet], None] | None = None  # told of every dropped packet
        self.slow_path: SlowPath | None = None  # reordering: some requests cross slower
        self.reserved: dict[int, list[tuple[int, int]]] = {}  # egress slots of slow packets
        self.delayed: list[tuple[int, int]] = []  # (wire id, extra ns) of slow packets
        self._lengths: dict[tuple[int, int], int] = {}

    def frame_len(self, pkt: Packet) -> int:
        key = (pkt["opcode"], pkt.get("payload_len", 0))
        if key not in self._lengths:
            self._lengths[key] = roce_layout(self.encap, *key).frame_len
        return self._lengths[key]

    def ser_ns(self, nbytes: int) -> int:
        return int(wire_ns(nbytes, self.sc.link_speed_bps))

    def _mark(self, pkt: Packet, queue_bytes: float) -> None:
        """RED marking on the egress queue, plus a flat CE rate; only ECN-capable packets."""
        pkt["ecn_tx"] = pkt.get("ecn", 0)
        if pkt["ecn_tx"] not in (1, 2):
            return
        p = self.sc.ce_rate
        sc = self.sc
        if sc.kmax_bytes > 0 and queue_bytes > sc.kmin_bytes:
            span = max(sc.kmax_bytes - sc.kmin_bytes, 1)
            p = max(
                p,
                1.0
                if queue_bytes >= sc.kmax_bytes
                else sc.pmax * (queue_bytes - sc.kmin_bytes) / span,
            )
        if p > 0 and self.rng.random() < p:
            pkt["ecn"] = 3

    def _past_reserved(self, dst: int, start: int, ser: int) -> int:
        """The first start >= `start` at which the frame does not overlap a slow packet's
        slot on the egress port (slots that ended before now are forgotten)."""
        slots = self.reserved.get(dst, [])
        slots[:] = [s for s in slots if s[1] > self.loop.now]
        for a, b in sorted(slots):
            if start < b and start + ser > a:
                start = b
        return start

    def send(self, t_ready: int, pkt: Packet, on_arrival: Handler) -> int:
        """Transmit from pkt["src"] to pkt["dst"]; returns the time it leaves the NIC."""
        src, dst, prio = pkt["src"], pkt["dst"], pkt.get("pcp", 0)
        size = self.frame_len(pkt)
        ser = self.ser_ns(size)
        t_tx = unpause(
            max(t_ready, self.port_free.get(src, 0)), self.host_pause.get((src, prio), [])
        )
        self.port_free[src] = t_tx + ser
        t_in = t_tx + ser + self.sc.link_delay_ns
        late = self.slow_path.delay(pkt) if self.slow_path is not None else 0
        start = unpause(
            max(t_in + late, self.egress_free.get(dst, 0)), self.egress_pause.get((dst, prio), [])
        )
        if self.reserved:
            start = self._past_reserved(dst, start, ser)
        self._mark(pkt, (self.egress_free.get(dst, 0) - t_in) * self.sc.link_speed_bps / 8e9)
        if late:  # it rejoins the egress port later: a slot of its own, the FIFO goes on
            self.reserved.setdefault(dst, []).append((start, start + ser))
            self.delayed.append((len(self.rows), late))
        else:
            self.egress_free[dst] = start + ser
        pkt.setdefault("kind", ROCE)
        pkt["ip_id"] = self.ip_id.get(src, 0)
        self.ip_id[src] = (pkt["ip_id"] + 1) & 0xFFFF
        pkt.update(t_tx=t_tx, t_sw=start, t_rx=start + ser + self.sc.link_delay_ns)
        pkt["lost"] = self.losses.decide(pkt)
        if pkt["lost"] == LOST_BEFORE_MIRROR:
            pkt["t_sw"] = -1
        pkt["_row"] = len(self.rows)
        self.rows.append(pkt)
        if pkt["lost"] == DELIVERED:
            self.loop.at(pkt["t_rx"], on_arrival, pkt)
        elif self.on_drop is not None:
            self.on_drop(pkt)
        return t_tx
