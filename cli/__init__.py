"""The command line: a Typer application over :mod:`autograd_cli.core` with Rich and JSON renderers."""
