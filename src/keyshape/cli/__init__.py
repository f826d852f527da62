"""The ``keyshape`` command: one module per command group, each thin (parse, call the library,
print); the options they share, declared once, in ``options``. ``main`` is the console script
(``python -m keyshape`` runs it too)."""

from keyshape.cli.main import main

__all__ = ["main"]
