"""One fuzz case of each kind, run in-process (tests/fuzz_gate.py runs thousands).

A case returns the exit status the CLI would give (0, or the typed error's status); any other
exception, or a broken invariant (AssertionError), is a failure of rocetrace. Kinds:
- capture: a seed capture mutated by one class of tests/fuzz_mutate.py, read whole; every
  20th also in small chunks and windows (the same rows), every 10th analysed and summarised,
  every 200th rendered; a pure truncation must be flagged as an incomplete tail exactly when
  it cuts a record;
- fields: a well-formed capture of real frames whose transport fields (opcode, PSN, QP,
  AETH, ECN, lengths, timestamps) are hostile, analysed and summarised;
- summary / bundle: a JSON summary or a saved bundle mutated as JSON, as a table or as bytes,
  loaded by `rocetrace report`'s loader, its report context built (every 10th rendered).
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from fuzz_mutate import MUTATIONS, json_text, mutate_json, record_starts
from fuzz_seeds import BundleSeed, Seeds

from rocetrace import analyze
from rocetrace.capture import read_capture, write_capture
from rocetrace.capture.export import decode_capture
from rocetrace.capture.packets import to_arrow
from rocetrace.capture.reader import iter_packet_columns
from rocetrace.errors import RocetraceError
from rocetrace.reports.bundle import TABLES, load_analysis
from rocetrace.reports.render import build_context, render_html
from rocetrace.reports.terminal import terminal_summary
from rocetrace.schema import ANOMALIES

CAPTURE_CLASSES = tuple(MUTATIONS)


def _status(exc: RocetraceError) -> int:
    return int(exc.exit_status)


def _check_decode(path: Path, blob: bytes, sound: bytes | None) -> None:
    """`rocetrace decode`'s library path (no pandas); a pure cut of a sound capture must be an
    incomplete tail exactly when it cuts a record, never damage."""
    info = decode_capture(path).info
    assert set(info.anomaly_counts) <= set(ANOMALIES), info.anomaly_counts
    if sound is not None and len(blob) > 24 and blob[:2] != b"\x1f\x8b":
        whole = len(blob) in record_starts(sound) or len(blob) == len(sound)
        assert info.corrupt_records == 0, f"a cut read as corrupt records: {info.corrupt_regions}"
        assert info.incomplete_tail != whole, f"cut at {len(blob)}: tail {info.incomplete_tail}"


def _arrow_rows(path: Path, **options: Any) -> list[dict[str, Any]]:
    """The packet table's rows through the pandas-free path (decode's)."""
    return [
        row
        for columns, _ in iter_packet_columns(path, **options)
        for row in to_arrow(columns).to_pylist()
    ]


def _check_chunks(path: Path) -> None:
    """Small chunks and windows give the rows of the whole file at once."""
    whole = _arrow_rows(path, chunk_packets=1 << 62, block_bytes=None)
    assert _arrow_rows(path, chunk_packets=3, block_bytes=97) == whole, "chunks differ"


def _analyse(source: object, context: bool, render: bool) -> None:
    """Analysis, its JSON summary (plain JSON, no NaN) and, when asked, the report's context
    (its figures and tables) or the whole report."""
    analysis = analyze(source)
    json.dumps(analysis.summary(), allow_nan=False)
    if render:
        render_html(analysis, plotlyjs="cdn", top_flows=2)
    elif context:
        build_context(analysis, top_flows=1)
        terminal_summary(analysis)


def capture_case(number: int, rng: random.Random, seeds: Seeds, path: Path) -> int:
    """Every case decoded; every 5th also in small chunks and windows, every 20th read as a
    pandas table and analysed."""
    klass = CAPTURE_CLASSES[number % len(CAPTURE_CLASSES)]
    pick = rng.randrange(len(seeds.captures))
    seed, other = seeds.captures[pick], rng.choice(seeds.captures)
    blob = MUTATIONS[klass](seed, rng, other)
    path.write_bytes(blob)
    sound = seed if klass == "truncate" and pick < seeds.sound else None
    try:
        _check_decode(path, blob, sound)
        if number % 5 == 0:
            _check_chunks(path)
        if number % 20 == 0:
            cap = read_capture(path)
            assert cap.info.packets == len(cap.packets), "packets counted differ from the table"
            _analyse(cap, context=number % 100 == 0, render=number % 1000 == 0)
    except RocetraceError as exc:
        return _status(exc)
    return 0


def _bth_at(frame: bytes) -> int:
    """Where a RoCEv2 frame's BTH is (Ethernet, 802.1Q tags, IPv4 or IPv6, UDP); -1 none."""
    at, etype = 12, 0
    while at + 2 <= len(frame):
        etype = int.from_bytes(frame[at : at + 2], "big")
        if etype not in (0x8100, 0x88A8):
            break
        at += 4
    if etype == 0x0800 and at + 3 <= len(frame):
        return at + 2 + (frame[at + 2] & 15) * 4 + 8
    return at + 2 + 40 + 8 if etype == 0x86DD else -1


def _hostile_frame(frame: bytes, rng: random.Random, qps: list[int]) -> bytes:
    """A frame with some transport fields made hostile."""
    out, b = bytearray(frame), _bth_at(frame)
    if b < 0 or b + 12 > len(out):
        return frame
    if rng.random() < 0.3:
        out[b] = rng.choice([rng.getrandbits(8), 0x11, 0x0D, 0x0C, 0x81, 0x04, 0x0A])
    if rng.random() < 0.5:
        psn = (int.from_bytes(out[b + 9 : b + 12], "big") + rng.randint(-5, 5)) % (1 << 24)
        out[b + 9 : b + 12] = (psn if rng.random() < 0.8 else rng.getrandbits(24)).to_bytes(
            3, "big"
        )
    if rng.random() < 0.3:
        out[b + 5 : b + 8] = rng.choice(qps).to_bytes(3, "big")
    if rng.random() < 0.2 and b + 13 <= len(out):
        out[b + 12] = rng.getrandbits(8)  # an AETH syndrome, or payload
    if rng.random() < 0.15:
        out[b + 1] = rng.getrandbits(8)  # SE, M, pad count, TVer
    if rng.random() < 0.1:
        at = rng.choice([16, 38, 15, 20, b - 4])  # IP / UDP lengths, TOS, fragment bits
        out[at : at + 2] = rng.getrandbits(16).to_bytes(2, "big")
    return bytes(out)


def _hostile_times(n: int, rng: random.Random) -> np.ndarray:
    start = rng.choice([0, 10**9, 1_700_000_000 * 10**9, (1 << 62)])
    steps = [rng.choice([0, 1, 80, 1000, 10**6, 10**9, -500]) for _ in range(n)]
    return np.asarray(np.cumsum([start, *steps[1:]]) if n else [], dtype=np.int64)


def fields_case(number: int, rng: random.Random, seeds: Seeds, path: Path) -> int:
    n = rng.randint(1, 80)
    first = rng.randrange(len(seeds.frames))
    picked = [seeds.frames[(first + k) % len(seeds.frames)] for k in range(n)]
    if rng.random() < 0.3:
        rng.shuffle(picked)
    qps = [rng.getrandbits(24) for _ in range(3)] + [0x12, 1]
    frames = [_hostile_frame(f, rng, qps) if rng.random() < 0.5 else f for f in picked]
    write_capture(path, _hostile_times(n, rng), frames)
    try:
        _analyse(path, context=number % 50 == 0, render=number % 500 == 0)
    except RocetraceError as exc:
        return _status(exc)
    return 0


def _load_and_render(path: Path, number: int, every: int) -> int:
    """`rocetrace report`'s loader, then the report's context: its tables and figures, one
    flow's PSN graph every 8th case; every `every`th the whole page."""
    try:
        analysis = load_analysis(path)
        if number % every == 0:
            render_html(analysis, plotlyjs="cdn", top_flows=2)
        else:
            build_context(analysis, top_flows=int(number % 8 == 0))
            terminal_summary(analysis)
    except RocetraceError as exc:
        return _status(exc)
    return 0


def summary_case(number: int, rng: random.Random, seeds: Seeds, path: Path) -> int:
    tree = mutate_json(rng.choice(seeds.summaries), rng)
    summary = path.with_suffix(".json")
    summary.write_bytes(json_text(tree, rng))
    return _load_and_render(summary, number, 10)


def _table_mutation(df: pd.DataFrame, rng: random.Random) -> pd.DataFrame:
    """A table made hostile: a column dropped, retyped, nulled or swapped; rows duplicated
    (duplicated flows) or dropped."""
    df = df.copy()
    choice = rng.randrange(8)
    if len(df.columns) == 0 or choice == 0:
        return df.iloc[0:0] if rng.random() < 0.5 else pd.concat([df, df], ignore_index=True)
    col = rng.choice(list(df.columns))
    if choice == 1:
        return df.drop(columns=col)
    if choice == 2:
        df[col] = df[col].astype(str)
    elif choice == 3:
        df[col] = [
            rng.choice([np.inf, -np.inf, np.nan, 1e300, -1.0, 2.0**63]) for _ in range(len(df))
        ]
    elif choice == 4:
        df[col] = [rng.random() < 0.5 for _ in range(len(df))]
    elif choice == 5:
        df[col] = df[col].astype(object).where([rng.random() < 0.5 for _ in range(len(df))], None)
    elif choice == 6:
        df[col] = np.array([rng.choice([2**64 - 1, 0, 2**63]) for _ in range(len(df))], np.uint64)
    else:
        df = df.rename(columns={col: rng.choice(list(df.columns))})
    return df


def _parquet(df: pd.DataFrame) -> bytes | None:
    buf = io.BytesIO()
    try:
        df.to_parquet(buf, index=False)
    except Exception:  # a mutation Parquet cannot store: the case mutates otherwise
        return None
    return buf.getvalue()


def _mutated_bundle(seed: BundleSeed, rng: random.Random) -> bytes:
    choice = rng.randrange(10)
    if choice < 2:
        klass = rng.choice(["bit_flips", "truncate", "byte_stores", "garbage"])
        return MUTATIONS[klass](seed.zip_bytes(), rng, b"")
    if choice < 5:
        return seed.zip_bytes(manifest=json_text(mutate_json(seed.manifest, rng), rng))
    name = rng.choice(TABLES)
    if choice == 5:
        data = MUTATIONS[rng.choice(["bit_flips", "truncate", "byte_stores"])](
            seed.parquet[name], rng, b""
        )
        return seed.zip_bytes(parquet={name: data})
    data = _parquet(_table_mutation(seed.tables[name], rng))
    return seed.zip_bytes(parquet={name: data if data is not None else b"PAR1"})


def bundle_case(number: int, rng: random.Random, seeds: Seeds, path: Path) -> int:
    bundle = path.with_suffix(".rocetrace")
    bundle.write_bytes(_mutated_bundle(rng.choice(seeds.bundles), rng))
    return _load_and_render(bundle, number, 40)


KINDS = {
    "capture": capture_case,
    "fields": fields_case,
    "summary": summary_case,
    "bundle": bundle_case,
}


def seeded(kind: str, number: int, base: int) -> random.Random:
    """The case's own generator: the same case from the same number, every run."""
    return random.Random(f"{base}:{kind}:{number}")
