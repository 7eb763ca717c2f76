"""Errors raised by the engine and the expression language.

Each error has a ``kind`` (a short stable string used in JSON output).  Two
families matter to the command line:

* :class:`InputError`: what the user typed is wrong, found before evaluation
  (syntax, unknown names, missing values, bad literals) -> exit code 2.
* :class:`EvaluationError`: found while evaluating or differentiating (shapes,
  non-scalar outputs, freed graphs, devices, limits) -> exit code 1.

Engine errors subclass ``RuntimeError`` like PyTorch's do.

A message that names a parameter (``wrt``, ``order``, ``grad_output``...) names it as the
library does; the error keeps the message's template (:meth:`AutogradCliError.naming`) so
that a caller spells the parameters its own way (:meth:`AutogradCliError.spelled`: the
command line's ``--order``, a batch line's ``"order"``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


class _Fields(dict):
    """A template's fields; a parameter among them is spelled by ``spell``."""

    def __init__(self, fields: Mapping, spell: Callable[[str], str]):
        super().__init__(fields)
        self.spell = spell

    def __missing__(self, key: str) -> str:
        return self.spell(key)


class AutogradCliError(Exception):
    kind = "error"
    #: the message with each parameter it names as a ``{field}`` (None: it names none)
    template: str | None = None
    #: the template's other fields (values, names), filled in as they are
    fields: Mapping = {}

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details

    @classmethod
    def naming(cls, template: str, fields: Mapping | None = None, **details):
        """The error whose message is ``template`` with each parameter (``{wrt}``,
        ``{order}``...) named as the library does and ``fields`` filled in; ``details`` are
        the error's own."""
        error = cls(_fill(template, {}, fields or {}), **details)
        error.template, error.fields = template, dict(fields or {})
        return error

    def spelled(self, spelling: Mapping[str, str] | Callable[[str], str]) -> str:
        """The message with the parameters it names spelled as ``spelling`` (a map, or a
        function of the parameter's name) says; one a map does not name keeps the library's
        name."""
        if self.template is None:
            return self.message
        return _fill(self.template, spelling, self.fields)


def _fill(template: str, spelling, fields: Mapping) -> str:
    spell = (lambda name: spelling.get(name, name)) if isinstance(spelling, Mapping) else spelling
    return template.format_map(_Fields(fields, spell))


class Spelled(str):
    """A library message that is not an error (an optimizer's stop, a warning, a note) naming
    parameters as the library does (``max_iter``), with its template kept, as
    :meth:`AutogradCliError.naming` keeps an error's: :func:`spell` gives it in a caller's
    spelling (the command line's ``--max-iter``, a batch line's ``"max_iter"``).  It is the
    library's text wherever a plain string is expected."""

    template: str
    fields: Mapping

    def __new__(cls, template: str, fields: Mapping | None = None):
        text = super().__new__(cls, _fill(template, {}, fields or {}))
        text.template, text.fields = template, dict(fields or {})
        return text

    def __reduce__(self):  # pickled (a Dask worker's result) with its template
        return (Spelled, (self.template, self.fields))


def spell(text: str, spelling: Mapping[str, str] | Callable[[str], str]) -> str:
    """``text`` with the parameters it names in ``spelling`` (a :class:`Spelled` message), or
    ``text`` itself (a message that names none)."""
    if isinstance(text, Spelled):
        return _fill(text.template, spelling, text.fields)
    return text


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
    """A call of a name that is not a function of the language (``foo(x)``); the
    message suggests the nearest names."""

    kind = "unknown_function"


class UnknownVariableError(InputError):
    """A name given (a value, a ``wrt`` entry, a tangent) that is not a variable of the
    expression: a misspelling, a bound intermediate, a constant such as ``pi``."""

    kind = "unknown_variable"


class MissingValueError(InputError):
    """A variable of the expression with no value given."""

    kind = "missing_value"
    #: whether the message already says how to give the value (else a caller adds its way)
    hinted = False


class ArityError(InputError):
    """A function called with the wrong number of arguments, or a keyword it does not take
    or repeats."""

    kind = "arity"


class BadValueError(InputError):
    """A value that is not what its place needs: a number that does not parse, a ragged
    matrix, an order or a point outside its range."""

    kind = "bad_value"


class EvaluationError(AutogradCliError, RuntimeError):
    kind = "evaluation"


class ShapeError(EvaluationError):
    """Shapes that do not fit: operands that do not broadcast, a matmul whose inner sizes
    differ, a gradient of another shape than its tensor."""

    kind = "shape"


class GradError(EvaluationError):
    """Misuse of backward/grad: non-scalar outputs, freed graphs, unused inputs."""

    kind = "grad"


class NonScalarOutputError(GradError):
    """A gradient asked of an output that is not a scalar, with no gradient given for it."""

    kind = "non_scalar_output"


class DeviceError(EvaluationError):
    """A device that is unknown, or not available here (``gpu`` without CuPy and a GPU)."""

    kind = "device"


class LimitError(EvaluationError):
    """Work past a limit checked before it starts: input size, nesting depth, memory, the
    size of a derivative."""

    kind = "limit"


class UnsupportedError(EvaluationError):
    """Something this installation or this command does not do (an optional package that is
    missing, an op with no symbolic form)."""

    kind = "unsupported"
