"""The commands for a shell: repl (an interactive session, :mod:`autograd_cli.cli.repl`)
and completion (the shell's completion script, :mod:`autograd_cli.cli.completion`)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from .common import command, enter_limits
from .shared import RUNNER, SESSION, shared


@command("repl", shared=SESSION, variables=False)
def repl_command(
    ctx: typer.Context,
    no_prompt: Annotated[
        bool,
        typer.Option(
            "--no-prompt", help="Read lines without the interactive prompt, even on a terminal."
        ),
    ] = False,
):
    """Start an interactive session.

    Lines such as x = 2, then x**2, :grad sin(x)*x, :diff x**3, :vars, :functions, :quit.
    With stdin not a terminal, one result per input line (JSON with --json); exit 1 if any
    line failed. At a terminal the session ends with 0 (Ctrl-D or :quit).
    """
    from .. import repl

    given = shared(ctx)
    enter_limits(ctx, given.max_memory, given.timeout)  # for the whole session
    session = repl.Session(given.json_out, given.device, given.dtype, run=ctx.meta[RUNNER])
    if repl.serve(session, prompt=not (no_prompt or given.json_out)):
        raise typer.Exit(1)


@command("completion", shared=("json_out",), variables=False)
def completion_command(
    ctx: typer.Context,
    shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
):
    """Print the shell's completion script.

    It completes the commands and their options.  To install it:

    \b
    bash: eval "$(autograd-cli completion bash)" in ~/.bashrc
    zsh:  the same line in ~/.zshrc, after compinit
    fish: autograd-cli completion fish > ~/.config/fish/completions/autograd-cli.fish
    """
    from ..completion import COMPLETE_VAR, completion_class

    group = ctx.find_root().command  # the script names the program, not its commands
    completer = completion_class(shell)(group, {}, "autograd-cli", COMPLETE_VAR)
    script = completer.source().strip("\n") + "\n"
    if shared(ctx).json_out:
        from ..render import emit_json

        emit_json({"shell": shell, "script": script})
    else:
        sys.stdout.write(script)
