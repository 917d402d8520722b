"""What makes a folder a shard folder: its manifest. Kept apart from scale.manifest (which
needs pandas) so `rocetrace analyze capture.pcap` can tell a capture from a shard folder
without importing pandas before the decoding starts."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"


def is_shard_folder(path: Path) -> bool:
    """A folder holding a streamed analysis' manifest (`--workdir`)."""
    return path.is_dir() and (path / MANIFEST).is_file()


def vantage_folders(path: Path) -> list[Path]:
    """The shard folders inside a merged analysis' work folder (`--vantage ... --workdir`
    keeps one per vantage: vantage0/, vantage1/, ...); none for any other path."""
    if not path.is_dir() or is_shard_folder(path):
        return []
    return sorted(p for p in path.iterdir() if is_shard_folder(p))
