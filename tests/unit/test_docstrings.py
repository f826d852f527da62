"""Every public function and class documents each of its parameters (issue 43).

The project's conventions (happybase's ``Table.scan``): the docstring names each parameter in double
backticks, most often one per line (``- ``rows``: rows to generate (default ...)``), sometimes inline
in a sentence (``... against the regions of ``regions``...``); the byte-level modules (core.hbytes)
start a line with it instead (``value: an int in -32768..32767``). A class is documented by its own
docstring and its ``__init__``'s; a dataclass's parameters are its fields. ``*args`` / ``**options``
are not checked (they are passed on; the docstring says where).

A package is listed here once its ``__all__`` passes; add the next one with its docstrings.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

# Packages whose __all__ is held to it (keyshape: the root a library user starts from).
CHECKED = [
    "keyshape",
    "keyshape.errors",
    "keyshape.workload",
    "keyshape.core.arrowkeys",
    "keyshape.core.autosplit",
    "keyshape.core.batchhash",
    "keyshape.core.hbytes",
    "keyshape.core.keyarray",
    "keyshape.core.regions",
    "keyshape.core.hashing",
    "keyshape.core.ordered",
    "keyshape.core.splitmodel",
    "keyshape.core.splits",
    "keyshape.core.splitsim",
    "keyshape.store",
    "keyshape.analysis",
    "keyshape.read",
    "keyshape.report.advise",
    "keyshape.report.heatmap_html",
    "keyshape.report.output",
    "keyshape.ops.live",
    "keyshape.ops.live_notes",
    "keyshape.ops.liveheat",
    "keyshape.ops.load",
    "keyshape.ops.migrate",
    "keyshape.ops.migration",
    "keyshape.ops.online",
    "keyshape.ops.sample",
    "keyshape.ops.split_history",
    "keyshape.ops.splitplan",
    "keyshape.ops.verify",
    "keyshape.ops.watch",
    "keyshape.spark",
]


def _doc(obj: Any) -> str:
    parts = [inspect.getdoc(obj) or ""]
    if inspect.isclass(obj):
        for special in ("__init__", "__new__"):
            method = obj.__dict__.get(special)
            if method is not None and method.__doc__:
                parts.append(inspect.getdoc(method) or "")
    return "\n".join(parts)


def _parameters(obj: Callable[..., Any]) -> list[str]:
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # a builtin without a signature: nothing to check
        return []
    passed_on = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [name for name, p in signature.parameters.items() if name not in ("self", "cls") and p.kind not in passed_on]


def undocumented(obj: Any) -> list[str]:
    """The parameters of ``obj`` its docstring does not name (``name``, ``name(...)`` or ``name=...``
    in double backticks, or ``name:`` starting a line)."""
    doc = _doc(obj)
    return [p for p in _parameters(obj) if not re.search(rf"``\**{re.escape(p)}\b|^\s*(?:- )?{re.escape(p)}:", doc, re.MULTILINE)]


def _public_callables(package: str) -> list[tuple[str, Any]]:
    module = importlib.import_module(package)
    found = []
    for name in module.__all__:
        obj = getattr(module, name, None)  # None: a submodule, listed here with its own __all__
        if inspect.isclass(obj) or inspect.isfunction(obj):
            found.append((f"{package}.{name}", obj))
    return found


@pytest.mark.parametrize("package", CHECKED)
def test_every_public_name_documents_each_parameter(package: str) -> None:
    missing = {name: gaps for name, obj in _public_callables(package) if (gaps := undocumented(obj))}
    assert not missing, f"parameters without a word in the docstring: {missing}"


def test_the_check_sees_a_missing_parameter() -> None:
    def half(rows: int, seed: int = 0) -> int:
        """Half of ``rows``."""
        return rows // 2 + seed

    def whole(rows: int, *chunks: int, **options: Any) -> int:
        """All of it.

        - ``rows``: how many.
        """
        return rows

    class Spec:
        """A spec of ``width`` bytes."""

        def __init__(self, width: int, pad: str) -> None:
            """``pad(...)`` fills it."""

    def pad(value: int, width: int) -> int:
        """Pad it.

        value: the value.
        width: bytes.
        """
        return value

    assert undocumented(half) == ["seed"]
    assert undocumented(pad) == []
    assert undocumented(whole) == []
    assert undocumented(Spec) == []
