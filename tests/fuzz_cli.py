"""The fuzz gate's CLI cases: the `rocetrace` command run as a process on hostile inputs,
each expected to give one exit status with at most one line on stderr and no traceback
(the statuses of rocetrace/errors.py: the same condition, the same status everywhere)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from test_capture_formats import _pcapng, bth, frames_ts, roce_v2
from test_reliability_limits import gzip_bomb

from rocetrace.capture import write_capture

ROCETRACE = str(Path(sys.executable).with_name("rocetrace"))
HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "gbn-loss.pcap"


def _inputs(tmp: Path) -> dict[str, Path]:
    """Hostile inputs: the corpus plus what is made on the spot."""
    frames = [roce_v2(bth(psn=k)) for k in range(4)]
    made = {
        "sound": write_capture(tmp / "sound.pcap", frames_ts(4), frames),
        "link197": write_capture(tmp / "dlt.pcap", frames_ts(1), frames[:1], linktype=197),
        "folder": tmp / "empty",  # a folder of capture files is one capture (docs/scale.md)
        "missing": tmp / "missing.pcap",
    }
    (tmp / "cut.pcapng").write_bytes(_pcapng("<", [(1, None)], [(0, 1, frames[0])])[:20])
    made["cut_shb"] = tmp / "cut.pcapng"
    made["folder"].mkdir(exist_ok=True)
    made["bomb"] = gzip_bomb(tmp / "bomb.pcap.gz", 251)  # 0.5 MB expanding to 263 MB
    return {**{p.name: p for p in HOSTILE.iterdir() if p.is_file()}, **made}


REPORT = ["report", "{input}", "-o", "{out}.html"]
# (name, argv with {input} / {out} / {tmp}, input name, expected status)
CASES = [
    ("decode sound", ["decode", "{input}"], "sound", 0),
    ("decode --limit 0", ["decode", "{input}", "--limit", "0"], "sound", 2),
    ("analyze a gzip bomb", ["analyze", "{input}", "--json", "-"], "bomb", 7),
    ("decode mid-file corruption", ["decode", "{input}"], "caplen-256mib-record5.pcap", 0),
    (
        "analyze corruption --fail-on warning",
        ["analyze", "{input}", "--json", "{out}.json", "--fail-on", "warning"],
        "caplen-256mib-record5.pcap",
        1,
    ),
    ("decode pcapng cut in its section header", ["decode", "{input}"], "cut_shb", 4),
    ("analyze a folder without captures", ["analyze", "{input}"], "folder", 4),
    ("report a folder without captures", ["report", "{input}"], "folder", 4),
    ("decode a missing file", ["decode", "{input}"], "missing", 3),
    ("analyze link type 197", ["analyze", "{input}", "--json", "-"], "link197", 5),
    ("decode onto its input", ["decode", "{input}", "-o", "{input}"], "sound", 6),
    ("analyze onto its input", ["analyze", "{input}", "-o", "{input}"], "sound", 6),
    ("analyze a corrupt gzip", ["analyze", "{input}", "--json", "-"], "corrupt-gzip.pcap.gz", 4),
    ("report a summary of wrong types", REPORT, "wrong-types.summary.json", 4),
    ("report a bundle with a null manifest", REPORT, "null-manifest.rocetrace", 4),
    ("report a PFC-only summary", REPORT, "pfc-only.summary.json", 0),
    ("report duplicated flows", REPORT, "duplicated-flows.summary.json", 0),
]


def _one(argv: list[str], expected: int, stdin: bytes | None = None) -> dict[str, object]:
    run = subprocess.run(
        [ROCETRACE, *argv], input=stdin, capture_output=True, timeout=600, check=False
    )
    err = run.stderr.decode(errors="replace")
    one_line = run.returncode in (0, 2) or err.count("\n") <= 1  # 2: click's usage lines
    ok = run.returncode == expected and "Traceback" not in err and one_line
    return {"status": run.returncode, "expected": expected, "ok": ok, "stderr": err[-300:]}


def _sigint(tmp: Path) -> dict[str, object]:
    """Ctrl-C while decode waits on a FIFO: 130."""
    fifo = tmp / "in.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [ROCETRACE, "decode", str(fifo), "-o", str(tmp / "x.parquet")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    with open(fifo, "wb") as w:
        w.write(SAMPLE.read_bytes()[:3000])
        w.flush()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    ok = proc.returncode == 130 and not (tmp / "x.parquet").exists()
    return {"status": proc.returncode, "expected": 130, "ok": ok, "stderr": err.decode()[-300:]}


def cli_cases() -> dict[str, dict[str, object]]:
    """Run every CLI case; name -> status, expected status, ok, stderr's tail."""
    tmp = Path(tempfile.mkdtemp(prefix="rocetrace-fuzz-cli-"))
    try:
        inputs = _inputs(tmp)
        results = {}
        for name, argv, source, expected in CASES:
            path = str(inputs[source])
            args = [a.format(input=path, out=tmp / "out", tmp=tmp) for a in argv]
            results[name] = _one(args, expected)
        results["analyze - (garbage on stdin)"] = _one(["analyze", "-"], 4, b"garbage" * 99)
        results["decode - (a pipe)"] = _one(["decode", "-"], 0, SAMPLE.read_bytes())
        results["SIGINT mid-read"] = _sigint(tmp)
        return results
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
