"""Shell completion: the variable the completion scripts set and each shell's class.

Imported by the error boundary (:mod:`.main`, which answers the shell) and by the
``completion`` command (which prints the script); nothing heavy is loaded until a class
is asked for.
"""

from __future__ import annotations

#: set by the completion scripts `autograd-cli completion SHELL` prints: complete_bash, ...
COMPLETE_VAR = "_AUTOGRAD_CLI_COMPLETE"
SHELLS = ("bash", "zsh", "fish")


def completion_class(shell: str):
    """The shell's completion class (Typer's: they know each shell's script and format)."""
    from typer import _completion_classes

    from .clicompat import click

    _completion_classes.completion_init()
    cls = click.shell_completion.get_completion_class(shell)
    if shell not in SHELLS or cls is None:
        raise click.exceptions.UsageError(
            f"no completion for the shell {shell!r}: choose one of {', '.join(SHELLS)}"
        )
    return cls
