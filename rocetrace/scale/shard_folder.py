"""What makes a folder a shard folder: its manifest. Kept apart from scale.manifest (which
needs pandas) so `rocetrace analyze capture.pcap` can tell a capture from a shard folder
without importing pandas before the decoding starts."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"


def is_shard_folder(path: Path) -> bool:
    """A folder holding a streamed analysis' manifest (`--workdir`)."""
    return path.is_dir() and (path / MANIFEST).is_file()
