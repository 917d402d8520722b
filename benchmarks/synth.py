"""A large RoCEv2 capture for the decode benchmark, built with numpy (no loop per packet).

Several RC queue pairs each carry a mix of RDMA WRITE (first/middle/last), SEND ONLY, ACK,
READ REQUEST and READ RESPONSE (first/middle/last); frames are cut at the snap length as
`tcpdump -s 128` would. Frames captured whole (ACK, READ REQUEST) carry a correct ICRC.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from rocetrace.capture import write_capture
from rocetrace.capture.roce import icrc
from rocetrace.dissectors.aeth import AETH
from rocetrace.dissectors.bth import BTH
from rocetrace.dissectors.icrc import crc32_table
from rocetrace.dissectors.opcodes import OPCODES
from rocetrace.dissectors.reth import RETH

ETH, IP, UDP = 14, 20, 8
BTH_AT = ETH + IP + UDP
MTU = 1024
# (opcode, payload bytes, relative frequency)
MIX = (
    (0x06, MTU, 4), (0x07, MTU, 8), (0x08, MTU, 4), (0x04, 512, 6), (0x11, 0, 10),
    (0x0C, 0, 2), (0x0D, MTU, 2), (0x0E, MTU, 3), (0x0F, MTU, 2),
)  # fmt: skip


def _template(opcode: int, payload: int) -> tuple[bytes, int]:
    """Headers of one packet kind (payload and ICRC left zero) and its wire length."""
    ext = b"".join(
        RETH.encode(va=0x7F0000001000, r_key=0x1234, dma_length=65536)
        if h is RETH
        else AETH.encode(syndrome=0x1F, msn=1)
        if h is AETH
        else bytes(h.size)
        for h in OPCODES[opcode].headers
    )
    bth = BTH.encode(opcode=opcode, pkey=0xFFFF, dest_qp=0x11, ack_req=1, psn=0)
    roce = len(bth) + len(ext) + payload + 4
    udp = (4791).to_bytes(2, "big") * 2 + (UDP + roce).to_bytes(2, "big") + bytes(2)
    ip = bytes([0x45, 0x1A]) + (IP + UDP + roce).to_bytes(2, "big") + bytes(4)
    ip += bytes([64, 17, 0, 0]) + bytes([10, 0, 0, 1, 10, 0, 0, 2])
    eth = bytes.fromhex("020000000002020000000001") + b"\x08\x00"
    frame = eth + ip + udp + bth + ext
    return frame, len(frame) + payload + 4


@njit(cache=True)
def _seal(frames, width, caps, wires, table):  # type: ignore[no-untyped-def]
    """Write the ICRC of every frame captured whole."""
    for i in range(len(caps)):
        if caps[i] == wires[i]:
            b = i * width
            crc = icrc(frames, b, ETH, BTH_AT, wires[i], True, table)
            for k in range(4):
                frames[b + wires[i] - 4 + k] = (crc >> (8 * k)) & 0xFF


def synth_capture(
    path: Path, n: int = 1_000_000, snaplen: int = 128, qps: int = 16, seed: int = 1
) -> Path:
    """Write an n-packet capture; returns its path."""
    rng = np.random.default_rng(seed)
    weights = np.array([w for _, _, w in MIX], float)
    kind = rng.choice(len(MIX), size=n, p=weights / weights.sum())
    temps = [_template(op, pl) for op, pl, _ in MIX]
    width = max(snaplen, max(len(t) for t, _ in temps) + 4)
    table = np.zeros((len(MIX), width), np.uint8)
    for k, (t, _) in enumerate(temps):
        table[k, : len(t)] = np.frombuffer(t, np.uint8)
    frames = table[kind]
    wires = np.array([w for _, w in temps], np.int64)[kind]
    qp = rng.integers(0, qps, size=n)
    order = np.argsort(qp, kind="stable")
    psn = np.empty(n, np.int64)
    psn[order] = np.arange(n) - np.searchsorted(qp[order], qp[order])  # rank within its QP
    _put(frames, BTH_AT + 5, 0x100 + qp, 3)
    _put(frames, BTH_AT + 9, psn & 0xFFFFFF, 3)
    _put(frames, ETH + 15, 1 + qp % 4, 1)  # source host 10.0.0.1..4
    _put(frames, ETH + IP, 49152 + qp, 2)  # UDP source port: per-QP entropy
    caps = np.minimum(wires, snaplen)
    flat = frames.reshape(-1)
    _seal(flat, width, caps, wires, crc32_table())
    ts = 1_700_000_000_000_000_000 + np.cumsum(rng.integers(80, 400, size=n))
    offsets = np.arange(n, dtype=np.int64) * width
    return write_capture(path, ts, (flat, offsets, caps), snaplen=snaplen, wire_lens=wires)


def _put(frames: np.ndarray, at: int, values: np.ndarray, width: int) -> None:
    """Store big-endian integers of `width` bytes at column `at` of every frame row."""
    for k in range(width):
        frames[:, at + k] = (values >> (8 * (width - 1 - k))) & 0xFF
