"""What the command line says about itself: each command's one-line summary and example,
the top-level help, and the words users type for a command it does not have.

Nothing here imports more than the standard library, so ``autograd-cli --help``,
``autograd-cli help`` and ``--version`` answer without NumPy, the op table or Typer (the
commands themselves are built from their typed signatures in :mod:`.app`, which loads the
engine).  ``app`` gives every command its summary and example from :data:`COMMANDS`;
tests/test_help.py checks that this table and the commands agree.
"""

from __future__ import annotations

#: the app's description, first in the top-level help
ABOUT = (
    "A command-line gradient calculator and expression differentiator (PyTorch autograd "
    "semantics). Variables are given as --NAME VALUE."
)

#: every command, in the order the top-level help lists them: (summary, example).  A
#: summary is one whole short sentence (the top-level help prints it uncut); the example
#: is a command line a user can copy, run by tests/test_help.py (``echo TEXT | ...``
#: feeds TEXT on stdin).
COMMANDS: dict[str, tuple[str, str]] = {
    "eval": (
        "Evaluate the expression: its value and shape.",
        'autograd-cli eval "sum(x**2)" --x "[1, 2, 3]"',
    ),
    "grad": (
        "Compute the value and the gradient.",
        'autograd-cli grad "3*a**3 - b**2" --a 2 --b 6',
    ),
    "hessian": (
        "Compute the value, the gradient and the Hessian.",
        'autograd-cli hessian "x**2*y + exp(y)" --x 1 --y 0',
    ),
    "jacobian": (
        "Compute the value and the Jacobian.",
        'autograd-cli jacobian "[x*y, x + y]" --x 2 --y 3',
    ),
    "diff": (
        "Print the derivative as a simplified expression.",
        'autograd-cli diff "x**3*sin(x)" --order 2',
    ),
    "check": (
        "Compare the gradient with central finite differences.",
        'autograd-cli check "sin(x)*exp(x)" --x 1',
    ),
    "explain": (
        "Show the chain rule step by step.",
        'autograd-cli explain "a*b + sin(a)" --a 2 --b 3',
    ),
    "graph": (
        "Show the computation graph as a tree, in DOT, SVG or PNG.",
        'autograd-cli graph "a*b + sin(a)" --a 2 --b 3',
    ),
    "taylor": (
        "Compute the Taylor coefficients and polynomial at a point.",
        'autograd-cli taylor "exp(sin(x))" --x 0 --order 6',
    ),
    "propagate": (
        "Propagate the inputs' standard uncertainties to the value.",
        'autograd-cli propagate "g*t**2/2" --g "9.81+-0.02" --t "1.5+-0.01"',
    ),
    "minimize": (
        "Find a local minimum from a start point.",
        'autograd-cli minimize "(1-x)**2 + 100*(y-x**2)**2" --x -1 --y 1',
    ),
    "solve": (
        "Find a root of an equation or of a system of equations.",
        'autograd-cli solve "x**2 + y**2 - 4; x - y" --x 1 --y 0',
    ),
    "critical": (
        "Find a stationary point and tell its kind.",
        'autograd-cli critical "x**3 - 3*x + y**2" --x 0.8 --y 0.1',
    ),
    "plot": (
        "Plot a function and its derivatives over a range.",
        'autograd-cli plot "sin(x)" --x -4:4 --order 2',
    ),
    "codegen": (
        "Write the value and gradient as NumPy, torch, JAX or C code.",
        'autograd-cli codegen "3*a**3 - b**2" --target numpy',
    ),
    "sparsity": (
        "Show the sparsity pattern of the Jacobian or Hessian.",
        'autograd-cli sparsity "sum((x[1:] - x[:-1]**2)**2)" --x "[0, 0, 0, 0]"',
    ),
    "batch": (
        "Evaluate many lines of a JSONL or CSV file.",
        """echo '{"expr": "x**2", "vars": {"x": 3}}' | autograd-cli batch -""",
    ),
    "repl": (
        "Start an interactive session.",
        "autograd-cli repl",
    ),
    "completion": (
        "Print the shell's completion script.",
        "autograd-cli completion bash",
    ),
}

#: the options that may come before the command's name (``main.hoist_global_options``
#: moves them after it): (option, value's name, help)
GLOBAL_OPTIONS = (
    ("--json", "", "One JSON document on stdout, errors included."),
    ("--device", "cpu|gpu", "cpu (NumPy, the default) or gpu (CuPy)."),
    ("--dtype", "TYPE", "float64 (the default), float32, complex128 or complex64."),
    ("--precision", "N", "Digits after the decimal point in tables, or full."),
    ("--plain", "", "Every round-trip digit in tables."),
    ("--max-memory", "SIZE", "The most one array may take: 512M, 16G, or 0 for none."),
    ("--timeout", "SECONDS", "Stop with an error after this many seconds."),
)

#: words users type for a command (git's, SymPy's, a thesaurus'): the command meant
SYNONYMS = {
    "calc": "eval",
    "calculate": "eval",
    "evaluate": "eval",
    "value": "eval",
    "gradient": "grad",
    "backward": "grad",
    "hess": "hessian",
    "jac": "jacobian",
    "jvp": "grad",
    "vjp": "grad",
    "d": "diff",
    "derivative": "diff",
    "derive": "diff",
    "differentiate": "diff",
    "symbolic": "diff",
    "gradcheck": "check",
    "verify": "check",
    "chain": "explain",
    "steps": "explain",
    "tree": "graph",
    "dot": "graph",
    "series": "taylor",
    "expand": "taylor",
    "uncertainty": "propagate",
    "error": "propagate",
    "min": "minimize",
    "minimise": "minimize",
    "optimize": "minimize",
    "optimise": "minimize",
    "argmin": "minimize",
    "compile": "codegen",
    "lambdify": "codegen",
    "generate": "codegen",
    "root": "solve",
    "roots": "solve",
    "findroot": "solve",
    "stationary": "critical",
    "extremum": "critical",
    "extrema": "critical",
    "graphplot": "plot",
    "draw": "plot",
    "many": "batch",
    "shell": "repl",
    "interactive": "repl",
    "session": "repl",
}


def example_epilog(name: str) -> str:
    """The end of ``NAME --help``: its example, kept on one line (Click's ``\\b``)."""
    return "\b\nExample:\n  " + COMMANDS[name][1]


def suggestion(word: str) -> str | None:
    """The command a user probably meant by ``word`` (a synonym or a near spelling)."""
    import difflib

    lowered = word.lower()
    if lowered in COMMANDS:
        return lowered
    if lowered in SYNONYMS:
        return SYNONYMS[lowered]
    close = difflib.get_close_matches(lowered, list(COMMANDS), n=1, cutoff=0.7)
    return close[0] if close else None


def unknown_command(word: str) -> str:
    """The usage error for ``autograd-cli WORD`` where WORD names no command."""
    import re

    from ..core.safetext import excerpt

    meant = suggestion(word)
    if meant is not None:
        return f"no command {excerpt(word)}: did you mean {meant}? ({COMMANDS[meant][1]})"
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", word):  # an expression, not a command
        return (
            f"no command {excerpt(word)}: the command comes first "
            f"(autograd-cli eval EXPRESSION --NAME VALUE; autograd-cli --help lists them)"
        )
    return (
        f"no command {excerpt(word)}: the commands are {', '.join(COMMANDS)} "
        f"(autograd-cli --help describes them)"
    )


def _width() -> int:
    """The help's width, as Click computes it: the terminal's, at most 78, at least 50."""
    import shutil

    return max(min(shutil.get_terminal_size().columns, 80) - 2, 50)


def _definitions(rows: list[tuple[str, str]], width: int) -> list[str]:
    """Two columns as Click's ``HelpFormatter.write_dl`` writes them, indented by 2."""
    import textwrap

    first = min(max(len(term) for term, _ in rows), 30) + 2
    lines = []
    for term, text in rows:
        wrapped = textwrap.wrap(text, max(width - 2 - first, 10)) or [""]
        if len(term) + 2 <= first:
            lines.append(f"  {term.ljust(first)}{wrapped[0]}".rstrip())
            wrapped = wrapped[1:]
        else:
            lines.append(f"  {term}")
        lines.extend(" " * (2 + first) + line for line in wrapped)
    return lines


def top_level_help(width: int | None = None) -> str:
    """``autograd-cli --help`` (and ``autograd-cli help``): the commands, each with its
    summary, the options before a command, and an example."""
    import textwrap

    width = _width() if width is None else width
    options = [(f"{name} {value}".strip(), text) for name, value, text in GLOBAL_OPTIONS]
    lines = [
        "Usage: autograd-cli [OPTIONS] COMMAND [ARGS]...",
        "",
        *textwrap.wrap(ABOUT, width, initial_indent="  ", subsequent_indent="  "),
        "",
        "Options:",
        *_definitions(
            [
                ("-V, --version", "Print the version and exit (with --json: as JSON)."),
                ("-h, --help", "Show this message and exit."),
            ],
            width,
        ),
        "",
        "Global options (before the command's name or after it):",
        *_definitions(options, width),
        "",
        "Commands:",
        *_definitions([(name, summary) for name, (summary, _) in COMMANDS.items()], width),
        "",
        *textwrap.wrap(
            "autograd-cli help COMMAND (or autograd-cli COMMAND --help) describes one command.",
            width,
            initial_indent="  ",
            subsequent_indent="  ",
        ),
        "",
        "  Example:",
        "    " + COMMANDS["grad"][1],
    ]
    return "\n".join(lines) + "\n"
