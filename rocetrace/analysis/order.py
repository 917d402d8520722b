"""One stable sort of the frames by flow, made once and reused by every per-flow pass.

Flow ids are small codes, so the sort is linear in the number of frames, where a general
sort of a million frames costs ~30 ms: Arrow's counting sort (~2 ms) for up to 4096 codes,
numpy's radix sort of 16-bit keys (~3.5 ms) for up to 65535.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# Arrow counting-sorts integers whose max - min is at most 4096 (measured with pyarrow 26;
# past it, a comparison sort ~6x slower than numpy's radix sort).
_COUNTING_LIMIT = 4096
_RADIX_LIMIT = int(np.iinfo(np.uint16).max)


def stable_order(codes: np.ndarray, n_codes: int) -> np.ndarray:
    """argsort(codes, kind="stable") for codes in [0, n_codes]: a counting or radix sort
    when they are few. The result may be read-only (a view of Arrow's buffer)."""
    if n_codes <= _COUNTING_LIMIT:
        by = pc.sort_indices(pa.array(codes.astype(np.uint16, copy=False)))
        return by.to_numpy(zero_copy_only=True).view(np.int64)  # indices < 2^63: same values
    if n_codes <= _RADIX_LIMIT:
        return np.argsort(codes.astype(np.uint16), kind="stable")
    return np.argsort(codes, kind="stable")


def group_starts(groups: np.ndarray) -> np.ndarray:
    """True on the first row of each run of equal values."""
    starts = np.ones(len(groups), bool)
    starts[1:] = groups[1:] != groups[:-1]
    return starts


def rank_in_group(groups: np.ndarray) -> np.ndarray:
    """0, 1, 2... within each run of equal values (rows already sorted by group)."""
    starts = np.flatnonzero(group_starts(groups))
    first = np.repeat(starts, np.diff(np.append(starts, len(groups))))
    return np.arange(len(groups)) - first


@dataclass
class FlowOrder:
    """The frames of each flow in capture order: rows[bounds[f]:bounds[f + 1]] is flow f."""

    rows: np.ndarray  # frame indices (int32), sorted by (flow, frame)
    bounds: np.ndarray  # n_flows + 1 offsets into rows

    @cached_property
    def flow(self) -> np.ndarray:
        """Flow id of each row; made on first use, as most passes need only the bounds."""
        return np.repeat(np.arange(len(self.bounds) - 1, dtype=np.int64), np.diff(self.bounds))

    @cached_property
    def _packed(self) -> np.ndarray:
        """(flow << 40) | row per row: sorted, for searches by (flow, frame index)."""
        key = np.repeat(np.arange(len(self.bounds) - 1, dtype=np.int64) << 40, np.diff(self.bounds))
        key |= self.rows
        return key

    def _flows_at(self, positions: np.ndarray) -> np.ndarray:
        """The flow of each of the sorted `positions` into rows (no per-row flow array)."""
        per_flow = np.diff(np.searchsorted(positions, self.bounds))
        return np.repeat(np.arange(len(self.bounds) - 1, dtype=np.int64), per_flow)

    def select(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(frame indices, their flows) where `mask` holds, sorted by (flow, frame)."""
        keep = np.flatnonzero(mask[self.rows])  # take() by position: far faster than a[mask]
        return self.rows[keep], self._flows_at(keep)

    def rows_of(self, flows: np.ndarray) -> np.ndarray:
        """Frame indices of the given flows, sorted by (flow, frame)."""
        wanted = np.zeros(len(self.bounds) - 1, bool)
        wanted[flows] = True
        return self.rows[np.flatnonzero(np.repeat(wanted, np.diff(self.bounds)))]

    def last_before(self, flows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Per (flow, frame index): that flow's latest frame before the index, -1 when none."""
        pos = np.searchsorted(self._packed, (flows << 40) | idx) - 1
        found = pos >= self.bounds[flows]
        return np.where(found, self.rows[np.maximum(pos, 0)], -1)

    def frames_of(self, flow: int) -> np.ndarray:
        """Frame indices of one flow, in capture order."""
        return self.rows[self.bounds[flow] : self.bounds[flow + 1]]

    def first_rows(self) -> np.ndarray:
        """Per flow, the index of its first frame (flows have at least one frame)."""
        return self.rows[self.bounds[:-1]]

    def last_rows(self) -> np.ndarray:
        """Per flow, the index of its last frame."""
        return self.rows[self.bounds[1:] - 1]


def counts_by(flow_id: np.ndarray, n_flows: int, values: np.ndarray, width: int) -> np.ndarray:
    """(n_flows, width) counts of each value in [0, width) per flow, in one bincount."""
    codes = np.where(flow_id >= 0, flow_id, n_flows) * width + values
    return np.bincount(codes, minlength=(n_flows + 1) * width).reshape(n_flows + 1, width)[:-1]


def flow_order(flow_id: np.ndarray, n_flows: int) -> FlowOrder:
    """Sort the frames that belong to a flow (flow_id >= 0) by flow, keeping capture order.
    The bounds come from a binary search through the sort (no counting pass over frames)."""
    outside = flow_id < 0
    codes = np.where(outside, n_flows, flow_id) if outside.any() else flow_id
    by_flow = stable_order(codes, n_flows)
    flows = np.arange(n_flows + 1, dtype=np.int64)
    bounds = np.searchsorted(codes, flows, sorter=by_flow).astype(np.int64, copy=False)
    # int32 rows (a partition has fewer than 2^31 frames): the order lives through the
    # whole analysis, and int64 held 4 MB more per million frames at its peak
    return FlowOrder(by_flow[: bounds[-1]].astype(np.int32), bounds)
