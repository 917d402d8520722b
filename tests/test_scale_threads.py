"""Each Dask worker this host starts gets its share of the cores, and the decoder's walk
follows OMP_NUM_THREADS as Arrow does (rocetrace.scale.executor, rocetrace.capture.native)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from rocetrace.scale.executor import worker_environ


@pytest.mark.parametrize("workers", [1, 2, 3, 64])
def test_workers_share_the_cores(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    environ = worker_environ(workers)
    assert int(environ["OMP_NUM_THREADS"]) == max(1, 4 // workers)
    assert "MALLOC_TRIM_THRESHOLD_" not in environ  # it would fix glibc's mmap threshold


@pytest.mark.parametrize(("omp", "most"), [("1", 1), ("2", 2), ("", 2), ("x", 2)])
def test_the_walk_follows_omp_num_threads(omp: str, most: int) -> None:
    code = "from rocetrace.capture.native import THREADS; print(THREADS)"
    env = {**os.environ, "OMP_NUM_THREADS": omp}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == min(most, os.cpu_count() or 1)
