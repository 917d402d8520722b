"""The tables of a merged analysis of several vantages (rocetrace.vantage), declared once:
the vantages and their clocks, the packets lost between two vantages, per flow and segment
the losses, delays and reordering, per segment the same over every flow, and every
sighting; and the columns the merged packet table adds. Text is `string[pyarrow]` as in
every table; numbers keep the numpy and pandas dtypes the vantage stage builds them in.
`Analysis.save`, bundles and `rocetrace.load` keep them (tests/test_vantage_bundle.py).
"""

from __future__ import annotations

from rocetrace.schema.column import TEXT, TEXTS, Column, Table

VANTAGES = Table(
    "vantages",
    "vantage (capture point), in the order given; the first holds the reference clock",
    (
        Column("name", TEXT, "the vantage's name"),
        Column("files", TEXTS, "its files (list of paths), earliest first"),
        Column(
            "offset_ns",
            "Int64",
            "added to this vantage's timestamps (at pivot_ns) it puts them on the first "
            "vantage's clock",
            "ns",
        ),
        Column(
            "drift_ppm", "float64", "how much faster this clock runs than the first's, ppm", "ppm"
        ),
        Column(
            "offset_uncertainty_ns",
            "float64",
            "how far the aligned times may be from the truth, over the capture (NaN: not "
            "aligned: no packet crossed both ways)",
            "ns",
        ),
        Column(
            "pivot_ns",
            "int64",
            "the time (first vantage's clock) where offset_ns holds",
            "ns since the epoch",
        ),
        Column(
            "matched_packets", "int64", "distinct RoCE packets it saw that another vantage saw too"
        ),
        Column("packets", "int64", "frames in its files"),
        Column("missed", "int64", "packets a vantage after it on the path saw and it did not"),
        Column(
            "pfc_frames",
            "int64",
            "PFC frames it captured (its links' pauses; one seen by two vantages is one "
            "merged row)",
        ),
        Column(
            "pfc_held_s",
            "float64",
            "how long the pauses it captured held, summed over its links and priorities",
            "s",
        ),
        Column(
            "malformed_packets",
            "int64",
            "its malformed frames (never matched: each is a merged row of its own vantage)",
        ),
        Column("ts_resolution_ns", "int64", "its clock's resolution", "ns"),
        Column("jitter_ns", "int64", "its clock's jitter, as measured on its capture", "ns"),
    ),
)

LOSSES = Table(
    "losses",
    "packet lost between two vantages, in time order",
    (
        Column("packet", "int64", "the lost packet's frame in the merged table"),
        Column("flow_id", "Int64", "its flow in the merged analysis"),
        Column("src_ip", TEXT, "source"),
        Column("dst_ip", TEXT, "destination"),
        Column("dest_qp", "int64", "destination QP"),
        Column("psn", "int64", "PSN"),
        Column("opcode_name", TEXT, "opcode"),
        Column("last_seen_at", TEXT, "the last vantage on its path that saw it"),
        Column("missing_at", TEXT, "the next vantage on its path, which did not (while capturing)"),
        Column(
            "ts_ns",
            "int64",
            "when the last vantage saw it (first vantage's clock)",
            "ns since the epoch",
        ),
        Column("file", TEXT, "the file of the last vantage that holds it"),
        Column("frame", "int64", "its frame number in that file"),
        Column(
            "resent", "bool", "the same PSN of the flow was sent again later (the loss was real)"
        ),
    ),
)

# What a segment (a vantage and the next one on a path) measured: per flow and in total.
SEGMENT_MEASURES = (
    Column(
        "packets",
        "int64",
        "packets that passed from_vantage (seen at both ends, or lost between)",
    ),
    Column("losses", "int64", "packets lost on the segment"),
    Column(
        "delay_min_ns",
        "float64",
        "one-way delay, smallest (aligned clocks; < 0: received before sent, within the "
        "clocks' resolution and jitter)",
        "ns",
    ),
    Column("delay_p50_ns", "float64", "one-way delay, median", "ns"),
    Column("delay_p99_ns", "float64", "one-way delay, 99th percentile", "ns"),
    Column("delay_max_ns", "float64", "one-way delay, largest", "ns"),
    Column("reordered", "int64", "packets a later one overtook on the segment"),
)

SEGMENTS = Table(
    "segments",
    "flow and segment of its path (a vantage and the next one)",
    (
        Column("flow_id", "Int64", "flow in the merged analysis"),
        Column("src_ip", TEXT, "source"),
        Column("dst_ip", TEXT, "destination"),
        Column("dest_qp", "int64", "destination QP"),
        Column("from_vantage", TEXT, "segment start: a vantage on the flow's path"),
        Column("to_vantage", TEXT, "segment end: the next vantage on the path"),
        *SEGMENT_MEASURES,
    ),
)

SEGMENT_TOTALS = Table(
    "segment_totals",
    "segment (a vantage and the next one on a path), over every flow",
    (
        Column("from_vantage", TEXT, "segment start"),
        Column("to_vantage", TEXT, "segment end"),
        Column("flows", "int64", "flows that cross it"),
        *SEGMENT_MEASURES,
    ),
)

SIGHTINGS = Table(
    "sightings",
    "frame of every vantage (a packet seen at one vantage), by merged frame",
    (
        Column("packet", "int64", "frame of the packet in the merged table"),
        Column("vantage", "category", "where it was seen"),
        Column("frame", "int64", "frame at that vantage (its files numbered on)"),
        Column("file", "int16", "index of the vantage's file holding it"),
        Column("file_frame", "int64", "frame number within that file"),
        Column("ts_ns", "int64", "the vantage's own timestamp", "ns since the epoch"),
        Column(
            "aligned_ns", "int64", "the same on the first vantage's clock", "ns since the epoch"
        ),
    ),
)

# Columns the merged packet table adds to the packet table (rocetrace.vantage.merge).
MERGED_PACKET_EXTRAS = Table(
    "packets",
    "distinct packet of a merged capture: the packet table plus these columns",
    (
        Column("vantage", "category", "the vantage whose sighting the row carries"),
        Column("sightings", "uint8", "how many vantages saw the packet"),
        Column(
            "frame_<vantage>",
            "UInt32",
            "frame number at that vantage (its files numbered on); null: not seen there",
        ),
    ),
    "`frame`, `ts_ns` and `ecn` change meaning: the merged row number, the time the packet "
    "passed the first vantage of its path (reference clock), the highest ECN any "
    "vantage saw.",
)

# Every vantage table of a MergedAnalysis, by attribute name (and Parquet file stem).
VANTAGE_TABLES: dict[str, Table] = {
    t.name: t for t in (VANTAGES, LOSSES, SEGMENTS, SEGMENT_TOTALS, SIGHTINGS)
}
