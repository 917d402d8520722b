"""Typed errors and the exit statuses the CLI maps them to (in one place: rocetrace.cli).

EXIT_STATUS_MEANINGS is the one table of what each status means: `rocetrace --help`, the
README and docs/reliability.md print it, and a test holds all three to it.
"""

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
    LIMIT_EXCEEDED = 7  # a safety limit on hostile input (its option lifts it)
    INTERNAL_ERROR = 70  # a bug: one line on stderr, the traceback in a file
    INTERRUPTED = 130  # SIGINT (Ctrl-C), as a shell reports 128 + 2


EXIT_STATUS_MEANINGS: dict[ExitStatus, str] = {
    ExitStatus.OK: "ok",
    ExitStatus.FINDINGS: "findings at/above --fail-on",
    ExitStatus.USAGE: "usage",
    ExitStatus.NO_SUCH_FILE: "no such file",
    ExitStatus.NOT_A_CAPTURE: "not a capture (or summary, bundle)",
    ExitStatus.UNSUPPORTED_LINK_TYPE: "unsupported link type",
    ExitStatus.OUTPUT_ERROR: "cannot write output (or it is the input)",
    ExitStatus.LIMIT_EXCEEDED: "input beyond a safety limit",
    ExitStatus.INTERNAL_ERROR: "internal error",
    ExitStatus.INTERRUPTED: "interrupted",
}


def exit_status_line() -> str:
    """'0 ok, 1 findings ..., 130 interrupted': the help's and the README's wording."""
    return ", ".join(f"{int(s)} {meaning}" for s, meaning in EXIT_STATUS_MEANINGS.items())


class RocetraceError(Exception):
    """An error the user can act on; the CLI prints its message on one line."""

    exit_status = ExitStatus.INTERNAL_ERROR


class CaptureNotFound(RocetraceError):
    exit_status = ExitStatus.NO_SUCH_FILE


class NotACapture(RocetraceError):
    exit_status = ExitStatus.NOT_A_CAPTURE


class InvalidResults(NotACapture):
    """A summary or bundle given to `rocetrace report` that does not hold what it must; the
    message names the field."""


class UnsupportedLinkType(RocetraceError):
    exit_status = ExitStatus.UNSUPPORTED_LINK_TYPE


class OutputError(RocetraceError):
    exit_status = ExitStatus.OUTPUT_ERROR


class LimitExceeded(RocetraceError):
    """Input past a safety limit (a gzip bomb, say); the message names the option that
    lifts it."""

    exit_status = ExitStatus.LIMIT_EXCEEDED
