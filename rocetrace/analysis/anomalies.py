"""Named protocol anomalies ("weirds", as Zeek calls them): what a connection did that is
neither normal traffic nor a retransmission, each pointing to its frames.

- `psn_reuse`: a new request at a PSN an earlier request already took; after a READ, the
  requester and responder disagree on the path MTU (the READ took more response PSNs than
  the requester counted), and the message names both MTUs.
- `ack_unsent_psn`: an ACK or NAK of a PSN the requester never sent.
- `stall`: requests outstanding and no progress from the last ACK to the end of the
  capture, for longer than any ACK took.
- `qp_reuse`: a QP number taken again by a new CM connection (new starting PSN): a new
  flow begins there.
- `reordering`: a first copy of a skipped PSN that came sooner than any resend could: a
  late original (packet spraying, adaptive routing), not a loss.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from rocetrace.analysis import connection as cn
from rocetrace.analysis.flows import FlowModel
from rocetrace.analysis.prepared import (
    POS_FIRST,
    POS_MIDDLE,
    READ_RESPONSE,
    Prepared,
    isin_small,
)
from rocetrace.analysis.tolerances import MIN_ACK_TIMEOUT_NS
from rocetrace.psn import PSN_MOD

ANOMALY_COLUMNS = ["code", "flow_id", "ts_ns", "frame", "frames", "message"]
IB_MTUS = (256, 512, 1024, 2048, 4096)
_CODES = {cn.ANOMALY_REUSE: "psn_reuse", cn.ANOMALY_UNSENT: "ack_unsent_psn"}
_CODES[cn.ANOMALY_REORDER] = "reordering"


def _frame(c: cn.Conversations, pp: Prepared, ev: int) -> int:
    return int(pp.frames_at(np.array([c.row[ev]]))[0]) if ev >= 0 else -1


def _row(code: str, flow: int, ts: int, frames: list[int], message: str) -> dict:
    frames = [f for f in frames if f >= 0]
    return {"code": code, "flow_id": flow, "ts_ns": ts, "frame": frames[0] if frames else -1,
            "frames": frames, "message": message}  # fmt: skip


def _read_mtu(length: int, psns: int) -> int | None:
    """The IB path MTU under which a READ of `length` bytes takes `psns` response PSNs
    (the smallest that does), None when none does."""
    fits = [m for m in IB_MTUS if -(-length // m) == psns]
    return fits[0] if fits else None


def _responder_mtu(pp: Prepared, model: FlowModel, conv: int) -> int | None:
    """The path MTU the responder uses: its largest FIRST/MIDDLE READ response payload."""
    pair = int(model.pair[conv]) if conv < len(model.pair) else -1
    if pair < 0:
        return None
    rows = model.order.frames_of(pair)
    full = rows[
        (pp.kind[rows] == READ_RESPONSE) & isin_small(pp.position[rows], (POS_FIRST, POS_MIDDLE))
    ]
    return int(pp.column("payload_len", full).max()) if len(full) else None


def _psn_reuse(c: cn.Conversations, pp: Prepared, model: FlowModel, a: np.void) -> dict:
    """A request reusing a PSN; when the PSN was a READ's, name both ends' path MTUs."""
    ev, orig = int(a["ev"]), int(a["other_ev"])
    psn = int(c.ext[ev] % PSN_MOD)
    frames = [_frame(c, pp, ev), _frame(c, pp, orig)]
    message = f"request at PSN {psn} reuses a PSN the request in frame {frames[1]} already took"
    if orig >= 0 and pp.read_request[c.row[orig]]:
        length = int(pp.dma_length_at(np.array([c.row[orig]]))[0])
        counted = int(c.ext[ev] - c.ext[orig])
        responder = _responder_mtu(pp, model, int(a["conv"]))
        taken = -(-length // responder) if responder else None
        requester = _read_mtu(length, counted) if counted > 0 else None
        message = (
            f"request at PSN {psn} reuses a PSN of the {length}-byte READ in frame "
            f"{frames[1]}: the responder answers it in {taken} response PSNs (path MTU "
            f"{responder}) but the requester counted {counted} (path MTU {requester}): "
            "requester and responder disagree on the path MTU"
        )
    return _row("psn_reuse", int(a["conv"]), int(c.ts[ev]), frames, message)


def _from_machine(c: cn.Conversations, pp: Prepared, model: FlowModel) -> list[dict]:
    out = []
    for a in c.anomalies:
        ev, kind = int(a["ev"]), int(a["kind"])
        if kind == cn.ANOMALY_REUSE:
            out.append(_psn_reuse(c, pp, model, a))
            continue
        psn = int(c.ext[ev] % PSN_MOD)
        if kind == cn.ANOMALY_UNSENT:
            message = f"ACK/NAK of PSN {psn}, which the requester never sent"
        else:
            message = f"PSN {psn} arrived late, with no resend: reordered, not lost"
        flow = int(model.flow_id[c.row[ev]])
        frames = [_frame(c, pp, ev), _frame(c, pp, int(a["other_ev"]))]
        out.append(_row(_CODES[kind], flow, int(c.ts[ev]), frames, message))
    return out


def _stalls(c: cn.Conversations, pp: Prepared, end_ns: int | None) -> list[dict]:
    """Conversations with requests outstanding and no progress from their last progress to
    the end of the capture (`end_ns`, else the table's last timestamp), for longer than the
    shortest ACK timer and twice their slowest ACK: the requester gave up or waits for
    something that never comes."""
    out: list[dict] = []
    end = int(pp.ts.max(initial=0)) if end_ns is None else end_ns
    state = c.state
    outstanding = np.flatnonzero(state[:, cn.CONV_FIELDS.index("outstanding")] > 0)
    if not len(outstanding):  # nothing can have stalled: no slowest answers to weigh
        return out
    slowest = cn.slowest_answers(c)
    for conv in outstanding:
        progress = int(state[conv, cn.CONV_FIELDS.index("progress_ev")])
        last = int(state[conv, cn.CONV_FIELDS.index("last_ev")])
        since = c.ts[progress] if progress >= 0 else c.ts[np.searchsorted(c.conv, conv)]
        quiet = end - int(since)
        if quiet < max(MIN_ACK_TIMEOUT_NS, 2 * int(slowest[conv])):
            continue
        frames = [_frame(c, pp, progress), _frame(c, pp, last)]
        message = (
            f"requests outstanding and no progress for {quiet / 1e6:.3f} ms, until the capture "
            "ends: the QP stalled"
        )
        out.append(_row("stall", int(conv), int(since), frames, message))
    return out


def _qp_reuse(pp: Prepared, model: FlowModel, conns: pd.DataFrame | None) -> list[dict]:
    """Flows that share their key with an earlier flow: a new CM connection took the QP
    number again (flows.split_by_connection)."""
    if conns is None or len(model) == 0:
        return []
    keys = (model.src << 44) | (model.dst << 24) | model.qp
    out = []
    _, first = np.unique(keys, return_index=True)
    for f in np.setdiff1d(np.arange(len(model)), first):
        row = int(model.order.first_rows()[f])
        message = (
            f"QP {int(model.qp[f]):#x} taken again by a new connection (PSN "
            f"{int(pp.psn[row])}): a new flow from here"
        )
        out.append(
            _row(
                "qp_reuse",
                int(f),
                int(pp.ts[row]),
                [int(pp.frames_at(np.array([row]))[0])],
                message,
            )
        )
    return out


def anomaly_table(
    c: cn.Conversations,
    pp: Prepared,
    model: FlowModel,
    conns: pd.DataFrame | None,
    end_ns: int | None = None,
) -> pd.DataFrame:
    """Every named anomaly, by time; `end_ns`: when the capture ends (a partition of it is
    given the capture's last timestamp)."""
    rows = [*_from_machine(c, pp, model), *_stalls(c, pp, end_ns), *_qp_reuse(pp, model, conns)]
    df = pd.DataFrame(rows, columns=ANOMALY_COLUMNS)
    df = df.astype({"flow_id": np.int64, "ts_ns": np.int64, "frame": np.int64})
    return df.sort_values(["ts_ns", "frame"], kind="stable").reset_index(drop=True)
