"""`rocetrace decode` (placeholder until its issue lands)."""

import click


@click.command()
def decode() -> None:
    """Not implemented yet."""
    raise click.ClickException("'decode' is not implemented yet")
