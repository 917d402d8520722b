"""Python's cyclic garbage collector held off while the console script imports a command's
libraries (numpy, pyarrow, pandas, the analysis).

Those imports create some 100k long-lived objects, and the collector, run after every 700
new ones, walks them again and again to free nothing: ~50 ms of the CPU of a 1M-packet
`analyze --json` (170 collections freed ~700 objects), ~12 ms of `decode`'s, on the start-up
path both wait for. The console script pauses it (cli.entry_point); a command resumes it
once its imports are done, the objects made so far frozen (gc.freeze: never walked again;
only enabling it again would walk every one of them at once in the next collections, which
cost more than the pause saved). What is frozen stays: at that point ~400 small objects
(classes and closures the imports made and dropped in cycles, ~0.1 MB) and no array are
garbage, measured on the 1M capture and the samples. A program that calls rocetrace (or
cli.main) never pauses it, so `resume` leaves the collector alone there.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    """Hold collection off until `resume` (when it runs at all: it may be disabled already)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collect again, what exists frozen, if `pause` held it off; otherwise nothing (safe
    from any thread, and twice)."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
