"""Issue 18, defect 6: `rocetrace report` validates what it reads (a summary's fields, a
bundle's manifest and tables) and names the field that does not fit; it renders a capture
without RoCE flows (PFC only, empty) as "no RoCE traffic", and duplicated flows do not crash
it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_capture_formats import frames_ts
from test_capture_fuzz import base_frames

from rocetrace.capture import write_capture
from rocetrace.cli import main
from rocetrace.errors import ExitStatus

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"


@pytest.fixture(params=["pfc-only", "empty"])
def no_roce(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    frames = [base_frames()[6]] * 5 if request.param == "pfc-only" else []
    return write_capture(tmp_path / f"{request.param}.pcap", frames_ts(len(frames)), frames)


def test_a_capture_without_roce_renders_as_no_roce_traffic(
    no_roce: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """From the capture, its JSON summary and its bundle alike (the summary crashed with
    KeyError 'flow_id'; the empty capture's report said "Clean")."""
    summary, bundle = tmp_path / "s.json", tmp_path / "b.rocetrace"
    args = ["analyze", str(no_roce), "--json", str(summary), "--save-bundle", str(bundle)]
    assert main([*args, "-o", str(tmp_path / "a.html")]) == 0
    for source in (summary, bundle):
        out = tmp_path / f"{source.suffix}.html"
        assert main(["report", str(source), "-o", str(out)]) == 0, capsys.readouterr().err
        assert "No RoCE traffic" in out.read_text(encoding="utf-8")
    assert "No RoCE traffic" in (tmp_path / "a.html").read_text(encoding="utf-8")
    assert "No RoCE traffic" in capsys.readouterr().out


def test_duplicated_flows_render(tmp_path: Path) -> None:
    """The same flow twice, with a finding about it (reports/findings.py:67 crashed)."""
    out = tmp_path / "r.html"
    assert main(["report", str(HOSTILE / "duplicated-flows.summary.json"), "-o", str(out)]) == 0
    assert "psn_sequence_error" in out.read_text(encoding="utf-8")


def _summary(tmp_path: Path, edit: dict) -> Path:
    data = json.loads((HOSTILE / "duplicated-flows.summary.json").read_text())
    for dotted, value in edit.items():
        *parents, key = dotted.split(".")
        node = data
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node[int(key) if isinstance(node, list) else key] = value
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        ({"flows.0.dest_qp": "eighteen"}, "flows[0].dest_qp: must be an integer"),
        ({"flows.1.packets": -3}, "flows[1].packets: must be a count"),
        ({"flows": {"a": 1}}, "flows: must be a list"),
        ({"flows.0": None}, "flows[0]: must be an object"),
        ({"findings.0.first_ts": 5e13}, "findings[0].first_ts: must be a time"),
        ({"findings.0.frames": [1, "x"]}, "findings[0].frames: must be a list of integers"),
        ({"findings.0.severity": None}, "findings[0].severity: missing"),
        ({"capture": [1, 2]}, "capture: must be an object"),
        ({"capture.anomalies": {"x": -1}}, "capture.anomalies: must be an object of counts"),
        (
            {
                "retransmissions": [
                    {"src_ip": "a", "dst_ip": "b", "dest_qp": 1, "start_psn": 0, "packets": 1}
                ]
            },
            "retransmissions[0]: no flow",
        ),
    ],
)
def test_a_summary_field_of_the_wrong_kind_is_named(
    tmp_path: Path, edit: dict, named: str, capsys: pytest.CaptureFixture
) -> None:
    path = _summary(tmp_path, edit)
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 4
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err, err
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("null-manifest.rocetrace", "manifest.json: must be an object"),
        ("manifest-not-json.rocetrace", "manifest.json: not JSON"),
        ("bad-parquet.rocetrace", "packets.parquet is not a readable table"),
        ("truncated.rocetrace", "not a readable bundle"),
        ("wrong-types.summary.json", "summary.flows[0].dest_qp"),
    ],
)
def test_a_broken_bundle_or_summary_is_a_one_line_error_naming_the_part(
    tmp_path: Path, name: str, named: str, capsys: pytest.CaptureFixture
) -> None:
    code = main(["report", str(HOSTILE / name), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == ExitStatus.NOT_A_CAPTURE and err.count("\n") == 1 and named in err, err


def test_a_bundle_table_of_the_wrong_kind_is_named(tmp_path: Path) -> None:
    import io
    import zipfile

    import pandas as pd

    bundle = tmp_path / "b.rocetrace"
    sample = Path(__file__).resolve().parent.parent / "samples" / "gbn-loss.pcap"
    assert main(["analyze", str(sample), "--save-bundle", str(bundle), "--json", "-"]) == 0
    with zipfile.ZipFile(bundle) as z:
        members = {n: z.read(n) for n in z.namelist()}
    flows = pd.read_parquet(io.BytesIO(members["flows.parquet"]))
    buf = io.BytesIO()
    pd.concat([flows, flows]).to_parquet(buf, index=False)  # every flow twice
    members["flows.parquet"] = buf.getvalue()
    with zipfile.ZipFile(bundle, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    from rocetrace.errors import InvalidResults
    from rocetrace.reports.bundle import load_bundle

    with pytest.raises(InvalidResults, match=r"table flows\.flow_id: the same value on two rows"):
        load_bundle(bundle)


def test_a_bundle_needing_an_unknown_zip_version_is_a_broken_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """zipfile raises NotImplementedError for a "version needed to extract" it does not
    know (one flipped byte in the central directory): still a broken bundle, exit 4."""
    bundle = tmp_path / "b.rocetrace"
    sample = Path(__file__).resolve().parent.parent / "samples" / "gbn-loss.pcap"
    assert main(["analyze", str(sample), "--save-bundle", str(bundle)]) == 0
    data = bytearray(bundle.read_bytes())
    central = data.find(b"PK\x01\x02")  # the first central directory entry
    data[central + 6 : central + 8] = (148).to_bytes(2, "little")  # version 14.8
    bundle.write_bytes(bytes(data))
    code = main(["report", str(bundle), "-o", str(tmp_path / "r.html")])
    err = capsys.readouterr().err
    assert code == ExitStatus.NOT_A_CAPTURE and "not a readable bundle" in err, err
