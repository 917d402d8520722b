"""`rocetrace generate`: write a synthetic capture and its ground-truth sidecar."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import click

from rocetrace.errors import OutputError
from rocetrace.generate.clock import duration_ns
from rocetrace.generate.presets import PRESETS
from rocetrace.generate.scenario import VANTAGES, Loss, PfcOnLoss, Scenario


def _presets_help() -> str:
    lines = ["\b", "Scenarios:"]
    for name, sc in PRESETS.items():
        wrapped = textwrap.wrap(sc.description, 66)
        lines.append(f"  {name:<19}{wrapped[0]}")
        lines += [" " * 21 + w for w in wrapped[1:]]
    return "\n".join(lines)


def _ints(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    return tuple(int(x, 0) for x in text.split(","))


def _speed(text: str | None) -> float | None:
    """'100G', '25g', '400e9' -> bits per second."""
    if text is None:
        return None
    scale = {"G": 1e9, "M": 1e6, "K": 1e3}.get(text[-1].upper())
    return float(text[:-1]) * scale if scale else float(text)


def _losses(o: dict[str, Any]) -> tuple[Loss, ...] | None:
    """--loss-* options replace the preset's losses with one rule."""
    psns, every, rate = _ints(o["loss_psns"]), o["loss_every"], o["loss_rate"]
    if not (psns or every or rate):
        return None
    return (
        Loss(psns=psns or (), every=every or 0, rate=rate or 0.0, direction=o["loss_direction"],
             kind=o["loss_kind"], before_mirror=o["loss_before_mirror"],
             first_only=o["loss_first_only"], spare_ack_req=o["loss_spare_ack_req"]),
    )  # fmt: skip


def _quirk_options(o: dict[str, Any]) -> dict[str, Any]:
    """Path and peer quirks: reordering, PFC after drops, MTU disagreement, QP reuse, both
    ends posting requests."""
    delay = _ints(o["reorder_delay_ns"])
    if delay is not None and len(delay) != 2:
        raise click.BadParameter("--reorder-delay-ns takes LO,HI")
    return {
        "reorder_rate": o["reorder_rate"], "reorder_delay_ns": delay,
        "responder_ooo": True if o["responder_ooo"] else None,
        "pfc_on_loss": PfcOnLoss() if o["pfc_on_loss"] else None,
        "responder_mtu": o["responder_mtu"], "qp_reuse_gap_us": o["qp_reuse_gap_us"],
        "responder_ops": tuple(o["responder_ops"].split(",")) if o["responder_ops"] else None,
    }  # fmt: skip


def _vantages(text: str | None) -> tuple[str, ...] | None:
    """'sender,receiver,mirror' -> a tuple; unknown names are a usage error."""
    if not text:
        return None
    names = tuple(v.strip() for v in text.split(","))
    unknown = [v for v in names if v not in VANTAGES]
    if unknown:
        raise click.BadParameter(f"unknown vantages {unknown}; use {', '.join(VANTAGES)}")
    return names


def _duration(text: str | None) -> int | None:
    try:
        return None if text is None else duration_ns(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc


def _clock_options(o: dict[str, Any]) -> dict[str, Any]:
    """--clock-* set every vantage's default clock; --clock VANTAGE:SETTINGS one vantage's."""
    jitter = _duration(o["clock_jitter"])
    return {
        "vantages": _vantages(o["vantages"]), "clocks": tuple(o["clock"]) or None,
        "clock_offset_ns": _duration(o["clock_offset"]), "clock_drift_ppm": o["clock_drift_ppm"],
        "clock_jitter_ns": None if jitter is None else abs(jitter),
    }  # fmt: skip


def _messages_for(sc: Scenario, packets: int) -> int:
    """Messages per QP so that the requests come to about `packets` packets."""
    per_msg = max(1, -(-sc.message_size // sc.mtu))
    qps = sc.qps * sc.requesters * sc.responders
    return max(1, -(-packets // (per_msg * qps)))


def overrides_from(name: str, o: dict[str, Any]) -> dict[str, Any]:
    base = PRESETS[name]
    ov: dict[str, Any] = {
        k: o[k]
        for k in ("qps", "requesters", "responders", "messages", "message_size", "mtu", "window",
                  "transport", "start_psn", "recovery", "timeout", "retry_cnt", "rnr_naks",
                  "vantage", "snaplen", "vlan", "vxlan_vni", "ecn", "dscp", "pcp", "ce_rate",
                  "cnp_interval_us", "capture_drop_rate", "capture_drop_burst", "max_packets",
                  "link_delay_ns")
    }  # fmt: skip
    ov.update(fmt=o["fmt"], link_speed_bps=_speed(o["link_speed"]), losses=_losses(o))
    ov.update(ops=tuple(o["ops"].split(",")) if o["ops"] else None)
    flags = {"ipv6": ("ip_version", 6), "roce_v1": ("roce_v1", True), "us": ("nanosecond", False),
             "cnp_on_oos": ("cnp_on_oos", True), "no_dcqcn": ("dcqcn", False),
             "udp_sport_collision": ("udp_sport_collision", True), "cm": ("cm", True)}  # fmt: skip
    ov.update({field: value for flag, (field, value) in flags.items() if o[flag]})
    ov["malformed"] = tuple(o["malformed"]) or None
    ov.update(_clock_options(o))
    ov.update(_quirk_options(o))
    if o["packets"]:
        ov["messages"] = _messages_for(base.with_overrides(**ov), o["packets"])
        ov["max_packets"] = max(o["max_packets"] or 0, 4 * o["packets"]) or None
    return {k: v for k, v in ov.items() if v is not None}


_OPTIONS = [
    click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path),
                 help="capture to write; the truth goes beside it as NAME.truth.json"),
    click.option("--seed", default=0, show_default=True, help="same seed, same bytes"),
    click.option("--packets", type=int, help="about this many request packets (sets --messages)"),
    click.option("--qps", type=int, help="QPs per requester/responder host pair"),
    click.option("--requesters", type=int, help="requester hosts"),
    click.option("--responders", type=int, help="responder hosts"),
    click.option("--messages", type=int, help="messages per QP"),
    click.option("--message-size", type=int, help="bytes per message"),
    click.option("--mtu", type=click.Choice(["256", "512", "1024", "2048", "4096"]),
                 callback=lambda c, p, v: int(v) if v else None),
    click.option("--ops", help="operations cycled per message: write,write_imm,send,send_imm,"
                 "read,cmp_swap,fetch_add"),
    click.option("--transport", type=click.Choice(["RC", "UC", "UD"])),
    click.option("--start-psn", type=lambda v: int(v, 0), help="first PSN of every QP"),
    click.option("--window", type=int, help="outstanding PSNs per QP"),
    click.option("--recovery", type=click.Choice(["go-back-n", "go-back-0", "selective-repeat"])),
    click.option("--timeout", type=int, help="ACK timeout exponent: 4.096 us * 2^N"),
    click.option("--retry-cnt", type=int),
    click.option("--rnr-naks", type=int, help="SENDs answered with RNR NAK"),
    click.option("--loss-psns", help="comma-separated PSNs lost once (0x.. allowed)"),
    click.option("--loss-every", type=int, help="drop every Nth matching packet"),
    click.option("--loss-rate", type=float, help="drop matching packets with this probability"),
    click.option("--loss-direction", default="request", show_default=True,
                 type=click.Choice(["request", "response", "any"])),
    click.option("--loss-kind", default="data", show_default=True,
                 type=click.Choice(["data", "ack", "nak", "read_response", "any"])),
    click.option("--loss-before-mirror", is_flag=True, help="the mirror does not see lost packets"),
    click.option("--loss-first-only", is_flag=True, help="only first transmissions are lost"),
    click.option("--loss-spare-ack-req", is_flag=True,
                 help="never lose a packet that requests an ACK (a NAK always follows)"),
    click.option("--pfc-on-loss", is_flag=True,
                 help="after each dropped request the switch pauses its sender (0-3 us later, "
                 "5-60 us)"),
    click.option("--reorder-rate", type=float,
                 help="share of request packets that cross the switch on a slower path"),
    click.option("--reorder-delay-ns", metavar="LO,HI", help="their extra delay range"),
    click.option("--responder-ooo", is_flag=True,
                 help="the responder accepts out-of-order requests (no NAK)"),
    click.option("--responder-mtu", type=click.Choice(["256", "512", "1024", "2048"]),
                 callback=lambda c, p, v: int(v) if v else None,
                 help="the responder's own (smaller) path MTU"),
    click.option("--responder-ops", help="the responders post these requests too, e.g. send"),
    click.option("--qp-reuse-gap-us", type=float,
                 help="then new connections reuse the QP numbers, this much later"),
    click.option("--vantage", type=click.Choice(["sender", "receiver", "mirror"])),
    click.option("--snaplen", type=int),
    click.option("--format", "fmt", type=click.Choice(["pcap", "pcapng"])),
    click.option("--us", is_flag=True, help="microsecond timestamps (every vantage's default)"),
    click.option("--vantages", help="several captures of one run, e.g. sender,receiver,mirror: "
                 "OUT.pcap becomes OUT.<vantage>.pcap each, one OUT.truth.json"),
    click.option("--clock", multiple=True, metavar="VANTAGE:SETTINGS",
                 help="one vantage's clock, e.g. receiver:offset=+30us,drift=5ppm,res=us "
                 "(also jitter=200ns, seed=N; unnamed settings keep the --clock-* defaults)"),
    click.option("--clock-offset", metavar="DURATION",
                 help="every vantage's clock offset, e.g. +30us, -1s (default 0)"),
    click.option("--clock-drift-ppm", type=float, help="every vantage's clock drift"),
    click.option("--clock-jitter", metavar="DURATION",
                 help="every vantage's stamp jitter: uniform in [-J, +J], seeded"),
    click.option("--link-speed", help="e.g. 100G, 25G"),
    click.option("--link-delay-ns", type=int),
    click.option("--ipv6", is_flag=True),
    click.option("--vlan", type=int, help="802.1Q VLAN ID (PCP from --pcp)"),
    click.option("--roce-v1", is_flag=True, help="EtherType 0x8915 + GRH instead of UDP"),
    click.option("--vxlan", "vxlan_vni", type=int, help="wrap in VXLAN with this VNI"),
    click.option("--ecn", type=click.IntRange(0, 3), help="ECN bits of RoCE traffic"),
    click.option("--dscp", type=click.IntRange(0, 63)),
    click.option("--pcp", type=click.IntRange(0, 7)),
    click.option("--ce-rate", type=float, help="probability of a CE mark per packet"),
    click.option("--cnp-interval-us", type=float, help="min_time_between_cnps"),
    click.option("--cnp-on-oos", is_flag=True, help="send a CNP with each PSN sequence NAK"),
    click.option("--no-dcqcn", is_flag=True, help="senders ignore CNPs"),
    click.option("--udp-sport-collision", is_flag=True, help="every QP on UDP source port 49152"),
    click.option("--cm", is_flag=True, help="RDMA CM setup MADs (REQ, REP, RTU) before each RC/UC "
                 "connection's traffic, DREQ/DREP after it"),
    click.option("--capture-drop-rate", type=float, help="chance a sniffer drop burst starts"),
    click.option("--capture-drop-burst", type=int, help="frames per sniffer drop burst"),
    click.option("--malformed", multiple=True,
                 type=click.Choice(["bad_icrc", "truncated_bth", "unknown_opcode"])),
    click.option("--max-packets", type=int, help="stop the model after this many packets"),
]  # fmt: skip


def _with_options(fn: Any) -> Any:
    for option in reversed(_OPTIONS):
        fn = option(fn)
    return fn


@click.command(epilog=_presets_help())
@click.argument("scenario", type=click.Choice(list(PRESETS)), metavar="SCENARIO")
@_with_options
def generate(scenario: str, output: Path, seed: int, **options: Any) -> None:
    """Write a synthetic RoCEv2 capture of SCENARIO with its exact ground truth.

    Options override parts of the preset; the same seed writes the same bytes.
    """
    from rocetrace.generate.run import generate as run

    try:
        truth = run(scenario, output, seed=seed, **overrides_from(scenario, options))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    except OSError as exc:
        raise OutputError(f"cannot write {output}: {exc}") from exc
    for shot in truth.captures.values():
        click.echo(f"{shot.path}: {len(shot.wire_ids)} frames", err=True)
    click.echo(f"truth in {truth.path}", err=True)
