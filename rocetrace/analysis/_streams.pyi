# The C module rocetrace.analysis._streams (rocetrace/analysis/_streams.c). Arrays are any
# C-contiguous buffers of the stated element type; native.py wraps each function.
from typing import Any

# fmt: off

Array = Any

SOURCE_HASH: str

def scan_stream(
    flow: Array, psn: Array, span: Array | None, first: Array, ext: Array, end: Array | None,
    high: Array, resent: Array, gap: Array, /,
) -> None: ...
def read_gaps(
    keys: Array, starts: Array, ends: Array, high: Array, needle: Array, ext: Array,
    first_read: Array, gap: Array, /,
) -> None: ...
