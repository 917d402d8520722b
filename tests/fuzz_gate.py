"""The fuzz gate CI runs (.ci/run): tens of thousands of hostile captures, summaries and bundles
through rocetrace in-process, then the CLI on hostile inputs for its exit statuses. It fails
on any uncaught exception or broken invariant, or when fewer cases ran than asked.

    python tests/fuzz_gate.py [--cases 22000] [--jobs N] [--seed 18] [--max-seconds 900]
                              [--json figures.json] [--only KIND:K] [--no-cli]

Derandomized: case k of a kind draws from Random(f"{seed}:{kind}:{k}") (tests/fuzz_cases.py),
so a failure names its kind and number and `--only KIND:K` runs it again. Seeds: sound
captures, sample frames, the summaries and bundles of sample analyses (tests/fuzz_seeds.py),
and the hostile corpus of tests/data/hostile/.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/: the fuzz_* modules

from fuzz_cases import KINDS, seeded
from fuzz_cli import cli_cases
from fuzz_seeds import Seeds, build_seeds

PLAN = {"capture": 0.66, "fields": 0.03, "summary": 0.19, "bundle": 0.12}
MIN_CASES = 20_000
BATCH = 50
Case = tuple[str, int]


@dataclass
class Tally:
    """Cases run per kind, the exit status each gave, and the failures."""

    cases: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)  # "kind:status"
    failures: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.cases.update(other.cases)
        self.statuses.update(other.statuses)
        self.failures += other.failures


_SEEDS: Seeds | None = None
_WORKDIR: Path | None = None


def _start_worker(scratch: str) -> None:
    """Seeds built once per process, in its own folder below the run's scratch folder."""
    global _SEEDS, _WORKDIR
    _WORKDIR = Path(tempfile.mkdtemp(dir=scratch))
    _SEEDS = build_seeds(_WORKDIR)


def run_batch(batch: list[Case], base: int, scratch: str) -> Tally:
    """Run cases in this process; every exception that is not a typed error is a failure."""
    if _SEEDS is None:
        _start_worker(scratch)
    assert _SEEDS is not None and _WORKDIR is not None
    tally = Tally()
    for kind, number in batch:
        tally.cases[kind] += 1
        try:
            status = KINDS[kind](number, seeded(kind, number, base), _SEEDS, _WORKDIR / "case")
        except Exception as exc:
            tally.failures.append(f"{kind}:{number}: {_where(exc)}")
            continue
        tally.statuses[f"{kind}:{status}"] += 1
    return tally


def _where(exc: BaseException) -> str:
    """The exception and the last frames of rocetrace (and the tests) it went through."""
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__) if "site-packages" not in f.filename
    ]
    lines = [f"  {f.filename}:{f.lineno} {f.name}" for f in frames[-4:]]
    return "\n".join([f"{type(exc).__name__}: {str(exc)[:300]}", *lines])


def plan(cases: int) -> list[Case]:
    """The cases of each kind, interleaved so a time cap shortens every kind alike."""
    per_kind = {kind: int(cases * share) for kind, share in PLAN.items()}
    per_kind["capture"] += cases - sum(per_kind.values())
    queues = {kind: [(kind, k) for k in range(n)] for kind, n in per_kind.items()}
    out: list[Case] = []
    while any(queues.values()):
        for kind, queue in queues.items():
            step = max(1, round(PLAN[kind] * 20))
            out += queue[:step]
            del queue[:step]
    return out


def run_cases(cases: list[Case], jobs: int, base: int, max_seconds: float) -> Tally:
    """Every case, on `jobs` processes; stops taking new batches after max_seconds. The
    cases' files live in one scratch folder (in memory where /dev/shm is), removed after."""
    batches = [cases[k : k + BATCH] for k in range(0, len(cases), BATCH)]
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="rocetrace-fuzz-", dir=memory) as scratch:
        if jobs <= 1:
            return _in_process(batches, base, scratch, time.monotonic() + max_seconds)
        return _on_workers(batches, base, scratch, jobs, time.monotonic() + max_seconds)


def _in_process(batches: list[list[Case]], base: int, scratch: str, deadline: float) -> Tally:
    global _SEEDS
    tally = Tally()
    for batch in batches:
        if time.monotonic() > deadline:
            break
        tally.add(run_batch(batch, base, scratch))
    _SEEDS = None  # the next run builds its seeds in its own scratch folder
    return tally


def _on_workers(
    batches: list[list[Case]], base: int, scratch: str, jobs: int, deadline: float
) -> Tally:
    tally = Tally()
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(jobs, initializer=_start_worker, initargs=(scratch,)) as pool:
        for part in pool.imap_unordered(_run, [(b, base, scratch) for b in batches]):
            tally.add(part)
            if time.monotonic() > deadline:
                break
    return tally


def _run(args: tuple[list[Case], int, str]) -> Tally:
    return run_batch(*args)


def _figures(tally: Tally, cli: dict[str, object], seconds: float) -> dict[str, object]:
    statuses: Counter[int] = Counter()
    for key, n in tally.statuses.items():
        statuses[int(key.split(":")[1])] += n
    return {
        "cases": sum(tally.cases.values()),
        "per_kind": dict(tally.cases),
        "exit_statuses": {str(k): n for k, n in sorted(statuses.items())},
        "per_kind_status": dict(sorted(tally.statuses.items())),
        "uncaught_exceptions": len(tally.failures),
        "cli": cli,
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=22_000)
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--max-seconds", type=float, default=900.0)
    parser.add_argument("--only", help="run one case again, e.g. bundle:1234")
    parser.add_argument("--no-cli", action="store_true", help="skip the CLI subprocess cases")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    started = time.monotonic()
    if args.only:
        kind, number = args.only.split(":")
        tally = run_cases([(kind, int(number))], 1, args.seed, args.max_seconds)
    else:
        tally = run_cases(plan(args.cases), args.jobs, args.seed, args.max_seconds)
    cli = {} if args.no_cli or args.only else cli_cases()
    figures = _figures(tally, cli, time.monotonic() - started)
    print(json.dumps(figures, indent=1))
    for failure in tally.failures[:20]:
        print(f"FAILED {failure}", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    short = not args.only and figures["cases"] < min(args.cases, MIN_CASES)  # type: ignore[operator]
    cli_failed = [name for name, run in cli.items() if not run["ok"]]  # type: ignore[index]
    if short:
        print(f"fuzz gate: only {figures['cases']} cases ran", file=sys.stderr)
    for name in cli_failed:
        print(f"FAILED cli {name}: {cli[name]}", file=sys.stderr)
    return 1 if tally.failures or short or cli_failed else 0


if __name__ == "__main__":
    sys.exit(main())
