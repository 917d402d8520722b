"""`rocetrace decode` through click's CliRunner and rocetrace.cli.main: outputs, statuses."""

from __future__ import annotations

import ast
import csv
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from test_capture_formats import bth, frames_ts, roce_v2

from rocetrace.capture import write_capture
from rocetrace.cli import cli, main
from rocetrace.errors import ExitStatus
from rocetrace.schema import PACKET_COLUMN_NAMES

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    frames = [roce_v2(bth(psn=p, qp=0x30)) for p in range(12)]
    return write_capture(tmp_path / "c.pcap", frames_ts(12), frames)


def test_summary_without_output(capture: Path) -> None:
    result = CliRunner().invoke(cli, ["decode", str(capture)])
    assert result.exit_code == 0, result.output
    assert "12 frames (12 RoCE" in result.output
    assert "RC_SEND_ONLY=12" in result.output and "frame" in result.output


def test_parquet_output(capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.parquet"
    result = CliRunner().invoke(
        cli, ["decode", str(capture), "-o", str(out), "--chunk-packets", "5"]
    )
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    assert tuple(table.column_names) == PACKET_COLUMN_NAMES
    df = table.to_pandas()
    assert df["psn"].tolist() == list(range(12)) and df["frame"].tolist() == list(range(1, 13))
    assert set(df["icrc_status"]) == {"ok"}


def test_csv_output_and_limit(capture: Path, tmp_path: Path) -> None:
    out = tmp_path / "p.csv"
    result = CliRunner().invoke(cli, ["decode", str(capture), "-o", str(out), "--limit", "4"])
    assert result.exit_code == 0, result.output
    with open(out, newline="") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == PACKET_COLUMN_NAMES
    assert len(rows) == 5
    df = pd.read_csv(out)
    assert df["dest_qp"].tolist() == [0x30] * 4 and df["opcode_name"].tolist()[0] == "RC_SEND_ONLY"


def test_summary_preview_without_pandas(capture: Path) -> None:
    result = CliRunner().invoke(cli, ["decode", str(capture), "--limit", "3"])
    lines = result.output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("frame"))
    assert lines[header].split() == ["frame", "ts_ns", "src_ip", "dst_ip", "opcode_name",
                                     "dest_qp", "psn", "anomaly"]  # fmt: skip
    assert lines[header + 1].split()[2:] == ["10.0.0.1", "10.0.0.2", "RC_SEND_ONLY", "48", "0", "-"]
    assert len(lines) == header + 4


# Prints the top-level modules the process imported, after running the CLI.
MODULES_AFTER = (
    "import sys; from rocetrace.cli import main; status = main(sys.argv[1:]); "
    "print(sorted({m.split('.')[0] for m in sys.modules})); sys.exit(status)"
)


@pytest.mark.parametrize("output", [None, "p.parquet", "p.csv"])
def test_decode_process_never_imports_pandas(tmp_path: Path, output: str | None) -> None:
    """`rocetrace decode` works on Arrow tables and C kernels only: the imports of pandas
    (~0.4 s) and numba (~0.3 s) are never paid."""
    argv = ["decode", str(REPO / "samples" / "clean.pcap")]
    argv += [] if output is None else ["-o", str(tmp_path / output)]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    run = subprocess.run(
        [sys.executable, "-c", MODULES_AFTER, *argv], capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    modules = ast.literal_eval(run.stdout.splitlines()[-1])
    assert "pyarrow" in modules and "pandas" not in modules and "numba" not in modules


def test_help_explains() -> None:
    result = CliRunner().invoke(cli, ["decode", "--help"])
    assert result.exit_code == 0
    for word in ("pcapng", "gzip", ".parquet", ".csv", "--limit", "--roce-port", "VXLAN"):
        assert word in result.output


def test_exit_statuses(capture: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = tmp_path / "g.pcap"
    garbage.write_bytes(b"not a capture")
    ib = write_capture(tmp_path / "ib.pcap", frames_ts(1), [b"\0" * 40], linktype=197)
    cases = [
        (["decode", str(tmp_path / "missing.pcap")], ExitStatus.NO_SUCH_FILE),
        (["decode", str(garbage)], ExitStatus.NOT_A_CAPTURE),
        (["decode", str(ib)], ExitStatus.UNSUPPORTED_LINK_TYPE),
        (["decode", str(capture), "-o", str(tmp_path / "x.txt")], ExitStatus.OUTPUT_ERROR),
        (["decode", str(capture), "-o", str(tmp_path / "no" / "x.csv")], ExitStatus.OUTPUT_ERROR),
        (["decode", str(capture), "--limit", "0"], ExitStatus.USAGE),
        (["decode", str(capture)], ExitStatus.OK),
    ]
    for argv, status in cases:
        assert main(argv) == status, argv
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "missing.pcap: no such file" in err and "not a pcap or pcapng capture" in err


def test_docs_list_every_column() -> None:
    doc = (REPO / "docs" / "packet-table.md").read_text()
    missing = [c for c in PACKET_COLUMN_NAMES if f"| `{c}` |" not in doc]
    assert not missing
