"""The C scans of the analysis (rocetrace.analysis._streams, built at install time), loaded
and checked against the sources beside them, behind typed numpy wrappers."""

from __future__ import annotations

import numpy as np

from rocetrace._source_hash import check_build_is_current

try:
    import rocetrace.analysis._streams as _streams
except ImportError as exc:
    raise ImportError(
        f"rocetrace's C module rocetrace.analysis._streams does not load ({exc}); it is "
        "compiled when rocetrace is installed: rebuild it with `python3 -m pip install -e .` "
        "in the rocetrace checkout (needs gcc and the Python headers)"
    ) from exc

check_build_is_current("rocetrace.analysis._streams", _streams.SOURCE_HASH)

NONE = np.int64(_streams.NONE)  # "no earlier row": far below any PSN, safe to subtract from


def _int64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.int64)


def scan_stream(
    flow: np.ndarray, psn: np.ndarray, span: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    """Rows sorted by (flow, frame), in one pass: (first row of its flow, unwrapped PSN, last
    PSN occupied, highest last PSN earlier in the flow (NONE at its first row), resent, PSNs
    skipped just before it). `span`: PSNs each row occupies, None for one each."""
    n = len(flow)
    first, resent = np.empty(n, bool), np.empty(n, bool)
    ext, high, gap = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    end = None if span is None else np.empty(n, np.int64)
    span_in = None if span is None else _int64(span)
    _streams.scan_stream(_int64(flow), _int64(psn), span_in, first, ext, end, high, resent, gap)
    return first, ext, ext if end is None else end, high, resent, gap


def max_before(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per group (a run starting where `starts` is True), the maximum of the earlier values;
    NONE on each group's first row."""
    out = np.empty(len(values), np.int64)
    _streams.max_before(np.ascontiguousarray(starts, bool), _int64(values), out)
    return out
