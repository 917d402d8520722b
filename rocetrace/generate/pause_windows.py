"""PFC in the model: a NIC's pause storm (`Scenario.pfc_storm`) and the switch pausing a
requester after dropping its packet (`Scenario.pfc_on_loss`). Each pause is a window in which
a port sends nothing of one priority, announced by pause frames and ended by a resume frame;
both the windows and the frames go into the ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rocetrace.generate.encap import MIN_FRAME
from rocetrace.generate.ledger import NIC, SWITCH_EGRESS, PauseWindow
from rocetrace.generate.wire_table import PFC, ROLE_PFC, ROLE_REQUEST

if TYPE_CHECKING:
    from rocetrace.generate.network import Packet
    from rocetrace.generate.sim import Simulation


def pause_frame(src: int, dst: int, priority: int, quanta: int) -> dict[str, int]:
    """A PFC row without times: pause (quanta > 0) or resume (0) of one priority."""
    return {"kind": PFC, "src": src, "dst": dst, "role": ROLE_PFC, "opcode": 0,
            "pfc_enable": 1 << priority, f"pfc_q{priority}": quanta, "lost": 0}  # fmt: skip


def storm(sim: Simulation) -> None:
    """Pause frames refreshed for the whole storm, then a resume, from each responder
    (and from the switch to each requester when the pause propagates)."""
    sc, net = sim.sc, sim.net
    s = sc.pfc_storm
    if s is None:
        return
    t0, end = int(s.start_us * 1000), int((s.start_us + s.duration_us) * 1000)
    d = sc.link_delay_ns
    links = [(h, sim.switch) for h in range(sc.requesters, sim.switch)]
    if s.propagate:
        links += [(sim.switch, h) for h in range(sc.requesters)]
    for src, dst in links:
        shift = 0 if src != sim.switch else 2 * d
        paused = net.egress_pause if src != sim.switch else net.host_pause
        host = src if src != sim.switch else dst
        paused[(host, s.priority)] = [(t0 + shift, end + shift)]
        window = PauseWindow(
            SWITCH_EGRESS if src != sim.switch else NIC, host, s.priority, t0 + shift,
            end + shift, src,
        )  # fmt: skip
        times = list(range(t0 + shift, end + shift, int(s.refresh_us * 1000)))
        for t in [*times, end + shift]:
            q = s.quanta if t < end + shift else 0
            window.frames.append(len(net.rows))
            net.rows.append(
                pause_frame(src, dst, s.priority, q) | {"t_tx": t, "t_sw": t + d, "t_rx": t + d}
            )
        sim.ledger.pauses.append(window)


def pause_after_drop(sim: Simulation, dropped: Packet) -> None:
    """The switch pauses the requester whose request packet it dropped: a delay after the
    drop reached the switch, pause frames every refresh, then a resume, each drawn from the
    seed. The NIC stops sending the priority from the first pause frame's arrival to the
    resume's. A drop while that NIC's last pause is pending or running starts none."""
    p, sc, net = sim.sc.pfc_on_loss, sim.sc, sim.net
    if p is None or dropped["role"] != ROLE_REQUEST:
        return
    at_switch = dropped["t_tx"] + net.ser_ns(net.frame_len(dropped)) + sc.link_delay_ns
    first = at_switch + int(sim.pfc_rng.integers(p.delay_ns[0], p.delay_ns[1] + 1))
    resume = first + int(sim.pfc_rng.integers(p.duration_ns[0], p.duration_ns[1] + 1))
    host, arrive = dropped["src"], net.ser_ns(MIN_FRAME) + sc.link_delay_ns
    windows = net.host_pause.setdefault((host, p.priority), [])
    if windows and first + arrive <= windows[-1][1]:
        return
    windows.append((first + arrive, resume + arrive))
    window = PauseWindow(NIC, host, p.priority, first + arrive, resume + arrive, sim.switch)
    for t in [*range(first, resume, p.refresh_ns), resume]:
        q = p.quanta if t < resume else 0
        window.frames.append(len(net.rows))
        times = {"t_tx": t, "t_sw": t, "t_rx": t + arrive}
        net.rows.append(pause_frame(sim.switch, host, p.priority, q) | times)
    sim.ledger.pauses.append(window)
