"""How `rocetrace analyze` reads its inputs: in memory (the fast default for a capture that
fits) or streamed in bounded memory through shards (above the memory limit, or when asked
for workers, a scheduler or a kept work folder), and a shard folder re-analysed as it is.
"""

from __future__ import annotations

import importlib
import os
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocetrace import collector

IN_MEMORY_BYTES_PER_PACKET = 450  # peak RSS of the in-memory analysis, per packet (1M: 448 MB)
BYTES_PER_PACKET = 140  # a capture at snap length 128, to guess packets from file sizes
GZIP_GROWTH = 5  # a gzip capture's packets per compressed byte, against an uncompressed one


@dataclass(frozen=True)
class ScaleOptions:
    """What decides where and how a capture is analysed (the CLI's scale options)."""

    workers: int = 0
    scheduler: str | None = None
    workdir: Path | None = None
    memory_limit: int | None = None  # bytes; None: auto (default_memory_limit)
    quiet: bool = False
    partitions: int | None = None

    @property
    def distributed(self) -> bool:
        return bool(self.workers or self.scheduler)


def default_memory_limit() -> int:
    """A quarter of the machine's memory, at most 4 GiB: beyond it, stream."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return int(min(total // 4, 4 << 30))


def estimated_peak(paths: list[str]) -> int:
    """The in-memory analysis' peak RSS for these files, guessed from their sizes."""
    total = 0
    for p in paths:
        if p == "-" or not Path(p).is_file():
            continue
        size = Path(p).stat().st_size
        total += size * (GZIP_GROWTH if p.endswith(".gz") else 1)
    return total // BYTES_PER_PACKET * IN_MEMORY_BYTES_PER_PACKET


def wants_streaming(paths: list[str], opts: ScaleOptions) -> bool:
    """Stream when asked to (workers, scheduler, a work folder) or when the in-memory
    analysis would pass the memory limit; stdin is read in memory."""
    if opts.distributed or opts.workdir is not None:
        return True
    if "-" in paths:
        return False
    limit = opts.memory_limit if opts.memory_limit is not None else default_memory_limit()
    return estimated_peak(paths) > limit


def streamed(inputs: list[str], opts: ScaleOptions) -> bool:
    """Whether analyze_inputs streams these inputs (then it shows its own progress bars)."""
    from rocetrace.scale.shard_folder import is_shard_folder

    if len(inputs) == 1 and is_shard_folder(Path(inputs[0])):
        return True
    return wants_streaming(capture_paths(inputs), opts)


def capture_paths(inputs: list[str]) -> list[str]:
    """The capture files the inputs name (rocetrace.capture.files.expand_inputs); a merged
    analysis' work folder is refused with what can be re-analysed in it."""
    from rocetrace.capture.files import expand_inputs
    from rocetrace.errors import NotACapture
    from rocetrace.scale.shard_folder import vantage_folders

    held = vantage_folders(Path(inputs[0])) if len(inputs) == 1 else []
    if held:
        names = ", ".join(p.name for p in held)
        raise NotACapture(
            f"{inputs[0]}: holds the shards of a merged analysis ({names}), one folder per "
            f"vantage: re-analyse one vantage with `rocetrace analyze {held[0]}`, or merge "
            "the captures again with --vantage"
        )
    return expand_inputs(inputs)


def analyze_inputs(
    inputs: list[str],
    opts: ScaleOptions,
    *,
    link_speed_bps: float,
    roce_port: int,
    max_gzip_ratio: float,
    progress: Any = None,
) -> Any:
    """The Analysis of the inputs: a shard folder, one or more capture files (or globs,
    folders of captures), in memory or streamed as `opts` and their size say."""
    from rocetrace.scale.progress import stage_bars
    from rocetrace.scale.shard_folder import is_shard_folder

    if len(inputs) == 1 and is_shard_folder(Path(inputs[0])):
        from rocetrace.scale.engine import analyze_shards

        with stage_bars(opts.quiet) as bars:
            return analyze_shards(
                inputs[0], workers=opts.workers, scheduler=opts.scheduler,
                link_speed_bps=link_speed_bps, stages=bars,
            )  # fmt: skip
    paths = capture_paths(inputs)
    if wants_streaming(paths, opts):
        from rocetrace.scale.engine import analyze_streaming

        with stage_bars(opts.quiet) as bars:
            return analyze_streaming(
                paths, workdir=opts.workdir, workers=opts.workers, scheduler=opts.scheduler,
                partitions=opts.partitions, link_speed_bps=link_speed_bps, roce_port=roce_port,
                max_gzip_ratio=max_gzip_ratio, stages=bars,
            )  # fmt: skip
    return _in_memory(paths, link_speed_bps, roce_port, max_gzip_ratio, progress)


_loading: Future[Any] | None = None


def load_analysis_early() -> Future[Any]:
    """Start importing pandas and the analysis (~0.3 s, a third of a 1M-packet run) on a
    helper thread, once: started as the command starts, it overlaps the rest of the
    start-up and the decoding (the decoder's C kernels release the GIL)."""
    global _loading
    if _loading is None:
        _loading = Future()
        threading.Thread(
            target=_load, args=(_loading,), name="rocetrace-import", daemon=True
        ).start()
    return _loading


def _load(done: Future[Any]) -> None:
    try:
        done.set_result(importlib.import_module("rocetrace.analysis.api"))
    except BaseException as exc:  # raised again where the analysis waits for it
        done.set_exception(exc)
    finally:  # the libraries `analyze` needs are imported (rocetrace/collector.py)
        collector.resume()


def _in_memory(
    paths: list[str], speed: float, roce_port: int, max_gzip_ratio: float, progress: Any
) -> Any:
    """Decode, then analyse, the analysis imported meanwhile (load_analysis_early)."""
    from rocetrace.capture import read_capture
    from rocetrace.capture.files import read_files

    loading = load_analysis_early()
    if progress:
        progress("decode")
    if len(paths) == 1:
        cap = read_capture(paths[0], roce_port=roce_port, max_gzip_ratio=max_gzip_ratio)
    else:
        cap = read_files(paths, roce_port=roce_port, max_gzip_ratio=max_gzip_ratio)
    loading.result()
    from rocetrace.analysis.api import analyze

    return analyze(cap, link_speed=speed, roce_port=roce_port, progress=progress)
