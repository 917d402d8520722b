"""A chunk's rows put in partition order for the shards (rocetrace.scale.shards.reordered):
the same table as Arrow's take, though the columns null throughout are made anew."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from rocetrace.capture.packets import to_arrow
from rocetrace.capture.reader import iter_packet_columns
from rocetrace.scale.shards import reordered
from tests.conftest import SAMPLES


def test_reordered_is_take() -> None:
    rng = np.random.default_rng(7)
    for name in ("pfc-storm", "gbn-loss", "ecn-cnp"):
        for packets, _ in iter_packet_columns(SAMPLES / f"{name}.pcap"):
            table = to_arrow(packets)
            order = rng.permutation(table.num_rows)
            nulls = [c for c in table.column_names if table[c].null_count == table.num_rows]
            assert nulls  # the case it is for: columns null throughout
            got = reordered(table, order)
            assert got.equals(table.take(pa.array(order)))
            assert got.schema.equals(table.schema, check_metadata=True)
