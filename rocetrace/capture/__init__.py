"""Capture files in and out: pcap / pcapng (gzip too) to the packet table, and back."""

from rocetrace.capture.writer import write_capture

__all__ = ["write_capture"]
