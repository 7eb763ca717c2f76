"""Click, as Typer ships it: recent Typer releases vendor it as ``typer._click``."""

try:  # Typer >= 0.2x vendors Click
    from typer import _click as click  # noqa: F401
except ImportError:  # pragma: no cover - older Typer depends on Click itself
    import click  # noqa: F401
