# The C module rocetrace.analysis._connection (rocetrace/analysis/_connection.c). Arrays are
# any C-contiguous buffers of the stated element type; connection.py wraps it.
from typing import Any

# fmt: off

Array = Any

SOURCE_HASH: str
EPISODE_FIELDS: int
CONV_FIELDS: int

def run(
    conv: Array, ts: Array, kind: Array, psn: Array, span: Array, opcode: Array, pos: Array,
    ext: Array, gap: Array, episode: Array, link: Array, flags: Array, history: Array,
    conv_out: Array, gate: Array, paused: Array, reserved: Array, tol: int, /,
) -> tuple[bytes, bytes]: ...
