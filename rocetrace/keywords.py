"""Keyword arguments checked by name: a typo is a TypeError naming the closest option,
never silently ignored (`rocetrace.analyze(p, link_sped="25G")` used to run at 100G)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any


def reject_unknown(where: str, given: dict[str, Any], allowed: Iterable[str]) -> None:
    """Raise TypeError for the first keyword of `given` that is not `allowed`."""
    options = sorted(allowed)
    for name in given:
        if name in options:
            continue
        close = difflib.get_close_matches(name, options, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (options: {', '.join(options)})"
        raise TypeError(f"{where}() got an unexpected keyword argument {name!r}{hint}")
