"""The errors keyshape raises on bad input or a failing store.

All derive from ``ValueError`` so that callers who only know "bad input" can catch one thing; the
CLI can turn any of them into a single line on stderr.
"""

from __future__ import annotations


class KeyshapeError(ValueError):
    """Bad input or an impossible request; the message says what is wrong and how to fix it."""


class SchemaError(KeyshapeError):
    """A key schema (TOML or dict) is malformed; the message names the file, the key path and the fix."""


class StoreError(KeyshapeError):
    """A store (embedded or HBase) refused or failed an operation."""


class TableNotFound(StoreError):
    """The named table does not exist in the store."""


class WriteFailed(StoreError):
    """Rows could not be written; ``rows`` lists every row key that is NOT stored."""

    def __init__(self, message: str, rows: list[bytes] | None = None) -> None:
        super().__init__(message)
        self.rows: list[bytes] = list(rows or [])


class KeysDoNotFit(KeyshapeError):
    """Real keys analysed against a schema do not fit it (wrong salts, another format): the
    analysis refuses rather than judge them on the wrong regions. ``check`` is the
    :class:`keyshape.schema.keycheck.KeyCheck` with the counts and examples."""

    def __init__(self, message: str, check: object = None) -> None:
        super().__init__(message)
        self.check = check
