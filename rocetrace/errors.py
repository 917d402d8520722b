"""Typed errors and the exit statuses the CLI maps them to (in one place: rocetrace.cli)."""

from __future__ import annotations

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    FINDINGS = 1  # analysis ran and found something at or above --fail-on
    USAGE = 2  # bad command line (click's own status)
    NO_SUCH_FILE = 3
    NOT_A_CAPTURE = 4
    UNSUPPORTED_LINK_TYPE = 5
    OUTPUT_ERROR = 6
    INTERNAL_ERROR = 70


class RocetraceError(Exception):
    """An error the user can act on; the CLI prints its message on one line."""

    exit_status = ExitStatus.INTERNAL_ERROR


class CaptureNotFound(RocetraceError):
    exit_status = ExitStatus.NO_SUCH_FILE


class NotACapture(RocetraceError):
    exit_status = ExitStatus.NOT_A_CAPTURE


class UnsupportedLinkType(RocetraceError):
    exit_status = ExitStatus.UNSUPPORTED_LINK_TYPE


class OutputError(RocetraceError):
    exit_status = ExitStatus.OUTPUT_ERROR
