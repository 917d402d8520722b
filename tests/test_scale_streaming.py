"""Streaming analysis (docs/scale.md): decoded into Parquet shards by IP pair, each partition
analysed alone (in this process or on a 2-worker Dask LocalCluster), joined by the reduce
step; a file cut into segments, many files as one capture, a shard folder analysed again.
Every result equals the in-memory analysis of the same capture."""

from __future__ import annotations

import itertools
import json
import mmap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import rocetrace
from rocetrace.analysis.api import analyze
from rocetrace.capture import read_capture, write_capture
from rocetrace.capture.records import ScanState, scan
from rocetrace.cli import cli
from rocetrace.scale.engine import analyze_shards, analyze_streaming
from tests.conftest import SAMPLES, real_capture_paths
from tests.test_scale_partitions import assert_same_analysis

EVENTFUL = ("gbn-loss", "pfc-storm", "rnr", "read-loss", "selective-repeat", "tail-timeout")


@pytest.fixture(scope="module")
def hosts_capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Fault-free RC traffic between 3 requesters and 2 responders (6 IP pairs), 12k frames."""
    from rocetrace.generate import generate

    path = tmp_path_factory.mktemp("scale") / "hosts.pcap"
    generate(
        "bulk", path, seed=1, snaplen=128, qps=2, requesters=3, responders=2,
        ops=("write", "send", "read"), mtu=1024, message_size=16384, messages=60,
    )  # fmt: skip
    return path


def records(path: Path) -> tuple[np.ndarray, list[bytes], np.ndarray]:
    """Timestamps, frame bytes and wire lengths of a nanosecond pcap file."""
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        data = np.frombuffer(m, np.uint8)
        rec, _, _ = scan(ScanState("pcap", frac_ns=1), data, 24, 1 << 40)
        frames = [bytes(data[o : o + n]) for o, n in zip(rec.offset, rec.cap_len, strict=True)]
        del data
    return rec.ts_ns, frames, rec.wire_len


def in_memory(path: Path | list[Path]) -> rocetrace.analysis.result.Analysis:
    return analyze(path if isinstance(path, Path) else [str(p) for p in path])


@pytest.mark.parametrize(
    "path",
    [SAMPLES / f"{name}.pcap" for name in EVENTFUL] + real_capture_paths()[:4],
    ids=lambda p: p.name,
)
def test_streaming_equals_in_memory(path: Path) -> None:
    assert_same_analysis(in_memory(path), analyze_streaming(str(path), partitions=3))


def test_segments_equal_the_whole_file(
    hosts_capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One file decoded in segments cut at verified record boundaries, pcap and pcapng."""
    monkeypatch.setattr("rocetrace.capture.split.MIN_SEGMENT", 1 << 16)
    monkeypatch.setattr("rocetrace.scale.engine._segments_wanted", lambda ex: 7)
    ng = tmp_path / "hosts.pcapng"
    ts, frames, wire = records(hosts_capture)
    write_capture(ng, ts, frames, fmt="pcapng", snaplen=128, wire_lens=wire)
    for path in (hosts_capture, ng):
        assert_same_analysis(in_memory(path), analyze_streaming(str(path), partitions=4))


def test_two_worker_cluster(
    hosts_capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end on a 2-worker Dask LocalCluster: segments decoded and partitions analysed
    in the workers; the shard folder kept and analysed again without decoding."""
    monkeypatch.setattr("rocetrace.capture.split.MIN_SEGMENT", 1 << 18)
    work = tmp_path / "work"
    whole = in_memory(hosts_capture)
    streamed = analyze_streaming(str(hosts_capture), workers=2, workdir=work, partitions=4)
    assert_same_analysis(whole, streamed)
    assert len(list((work / "shards").glob("p*/s*.parquet"))) > 4
    assert_same_analysis(whole, analyze_shards(work))


def rotated(path: Path, folder: Path, pieces: int) -> list[Path]:
    """The capture cut into `pieces` files as tcpdump -C rotates (x.pcap, x.pcap1, ...)."""
    ts, frames, wire = records(path)
    cuts = np.linspace(0, len(frames), pieces + 1).astype(int)
    out = []
    for k, (a, b) in enumerate(itertools.pairwise(cuts)):
        piece = folder / f"rot.pcap{k or ''}"
        write_capture(piece, ts[a:b], frames[a:b], snaplen=65535, wire_lens=wire[a:b])
        out.append(piece)
    return out


@pytest.mark.parametrize("sample", ["gbn-loss", "selective-repeat"])
def test_rotated_pieces_equal_the_whole(sample: str, tmp_path: Path) -> None:
    """20 rotated pieces of a capture give the whole file's summary (frames numbered as in
    the whole file), in memory and streamed."""
    whole = in_memory(SAMPLES / f"{sample}.pcap")
    pieces = rotated(SAMPLES / f"{sample}.pcap", tmp_path, 20)
    merged = in_memory(pieces)
    assert len(merged.capture.files) == 20
    assert_same_analysis(whole, merged)
    assert_same_analysis(whole, analyze_streaming(str(tmp_path), partitions=2))


def test_interleaved_files_stream_as_in_memory(hosts_capture: Path, tmp_path: Path) -> None:
    """Per-host captures overlapping in time, one with a clock that steps back now and then:
    merged by time the same way both paths, jitter measured per file."""
    ts, frames, wire = records(hosts_capture)
    odd = np.arange(len(frames)) % 3 == 0
    paths = []
    for name, keep, back in (("a.pcap", odd, 0), ("b.pcap", ~odd, 300)):
        rows = np.flatnonzero(keep)
        stamps = ts[rows].copy()
        stamps[7::50] -= back
        write_capture(tmp_path / name, stamps, [frames[i] for i in rows], wire_lens=wire[rows])
        paths.append(tmp_path / name)
    merged = in_memory(paths)
    assert list(merged.packets["file_frame"][:3]) == [1, 1, 2]
    assert_same_analysis(merged, analyze_streaming([str(p) for p in paths], partitions=3))


def test_cli_many_files_and_shard_folder(tmp_path: Path) -> None:
    """`analyze FILE...` and `analyze DIR` (a shard folder kept by --workdir) on the CLI."""
    pieces = rotated(SAMPLES / "gbn-loss.pcap", tmp_path, 3)
    runner = CliRunner()
    args = [*map(str, pieces), "--json", str(tmp_path / "a.json"), "--quiet"]
    assert runner.invoke(cli, ["analyze", *args]).exit_code == 0
    work = tmp_path / "work"
    args = [str(tmp_path / "rot.pcap*"), "--workdir", str(work), "--json", str(tmp_path / "b.json")]
    assert runner.invoke(cli, ["analyze", *args]).exit_code == 0
    again = ["analyze", str(work), "--json", str(tmp_path / "c.json")]
    assert runner.invoke(cli, again).exit_code == 0
    whole = read_capture(SAMPLES / "gbn-loss.pcap")
    want = analyze(whole, roce_port=4791).summary()
    for name in ("a", "b", "c"):
        assert json.loads((tmp_path / f"{name}.json").read_text()) == json.loads(json.dumps(want))


def test_large_partition_cut_by_ip_pair(
    hosts_capture: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every IP pair hashed into one partition, larger than the limit: its tasks take whole
    IP pairs, none much beyond the limit, and the result is the in-memory one."""
    from rocetrace.scale import engine
    from rocetrace.scale.manifest import Manifest

    monkeypatch.setattr(engine, "PACKETS_PER_PARTITION", 2_500)
    work = tmp_path / "work"
    streamed = analyze_streaming(str(hosts_capture), workdir=work, partitions=1)
    assert_same_analysis(in_memory(hosts_capture), streamed)
    manifest = Manifest.load(work)
    jobs, sizes = engine.partition_jobs(work, manifest, engine.shared_of(work, manifest, 1e11)[0])
    pairs = manifest.pair_rows.values()
    assert len(jobs) > 1 and sum(sizes) == sum(pairs)
    assert sizes.max() <= 2_500 + max(pairs)
    assert sorted(h for j in jobs for h in j.pairs or ()) == sorted(map(int, manifest.pair_rows))
