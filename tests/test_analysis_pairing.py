"""Pairing when QPs share one starting PSN (the generator's start_psn gives every QP the
same one): a NAKed QP's late answers must not shift the other QPs' pairs."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocetrace.analysis.api import analyze
from rocetrace.generate import Loss, generate


@pytest.mark.parametrize("vantage", ["sender", "receiver", "mirror"])
@pytest.mark.parametrize(
    ("ops", "seed"), [(("write",), 2), (("send",), 2), (("write", "read"), 1), (("read",), 1)]
)
def test_shared_start_psn_pairs_like_truth(
    tmp_path: Path, vantage: str, ops: tuple[str, ...], seed: int
) -> None:
    path = tmp_path / "shared.pcap"
    truth = generate(
        "clean", path, seed=seed, ops=ops, vantage=vantage, qps=8, messages=4,
        message_size=4096, start_psn=100, losses=(Loss(rate=0.02),),
    )  # fmt: skip
    real = {(f["src_ip"], f["dst_ip"], f["dest_qp"]): f for f in truth.data["flows"]}
    got = analyze(path).summary()["flows"]
    wrong = [
        (key, f["peer_qp"], real[key]["peer_qp"])
        for f in got
        if (key := (f["src_ip"], f["dst_ip"], f["dest_qp"])) in real
        and (f["peer_qp"], f["role"]) != (real[key]["peer_qp"], real[key]["role"])
    ]
    assert wrong == []
