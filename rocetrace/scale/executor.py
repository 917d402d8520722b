"""Where the tasks run: in this process one after the other, or as Dask tasks on a local
cluster (`--workers N`) or an existing one (`--scheduler ADDRESS`). Dask schedules; this
module only hands it the task functions (decode.py, partition.py) and gathers results, and
has a local cluster's workers fork from a server that imported them once.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Tick = Callable[[], None]


class Executor(Protocol):
    workers: int

    def map(self, fn: Callable[[T], R], items: Sequence[T], tick: Tick | None = None) -> list[R]:
        """fn over items (results in their order), `tick` after each finishes."""


class InProcess:
    """Tasks run in the caller, one at a time: the bounded-memory streaming of one process."""

    workers = 1

    def map(self, fn: Callable[[T], R], items: Sequence[T], tick: Tick | None = None) -> list[R]:
        out = []
        for item in items:
            out.append(fn(item))
            if tick:
                tick()
        return out


class DaskExecutor:
    """Tasks as Dask futures on a distributed cluster; the functions and their arguments
    are pickled to the workers, which read and write the shard folder themselves."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.workers = max(1, len(client.scheduler_info().get("workers", {})))

    def map(self, fn: Callable[[T], R], items: Sequence[T], tick: Tick | None = None) -> list[R]:
        from distributed import as_completed

        futures = self.client.map(fn, list(items), pure=False)
        for done in as_completed(futures):
            done.result()  # a failed task raises here, its own exception
            if tick:
                tick()
        results: list[R] = self.client.gather(futures)
        return results


@contextmanager
def executor(workers: int = 0, scheduler: str | None = None) -> Iterator[Executor]:
    """In this process (workers 0), a local Dask cluster of `workers` processes of one
    thread each, or the Dask cluster at `scheduler`."""
    if not workers and not scheduler:
        yield InProcess()
        return
    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            yield DaskExecutor(client)
        return
    method = worker_start_method(workers)
    # a forked worker has the fork server's environment: set in this process (as Dask sets
    # it before it spawns), the variables would only reach a later cluster's spawned workers
    spawned = worker_environ(workers) if method == "spawn" else {}
    settings = {
        "distributed.nanny.pre-spawn-environ": spawned,
        "distributed.worker.multiprocessing-method": method,
    }
    # dashboard on a free port: None does not turn it off (dask/distributed#8136) and the
    # default :8787 warns on the terminal whenever another cluster or Jupyter holds it
    with dask.config.set(settings):
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
            memory_limit=0, silence_logs=logging.ERROR,
        )  # fmt: skip
    with cluster, Client(cluster) as client:
        yield DaskExecutor(client)


def worker_environ(workers: int) -> dict[str, Any]:
    """The environment Dask sets before it spawns a worker, with each worker's share of
    this host's cores and without MALLOC_TRIM_THRESHOLD_.

    OMP_NUM_THREADS (which the decoder's walk and Arrow follow, capture/native.py) is the
    cores divided among the workers, where Dask sets 1: one worker on two cores keeps its
    walk's second thread, two workers on two cores do not start four threads.

    Dask's MALLOC_TRIM_THRESHOLD_, set at all (any of glibc's malloc variables), fixes the
    mmap threshold at 128 kB, so every array the decoder and the analysis allocate is a
    fresh mmap, faulted in page by page (10M packets on 1 worker: 5.5 s of 18 in the
    kernel, 2.3 s without). Without it the workers' heap behaves as this process' does
    when it streams alone. (Keeping 256 MB or 1 GB of freed heap per worker instead gained
    at most ~0.3 s of 9 at 10M packets on 2 workers, within the noise, and held each
    worker at its peak: 50M packets on 2 workers peaked at 2.8 GB with 1 GB kept.)"""
    import dask

    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    environ["OMP_NUM_THREADS"] = max(1, (os.cpu_count() or 1) // max(1, workers))
    return environ


# What a forked worker needs before its first task: importing them once in the fork server
# spares each worker importing them itself (~0.5 s each, in parallel with the others).
FORKSERVER_PRELOAD = ("distributed", "rocetrace.scale.segment_decode", "rocetrace.scale.partition")
_forkserver_workers: list[int] = []  # the worker count whose environment our fork server has


def start_worker_forkserver(workers: int) -> None:
    """Start the process this host's Dask workers fork from, with `workers`' environment,
    once per process, as early as the command knows it wants workers.

    Spawned, each worker starts a fresh interpreter and imports Dask, then pandas, pyarrow
    and the task modules on its first task: ~1 s before a worker does any work, and ~0.3 s
    more to tear the interpreter down at the end, every run (10M packets on 2 workers:
    ~1.5 s of ~11). Forked from a server that imported all that once, a worker is ready at
    once and exits at once; started before the caller imports the analysis, the server
    imports beside it on another core. The server (multiprocessing's forkserver) is a
    fresh process that only imports, so forking it is safe where forking the caller, with
    Dask's and the import threads running, would not be (its one other thread, jemalloc's
    idle background thread from pyarrow, is covered by jemalloc's own fork handlers).

    A forked worker keeps the server's environment, not the one Dask sets before it
    spawns (its pre-spawn-environ): the server is started with worker_environ's
    variables, which set each worker's share of the cores when numpy, pyarrow and the
    decoder are imported."""
    if _forkserver_workers or "forkserver" not in multiprocessing.get_all_start_methods():
        return
    from multiprocessing import forkserver

    if getattr(forkserver._forkserver, "_forkserver_pid", None) is not None:
        return  # another part of this program started one: its environment is not ours
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(FORKSERVER_PRELOAD))
    # as Dask's pre-spawn variables: what the environment already says wins
    wanted = {k: str(v) for k, v in worker_environ(workers).items() if k not in os.environ}
    with _environ_set(wanted):
        forkserver.ensure_running()
    _forkserver_workers.append(workers)


@contextmanager
def _environ_set(changes: dict[str, str]) -> Iterator[None]:
    """os.environ with `changes` for the while (a child process started then inherits them)."""
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def worker_start_method(workers: int) -> str:
    """How a local cluster of `workers` starts its workers: forked from the server
    start_worker_forkserver started (started now if not yet) when its environment is
    theirs, else spawned (a later cluster of another size in the same process)."""
    start_worker_forkserver(workers)
    return "forkserver" if _forkserver_workers == [workers] else "spawn"
