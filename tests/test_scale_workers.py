"""A local cluster's workers fork from a server that imported the task modules once, with
their share of the cores (rocetrace.scale.executor.start_worker_forkserver); the console
script with --workers gives the in-memory summary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What a worker sees as it runs its first task: its thread share, whether Dask's malloc
# variable reached it, whether the task modules were imported before the task.
PROBE = textwrap.dedent(
    """
    import json, os, sys
    from rocetrace.scale.executor import executor

    def probe(_):
        return (os.environ.get("OMP_NUM_THREADS"), "MALLOC_TRIM_THRESHOLD_" in os.environ,
                "rocetrace.scale.partition" in sys.modules)

    if __name__ == "__main__":
        seen = {}
        for workers in (2, 1):  # the second, of another size, cannot use the first's server
            with executor(workers) as ex:
                seen[workers] = ex.map(probe, list(range(workers)))
        print(json.dumps(seen))
    """
)


def test_workers_fork_ready_with_their_share(tmp_path: Path) -> None:
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    cores = os.cpu_count() or 1
    forked = [str(max(1, cores // 2)), False, True]
    assert seen["2"] == [forked, forked]
    spawned = [str(cores), False, False]  # spawned: its own share, modules not yet imported
    assert seen["1"] == [spawned]


def test_console_script_on_two_workers_gives_the_in_memory_summary(tmp_path: Path) -> None:
    sample = REPO / "samples" / "gbn-loss.pcap"
    summaries = {}
    for name, extra in (("memory", []), ("workers", ["--workers", "2"])):
        out = tmp_path / f"{name}.json"
        argv = ["analyze", str(sample), "--json", str(out), "--quiet", *extra]
        code = "import sys; from rocetrace.cli import entry_point; sys.argv[0] = 'rocetrace'; "
        run = subprocess.run(
            [sys.executable, "-c", code + "entry_point()", *argv], capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr[-2000:]
        summaries[name] = json.loads(out.read_text())
    assert summaries["workers"] == summaries["memory"]
