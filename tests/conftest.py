"""Shared fixtures: where the real captures are, and tshark's presence."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

# The test command (README, CI) explores the same examples every run, so a pass or a failure
# belongs to the code, not to the draw. ROCETRACE_HYPOTHESIS=explore draws new examples each
# run, to hunt for cases; what it finds becomes an @example.
settings.register_profile("deterministic", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("ROCETRACE_HYPOTHESIS", "deterministic"))

REPO = Path(__file__).resolve().parent.parent
REAL_CAPTURES = REPO.parent / "shared" / "captures" / "real"
SAMPLES = REPO / "samples"


def real_capture_paths() -> list[Path]:
    """Every RoCE capture of ../shared/captures/real (the native-IB ERF file is not RoCE)."""
    if not REAL_CAPTURES.is_dir():
        return []
    return sorted(p for p in REAL_CAPTURES.glob("*.pcap") if "erf" not in p.name)


@pytest.fixture(scope="session")
def real_captures() -> list[Path]:
    paths = real_capture_paths()
    if not paths:
        pytest.skip(f"real captures not found at {REAL_CAPTURES} (shared/ is not beside the repo)")
    return paths


@pytest.fixture(scope="session")
def tshark() -> str:
    path = shutil.which("tshark")
    if path is None:
        pytest.skip("tshark is not installed (.ci/run installs Debian's tshark)")
    return path
