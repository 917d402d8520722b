"""Capture files in and out: pcap / pcapng (gzip too) to the packet table, and back."""

from rocetrace.capture.reader import Capture, CaptureInfo, iter_capture, read_capture
from rocetrace.capture.writer import write_capture

__all__ = ["Capture", "CaptureInfo", "iter_capture", "read_capture", "write_capture"]
