"""The decoder's CM MAD side table (Capture.mads) against the reference MAD decode."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from cm_oracle import mad_table, reference_cm_mads

from rocetrace.analysis.api import analyze
from rocetrace.capture import iter_capture, read_capture
from rocetrace.generate import generate
from rocetrace.schema import MAD_DTYPES

CM_CAPTURES = ("rxe_rdma_cm", "rxe_cm_write_read")
SMALL = {"mtu": 256, "messages": 3, "message_size": 1024}


def _expected(path: Path) -> pd.DataFrame:
    mads = reference_cm_mads(path)
    return mad_table(mads).assign(frame=[m.frame for m in mads])[["frame", *MAD_DTYPES]]


@pytest.mark.parametrize("name", CM_CAPTURES)
def test_real_captures_mads_match_the_reference_decode(
    real_captures: list[Path], name: str
) -> None:
    path = next(p for p in real_captures if p.stem == name)
    got, expected = read_capture(path).mads, _expected(path)
    assert got is not None
    assert ((got["ts_ns"] - expected["ts_ns"]).abs() < 1000).all()  # dpkt's float seconds
    pd.testing.assert_frame_equal(got.drop(columns="ts_ns"), expected.drop(columns="ts_ns"))


def test_chunks_hold_their_own_mads(tmp_path: Path) -> None:
    """iter_capture with small chunks: each chunk's MADs, together those of read_capture."""
    path = tmp_path / "cm.pcap"
    generate("gbn-loss", path, seed=1, cm=True, **SMALL)
    whole = read_capture(path).mads
    assert whole is not None and len(whole) == 5
    parts = [c.mads for c in iter_capture(path, chunk_packets=7)]
    joined = pd.concat(parts, ignore_index=True)
    pd.testing.assert_frame_equal(joined, whole)
    for chunk, mads in zip(iter_capture(path, chunk_packets=7), parts, strict=True):
        assert mads is not None
        assert set(mads["frame"]) <= set(chunk.packets["frame"].astype(int))


@pytest.mark.parametrize("overrides", [{"ip_version": 6}, {"vxlan_vni": 42, "vlan": 7}])
def test_mads_in_other_encapsulations(tmp_path: Path, overrides: dict[str, object]) -> None:
    path = tmp_path / "x.pcap"
    generate("gbn-loss", path, seed=1, cm=True, **SMALL, **overrides)  # type: ignore[arg-type]
    got = read_capture(path).mads
    assert got is not None and len(got) == 5
    assert got["src_ip"].notna().all() and got["cm_local_comm_id"].notna().all()


def test_a_capture_without_cm_has_an_empty_table_of_the_right_dtypes(tmp_path: Path) -> None:
    path = tmp_path / "plain.pcap"
    generate("clean", path, seed=3, **SMALL)
    got = read_capture(path).mads
    assert got is not None and got.empty
    assert got.dtypes.astype(str).to_dict() == {"frame": "int64", **MAD_DTYPES}


def test_a_snap_length_nulls_only_the_fields_it_cuts(tmp_path: Path) -> None:
    """Snap 128 (IPv4): REQ's Starting PSN is cut, its QPN and every Comm ID are not; 160
    keeps every field; the CM still pairs the QPs."""
    full, cut, wide = (tmp_path / f"{n}.pcap" for n in ("full", "cut", "wide"))
    generate("gbn-loss", full, seed=1, cm=True, **SMALL)
    generate("gbn-loss", cut, seed=1, cm=True, snaplen=128, **SMALL)
    generate("gbn-loss", wide, seed=1, cm=True, snaplen=160, **SMALL)
    whole, snapped = read_capture(full).mads, read_capture(cut).mads
    assert whole is not None and snapped is not None
    pd.testing.assert_frame_equal(read_capture(wide).mads, whole)
    req = snapped["mad_attr_id"] == 0x10
    assert snapped.loc[req, "cm_starting_psn"].isna().all()
    same = snapped.drop(columns="cm_starting_psn")
    pd.testing.assert_frame_equal(same, whole.drop(columns="cm_starting_psn"))
    flows = analyze(cut).flows
    assert (flows.loc[flows["transport"] == "RC", "paired_by"] == "cm").all()
