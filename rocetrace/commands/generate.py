"""`rocetrace generate` (placeholder until its issue lands)."""

import click


@click.command()
def generate() -> None:
    """Not implemented yet."""
    raise click.ClickException("'generate' is not implemented yet")
