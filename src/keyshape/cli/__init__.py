"""The ``keyshape`` command: one module per command group, each thin (parse, call the library,
print). ``main`` is the console script."""

from keyshape.cli.main import main

__all__ = ["main"]
