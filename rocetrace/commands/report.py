"""`rocetrace report` (placeholder until its issue lands)."""

import click


@click.command()
def report() -> None:
    """Not implemented yet."""
    raise click.ClickException("'report' is not implemented yet")
