"""Write the hostile corpus: one small file per defect of issue 18, and EXPECTED.json, the exit
status each gives under `decode`, `analyze --json` and `report` (tests/test_reliability_fuzz.py
holds rocetrace to it; the fuzz gate mutates these files too).

    python tests/data/hostile/regenerate_hostile.py

Deterministic: the same bytes every run.
"""

from __future__ import annotations

import gzip
import io
import json
import struct
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # tests/: the capture helpers

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from test_capture_formats import _pcapng, bth, frames_ts, roce_v2  # noqa: E402

from rocetrace.capture import write_capture  # noqa: E402

TS = frames_ts(200)


def _flow(n: int = 200) -> list[bytes]:
    return [roce_v2(bth(psn=k), payload=bytes(8 + k % 40)) for k in range(n)]


def _pcap(frames: list[bytes]) -> bytes:
    buf = HERE / ".tmp.pcap"
    data = write_capture(buf, TS[: len(frames)], frames).read_bytes()
    buf.unlink()
    return data


def _record(blob: bytes, k: int) -> int:
    pos = 24
    for _ in range(k):
        pos += 16 + struct.unpack_from("<I", blob, pos + 8)[0]
    return pos


def _word_at(blob: bytes, at: int, word: int, order: str = "<") -> bytes:
    return blob[:at] + struct.pack(order + "I", word) + blob[at + 4 :]


def _with_frame(frame: bytes) -> bytes:
    frames = _flow(40)
    frames[20] = frame
    return _pcap(frames)


def _lying_caplen() -> bytes:
    """Record 5 of 200 claims 256 MiB."""
    blob = _pcap(_flow())
    return _word_at(blob, _record(blob, 4) + 8, 1 << 28)


def _ng(n: int = 30) -> bytes:
    return _pcapng("<", [(1, 9)], [(0, 10 * k, roce_v2(bth(psn=k))) for k in range(n)])


def _ng_block(blob: bytes, k: int) -> int:
    pos = 0
    for _ in range(k):
        pos += struct.unpack_from("<I", blob, pos + 4)[0]
    return pos


def _short_udp() -> bytes:
    eth = Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
    return bytes(eth / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=4791) / Raw(bth()[:11]))


def _set(frame: bytes, at: int, data: bytes) -> bytes:
    return frame[:at] + data + frame[at + len(data) :]


def _corrupt_gzip() -> bytes:
    import zlib

    packer = zlib.compressobj(6, zlib.DEFLATED, 31)
    data = _pcap(_flow(60))
    return packer.compress(data[: len(data) // 2]) + packer.flush(zlib.Z_FULL_FLUSH) + b"\x07"


CAPTURES: dict[str, Callable[[], bytes]] = {
    "caplen-256mib-record5.pcap": lambda: _word_at(
        _pcap(_flow()), _record(_pcap(_flow()), 4) + 8, 1 << 28
    ),
    "zeroed-stretch.pcap": lambda: (lambda b: b[:3000] + bytes(2048) + b[5048:])(_pcap(_flow())),
    "pcapng-block-length-not-x4.pcapng": lambda: _word_at(_ng(), _ng_block(_ng(), 6) + 4, 13),
    "pcapng-block-length-mismatch.pcapng": lambda: _word_at(_ng(), _ng_block(_ng(), 6) + 4, 4096),
    "pcapng-bad-byte-order-magic.pcapng": lambda: _ng(10) + _set(_ng(10), 8, bytes(4)) + _ng(10),
    "pcapng-cut-in-section-header.pcapng": lambda: _ng()[:20],
    "corrupt-gzip.pcap.gz": _corrupt_gzip,
    "short-udp-11-bytes.pcap": lambda: _with_frame(_short_udp()),
    "unknown-opcode-in-flow.pcap": lambda: _with_frame(roce_v2(bth(0x1F, psn=20))),
    "bad-ihl.pcap": lambda: _with_frame(_set(roce_v2(bth(psn=20)), 14, b"\x44")),
    "udp-length-beyond-ip.pcap": lambda: _with_frame(_set(roce_v2(bth(psn=20)), 38, b"\x01\x00")),
    "ip-fragment.pcap": lambda: _with_frame(_set(roce_v2(bth(psn=20)), 20, b"\x20\x00")),
    "truncated-last-record.pcap.gz": lambda: gzip.compress(_pcap(_flow(50))[:-7], mtime=0),
}


def _summary(flows: list[dict], findings: list[dict] | None = None) -> dict:
    capture = {
        "packets": 5,
        "roce_packets": 0,
        "non_roce_packets": 5,
        "malformed_packets": 0,
        "truncated_packets": 0,
        "incomplete_tail": False,
        "first_ts": 1.0,
        "last_ts": 2.0,
    }
    return {
        "schema": "rocetrace.summary/1",
        "capture": capture,
        "flows": flows,
        "retransmissions": [],
        "findings": findings or [],
    }


FLOW = {
    "src_ip": "10.0.0.1",
    "dst_ip": "10.0.0.2",
    "dest_qp": 18,
    "packets": 9,
    "bytes": 900,
    "naks": {"psn_sequence_error": 1},
}
FINDING = {
    "severity": "warning",
    "code": "psn_sequence_error",
    "message": "1 NAK(s)",
    "flow": "10.0.0.1>10.0.0.2/18",
    "first_ts": 1.5,
    "frames": [3],
}
SUMMARIES = {
    "pfc-only.summary.json": _summary([]),
    "empty.summary.json": {"schema": "rocetrace.summary/1"},
    "duplicated-flows.summary.json": _summary([FLOW, FLOW], [FINDING]),
    "wrong-types.summary.json": _summary([{**FLOW, "dest_qp": "eighteen"}]),
    "nan-time.summary.json": _summary([FLOW], [{**FINDING, "first_ts": 5e13}]),
}


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return out.getvalue()


BUNDLES = {
    "null-manifest.rocetrace": _zip({"manifest.json": b"null"}),
    "manifest-not-json.rocetrace": _zip({"manifest.json": b"{not json"}),
    "bad-parquet.rocetrace": _zip(
        {
            "manifest.json": json.dumps({"schema": "rocetrace.bundle/1"}).encode(),
            "packets.parquet": b"PAR1 not a table PAR1",
        }
    ),
    "truncated.rocetrace": _zip({"manifest.json": b"{}"})[:30],
}

# file -> exit status of (decode, analyze --json, report); None: not run
EXPECTED: dict[str, tuple[int | None, int | None, int]] = {
    "caplen-256mib-record5.pcap": (0, 0, 0),
    "zeroed-stretch.pcap": (0, 0, 0),
    "pcapng-block-length-not-x4.pcapng": (0, 0, 0),
    "pcapng-block-length-mismatch.pcapng": (0, 0, 0),
    "pcapng-bad-byte-order-magic.pcapng": (0, 0, 0),
    "pcapng-cut-in-section-header.pcapng": (4, 4, 4),
    "corrupt-gzip.pcap.gz": (4, 4, 4),
    "short-udp-11-bytes.pcap": (0, 0, 0),
    "unknown-opcode-in-flow.pcap": (0, 0, 0),
    "bad-ihl.pcap": (0, 0, 0),
    "udp-length-beyond-ip.pcap": (0, 0, 0),
    "ip-fragment.pcap": (0, 0, 0),
    "truncated-last-record.pcap.gz": (0, 0, 0),
    "pfc-only.summary.json": (None, None, 0),
    "empty.summary.json": (None, None, 0),
    "duplicated-flows.summary.json": (None, None, 0),
    "wrong-types.summary.json": (None, None, 4),
    "nan-time.summary.json": (None, None, 4),
    "null-manifest.rocetrace": (None, None, 4),
    "manifest-not-json.rocetrace": (None, None, 4),
    "bad-parquet.rocetrace": (None, None, 4),
    "truncated.rocetrace": (None, None, 4),
}


def main() -> None:
    for name, make in CAPTURES.items():
        (HERE / name).write_bytes(make())
    for name, summary in SUMMARIES.items():
        (HERE / name).write_text(json.dumps(summary, indent=1) + "\n")
    for name, data in BUNDLES.items():
        (HERE / name).write_bytes(data)
    expected = {
        name: dict(zip(("decode", "analyze", "report"), codes, strict=True))
        for name, codes in EXPECTED.items()
    }
    (HERE / "EXPECTED.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
