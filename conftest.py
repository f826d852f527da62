"""Collection rules for the docstring examples (``--doctest-modules`` over ``src/keyshape``,
pyproject's [tool.pytest.ini_options]): a module whose optional extra is not installed is not
collected, so a user who installed only ``.[test]`` runs the suite as the README says."""

from __future__ import annotations

import importlib.util

# Modules that need an optional extra (pyproject's [project.optional-dependencies]) to import or
# to run their examples, by the package each extra installs.
_EXTRAS = {
    "pyspark": ["src/keyshape/spark/*.py"],
}


def _missing(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is None
    except (ImportError, ValueError):  # a broken or blocked install counts as missing
        return True


collect_ignore_glob = [pattern for package, patterns in _EXTRAS.items() if _missing(package) for pattern in patterns]
# `python -m keyshape` entry points run the CLI when imported as __main__ only, but a doctest
# collector has no business importing them.
collect_ignore = ["src/keyshape/__main__.py", "src/keyshape/cli/__main__.py"]
