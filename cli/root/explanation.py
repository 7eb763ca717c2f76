"""What :func:`autograd_cli.explain` returns: core's plain Explanation, with its text.

``core`` knows no output formats; the text is the command line's rendering
(:func:`autograd_cli.cli.render.explain_text`), offered here as a property.
"""

from __future__ import annotations

from dataclasses import fields

from .core import explain as core_explain


class Explanation(core_explain.Explanation):
    """An :class:`autograd_cli.core.explain.Explanation` (plain data) plus ``text``."""

    @property
    def text(self) -> str:
        """The explanation laid out as ``autograd-cli explain`` prints it."""
        from .cli.render import explain_text

        return explain_text(self)

    @classmethod
    def of(cls, plain: core_explain.Explanation) -> Explanation:
        return cls(**{f.name: getattr(plain, f.name) for f in fields(plain)})
