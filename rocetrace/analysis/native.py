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


def _int64(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a, np.int64)


def scan_stream(
    flow: np.ndarray, psn: np.ndarray, span: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    """Rows sorted by (flow, frame), in one pass: (first row of its flow, unwrapped PSN, last
    PSN occupied, highest last PSN earlier in the flow (very negative at its first row),
    resent, PSNs skipped just before it). `span`: PSNs each row occupies, None for one each."""
    n = len(flow)
    first, resent = np.empty(n, bool), np.empty(n, bool)
    ext, high, gap = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    end = None if span is None else np.empty(n, np.int64)
    span_in = None if span is None else _int64(span)
    _streams.scan_stream(_int64(flow), _int64(psn), span_in, first, ext, end, high, resent, gap)
    return first, ext, ext if end is None else end, high, resent, gap


def read_gaps(
    keys: np.ndarray, starts: np.ndarray, ends: np.ndarray, needle: np.ndarray,
    ext: np.ndarray, first_read: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Per READ response row (in stream order), the response PSNs skipped inside its READ
    before it; 0 for a row inside no READ. READs: sorted `keys` (flow and first PSN packed),
    first and last response PSN. Rows: packed key, PSN, index of the requesting flow's first
    READ (all READ indices must be valid)."""
    gap = np.empty(len(needle), np.int64)
    high = np.full(len(keys), -1, np.int64)
    _streams.read_gaps(
        _int64(keys), _int64(starts), _int64(ends), high, _int64(needle), _int64(ext),
        _int64(first_read), gap,
    )  # fmt: skip
    return gap
