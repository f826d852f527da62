"""Reading a key schema (a TOML file or the same structure as a dict) with precise errors.

Every problem raises :class:`keyshape.errors.SchemaError` with one line that names the source (the
file, or ``<dict>``), the key path (``key.prefix.strategy``) and how to fix it. Unknown keys are
errors too, so a typo never silently falls back to a default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from keyshape.errors import SchemaError

__all__ = ["Section", "fail"]

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", float: "a number",
               list: "a list", dict: "a table"}


def fail(source: str, path: str, problem: str, fix: str = "") -> NoReturn:
    """Raise the SchemaError for ``path`` in ``source``."""
    msg = f"{source}: {path}: {problem}"
    raise SchemaError(f"{msg}; {fix}" if fix else msg)


class Section:
    """One table of the schema at a dotted ``path``; hands out checked values and remembers which
    keys were read so :meth:`done` can reject the rest."""

    def __init__(self, data: Any, path: str, source: str) -> None:
        if not isinstance(data, Mapping):
            fail(source, path, f"expected a table, got {data!r}", f"write [{path}] with key = value lines")
        self.data, self.path, self.source = data, path, source
        self._seen: set[str] = set()

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str, fix: str = "") -> NoReturn:
        fail(self.source, self.at(key), problem, fix)

    def has(self, key: str) -> bool:
        return key in self.data

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, *,
            required: bool = False, choices: Iterable[Any] | None = None,
            minimum: int | None = None, maximum: int | None = None) -> Any:
        """The value at ``key``, checked for type, choices and range; ``default`` when absent."""
        self._seen.add(key)
        if key not in self.data:
            if required:
                self.fail(key, "is missing", f"add {key} = ... to [{self.path or 'top level'}]")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if float in kinds and int not in kinds and isinstance(value, int) and not isinstance(value, bool):
            ok, value = True, float(value)
        if not ok:
            want = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
            self.fail(key, f"must be {want}, got {value!r}")
        if choices is not None:
            options = list(choices)
            if value not in options:
                self.fail(key, f"unknown value {value!r}",
                          "use one of: " + ", ".join(str(o) for o in options))
        if minimum is not None and value < minimum or maximum is not None and value > maximum:
            bounds = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
            self.fail(key, f"{value} is out of range", f"use a value in {bounds}")
        return value

    def section(self, key: str, *, required: bool = False) -> Section | None:
        """The sub-table at ``key`` (None when absent and not required)."""
        value = self.get(key, dict, required=required)
        return None if value is None else Section(value, self.at(key), self.source)

    def sections(self, key: str, *, required: bool = False) -> list[Section]:
        """The array of tables at ``key`` (``[[key]]`` in TOML)."""
        items = self.get(key, list, [], required=required)
        return [Section(v, f"{self.at(key)}[{i}]", self.source) for i, v in enumerate(items)]

    def done(self) -> None:
        """Reject every key that was never read (a typo or an option of another strategy)."""
        extra = [k for k in self.data if k not in self._seen]
        if extra:
            known = ", ".join(sorted(self._seen)) or "(none)"
            self.fail(extra[0], "unknown key", f"known keys here: {known}")
