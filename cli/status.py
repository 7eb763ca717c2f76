"""Exit codes, in one place (see SPEC.md, "Exit codes")."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    #: found during evaluation: shapes, non-scalar output without --grad-output, GPU, limits
    EVALUATION_ERROR = 1
    #: what the user typed is wrong, found before evaluation: syntax, names, values, options
    USAGE_ERROR = 2
    #: interrupted by Ctrl-C (128 + SIGINT)
    INTERRUPTED = 130
