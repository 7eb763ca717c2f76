"""Errors raised by the engine and the expression language.

Each error has a ``kind`` (a short stable string used in JSON output).  Two
families matter to the command line:

* :class:`InputError`: what the user typed is wrong, found before evaluation
  (syntax, unknown names, missing values, bad literals) -> exit code 2.
* :class:`EvaluationError`: found while evaluating or differentiating (shapes,
  non-scalar outputs, freed graphs, devices, limits) -> exit code 1.

Engine errors subclass ``RuntimeError`` like PyTorch's do.
"""

from __future__ import annotations


class AutogradCliError(Exception):
    kind = "error"

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details


class InputError(AutogradCliError, ValueError):
    kind = "input"


class ParseError(InputError):
    kind = "syntax"

    def __init__(self, message: str, line: int, column: int, context: str = "", **details):
        super().__init__(message, line=line, column=column, **details)
        self.line = line
        self.column = column
        self.context = context


class UnknownFunctionError(InputError):
    kind = "unknown_function"


class UnknownVariableError(InputError):
    kind = "unknown_variable"


class MissingValueError(InputError):
    kind = "missing_value"


class ArityError(InputError):
    kind = "arity"


class BadValueError(InputError):
    kind = "bad_value"


class EvaluationError(AutogradCliError, RuntimeError):
    kind = "evaluation"


class ShapeError(EvaluationError):
    kind = "shape"


class GradError(EvaluationError):
    """Misuse of backward/grad: non-scalar outputs, freed graphs, unused inputs."""

    kind = "grad"


class NonScalarOutputError(GradError):
    kind = "non_scalar_output"


class DeviceError(EvaluationError):
    kind = "device"


class LimitError(EvaluationError):
    kind = "limit"


class UnsupportedError(EvaluationError):
    """Something this installation or this command does not do (an optional package that is
    missing, an op with no symbolic form)."""

    kind = "unsupported"
