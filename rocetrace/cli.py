"""The `rocetrace` command: a thin layer that maps typed errors to exit statuses in one place.

Each subcommand lives in rocetrace/commands/<name>.py, parses its options and calls one
library function.
"""

from __future__ import annotations

import sys

import click

from rocetrace import __version__
from rocetrace.commands.analyze import analyze
from rocetrace.commands.decode import decode
from rocetrace.commands.generate import generate
from rocetrace.commands.report import report
from rocetrace.errors import ExitStatus, RocetraceError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="rocetrace")
def cli() -> None:
    """rocetrace: RoCEv2 analysis of packet captures.

    \b
    Decode every RoCE packet (BTH and all extended headers, CNP, PFC), rebuild each queue
    pair's PSN timeline and find what went wrong: PSN gaps, NAKs, retransmissions and how the
    NIC did them, ECN marks and CNPs, PFC pauses, QoS and ECMP-entropy mistakes.

    \b
    Typical use:
      rocetrace analyze capture.pcap            HTML report + terminal summary
      rocetrace analyze capture.pcap --json -   JSON summary on stdout
      rocetrace decode capture.pcap -o pk.parquet
      rocetrace generate gbn-loss -o demo.pcap  synthetic capture with ground truth

    \b
    Exit status: 0 ok, 1 findings at/above --fail-on, 2 usage, 3 no such file,
    4 not a capture, 5 unsupported link type, 6 cannot write output, 70 internal error.
    """


cli.add_command(decode)
cli.add_command(analyze)
cli.add_command(generate)
cli.add_command(report)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; typed errors become one line on stderr and their exit status."""
    try:
        status = cli.main(args=argv, prog_name="rocetrace", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return int(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("rocetrace: aborted", err=True)
        return int(ExitStatus.USAGE)
    except RocetraceError as exc:
        click.echo(f"rocetrace: {exc}", err=True)
        return int(exc.exit_status)
    except BrokenPipeError:
        return int(ExitStatus.OK)
    # A command may return an ExitStatus (e.g. analyze --fail-on); None means success.
    return int(status) if isinstance(status, int) else int(ExitStatus.OK)


def entry_point() -> None:
    sys.exit(main())
