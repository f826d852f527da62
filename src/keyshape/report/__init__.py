"""Reports of an analysis: ``terminal`` (rich tables), ``html`` (self-contained page) and ``png``
(heat maps). Import the submodule you need; ``png`` and ``html`` load matplotlib."""
