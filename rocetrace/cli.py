"""The `rocetrace` command: a thin layer that maps typed errors to exit statuses in one place.

Each subcommand lives in rocetrace/commands/<name>.py, parses its options and calls one
library function. Whatever goes wrong ends here as one line on stderr and an exit status
of rocetrace.errors.ExitStatus: typed errors their own, Ctrl-C 130, a bug 70 (with the
traceback saved to a file, not thrown at the user).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

import click

from rocetrace import __version__, collector
from rocetrace.errors import ExitStatus, RocetraceError, exit_status_line

# Each subcommand's module, imported only when that command runs (or --help lists them):
# `generate` alone costs ~30 ms of scenario tables that `analyze` and `decode` never use.
COMMANDS = {
    "decode": "rocetrace.commands.decode",
    "analyze": "rocetrace.commands.analyze",
    "generate": "rocetrace.commands.generate",
    "report": "rocetrace.commands.report",
}
# The commands that resume the garbage collector themselves once their libraries are
# imported (rocetrace.collector); any other resumes it as it is looked up.
RESUME_COLLECTOR_THEMSELVES = frozenset({"decode", "analyze"})

HELP = f"""rocetrace: RoCEv2 analysis of packet captures.

\b
Decode every RoCE packet (BTH and all extended headers, CNP, PFC), rebuild each queue
pair's PSN timeline and find what went wrong: PSN gaps, NAKs, retransmissions and how the
NIC did them, ECN marks and CNPs, PFC pauses, QoS and ECMP-entropy mistakes.

\b
Typical use:
  rocetrace analyze capture.pcap            HTML report + terminal summary
  rocetrace analyze capture.pcap --json -   JSON summary on stdout
  tcpdump -w - | rocetrace analyze -        a capture read from a pipe
  rocetrace decode capture.pcap -o pk.parquet
  rocetrace generate gbn-loss -o demo.pcap  synthetic capture with ground truth

Exit status: {exit_status_line()}.
"""


class LazyGroup(click.Group):
    """A group whose subcommands are imported by name when first asked for, so a command's
    start-up pays for its own imports only."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        command = getattr(importlib.import_module(module), cmd_name)
        assert isinstance(command, click.Command)
        if cmd_name not in RESUME_COLLECTOR_THEMSELVES:
            collector.resume()
        return command


@click.group(cls=LazyGroup, help=HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rocetrace")
def cli() -> None:
    pass


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every way out is one line on stderr at most, and its exit status."""
    try:
        return _run(argv)
    except KeyboardInterrupt:  # outside click's own handling (e.g. while reporting)
        return _interrupted()


def _run(argv: list[str] | None) -> int:
    try:
        status = cli.main(args=argv, prog_name="rocetrace", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return int(exc.exit_code)
    except click.exceptions.Abort:  # click's wrapper of KeyboardInterrupt / EOF
        return _interrupted()
    except RocetraceError as exc:
        click.echo(f"rocetrace: {_one_line(str(exc))}", err=True)
        return int(exc.exit_status)
    except BrokenPipeError:
        _silence_stdout()
        return int(ExitStatus.OK)
    except Exception as exc:  # a bug: say so in one line, keep the traceback in a file
        return _internal_error(exc)
    # A command may return an ExitStatus (e.g. analyze --fail-on); None means success.
    return int(status) if isinstance(status, int) else int(ExitStatus.OK)


def _interrupted() -> int:
    click.echo("rocetrace: interrupted", err=True)
    return int(ExitStatus.INTERRUPTED)


def _one_line(text: str, width: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _internal_error(exc: BaseException) -> int:
    """One line naming the error and the file holding its traceback (for a bug report)."""
    where = save_traceback(exc)
    kept = f"traceback in {where}" if where else "the traceback could not be saved"
    message = _one_line(f"{type(exc).__name__}: {exc}")
    click.echo(f"rocetrace: internal error (a bug, please report it): {message}; {kept}", err=True)
    return int(ExitStatus.INTERNAL_ERROR)


def save_traceback(exc: BaseException) -> str | None:
    """The traceback in a fresh file of the temporary directory ($TMPDIR); its path."""
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(exc))
    try:
        fd, path = tempfile.mkstemp(prefix="rocetrace-crash-", suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"rocetrace {__version__}, argv {sys.argv!r}\n{text}")
    except OSError:
        return None
    return path


def _silence_stdout() -> None:
    """The reader of stdout went away: point stdout at /dev/null so the interpreter's final
    flush does not print a second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def entry_point() -> None:
    use_system_allocator()
    quiet_blas()
    collector.pause()  # while the command imports its libraries (rocetrace/collector.py)
    exit_now(main())


def use_system_allocator() -> None:
    """Arrow's buffers from the C library's malloc instead of pyarrow's default (mimalloc),
    unless the environment names a pool: mimalloc keeps the pages of freed buffers and its
    own reserve, ~20 MB of a 1M-packet `analyze`'s peak RSS (10 MB of `decode`'s) for no
    measurable speed. Read by pyarrow when it first allocates, so set before it is
    imported; Dask workers this process starts inherit it. The console script only: a
    notebook's or another program's pyarrow is theirs to configure."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")


def quiet_blas() -> None:
    """One OpenBLAS thread unless the environment names a number: no command does linear
    algebra, and numpy's import starts a pool of BLAS threads that spin beside the work
    (~40 ms of CPU of a 1M-packet `analyze --json`, ~45 ms of `decode`'s). Read when numpy
    is first imported, so set before; Dask workers this process starts inherit it. The
    console script only, as use_system_allocator."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def exit_now(status: int) -> None:
    """Exit without tearing the interpreter down. Freeing a large capture's tables object
    by object and finalizing every module takes ~0.2 s after a 1M-packet analysis, a
    fifth of the run, for nothing: the memory goes back to the system anyway. What must
    still happen does: the atexit handlers run (temporary folders, a Dask cluster's
    shutdown) and the standard streams are flushed. Under a profiler or a tracer (cProfile,
    coverage) the interpreter exits as usual, so they can write what they measured."""
    import atexit

    if sys.getprofile() is not None or sys.gettrace() is not None:
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to say there
            stream.flush()
    os._exit(status)
