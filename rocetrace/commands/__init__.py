"""One module per subcommand of the rocetrace CLI."""
