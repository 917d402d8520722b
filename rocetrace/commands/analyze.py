"""`rocetrace analyze` (placeholder until its issue lands)."""

import click


@click.command()
def analyze() -> None:
    """Not implemented yet."""
    raise click.ClickException("'analyze' is not implemented yet")
