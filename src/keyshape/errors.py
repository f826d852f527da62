"""The errors keyshape raises: one hierarchy, three kinds a caller can tell apart.

- :class:`BadInput` -- what was given is wrong (a schema, an option, a key, a file); the message says
  what is wrong and how to fix it. Also a ``ValueError``, so ``except ValueError`` keeps working.
  :class:`SchemaError` is the kind for a key schema.
- :class:`StoreError` -- a store (embedded or HBase) failed or refused an operation: a lost
  connection, a missing table (:class:`TableNotFound`), rows not written (:class:`WriteFailed`).
  NOT a ``ValueError``: a lost connection is not bad input, and ``except ValueError`` around a
  parse must not swallow it.
- :class:`Refused` -- keyshape will not do what was asked because the answer would be wrong
  (:class:`KeysDoNotFit`: keys that do not fit the schema are not judged on the wrong regions).

Each derives from :class:`KeyshapeError`, which the CLI turns into one line on stderr and a
non-zero exit. ``KeyshapeError(...)`` itself, raised directly by code written before the split
(0.1), still means bad input: it makes a :class:`BadInput`. New code raises the kind it means.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BadInput", "KeyshapeError", "KeysDoNotFit", "Refused", "SchemaError", "StoreError", "TableNotFound", "WriteFailed"]


class KeyshapeError(Exception):
    """Any error keyshape raises on purpose; catch this to catch them all.

    Raised directly (``raise KeyshapeError("...")``, the 0.1 way to say bad input) it is a
    :class:`BadInput`, so such a call site stays a ``ValueError`` as it always was."""

    def __new__(cls, *args: Any, **kwargs: Any) -> KeyshapeError:
        return super().__new__(BadInput if cls is KeyshapeError else cls, *args)


class BadInput(KeyshapeError, ValueError):
    """Bad input or an impossible request; the message says what is wrong and how to fix it."""


class SchemaError(BadInput):
    """A key schema (TOML or dict) is malformed; the message names the file, the key path and the fix."""


class StoreError(KeyshapeError):
    """A store (embedded or HBase) refused or failed an operation (not bad input: not a ValueError)."""


class TableNotFound(StoreError):
    """The named table does not exist in the store."""


class WriteFailed(StoreError):
    """Rows could not be written: ``message`` says how many and why; ``rows`` lists every row key
    that is NOT stored."""

    def __init__(self, message: str, rows: list[bytes] | None = None) -> None:
        super().__init__(message)
        self.rows: list[bytes] = list(rows or [])


class Refused(KeyshapeError):
    """keyshape will not carry out the request as asked, because the result would be wrong; the
    message says why and what to do instead."""


class KeysDoNotFit(Refused, BadInput):
    """Real keys analysed against a schema do not fit it (wrong salts, another format): the
    analysis refuses rather than judge them on the wrong regions. ``message`` says how many keys
    did not fit and what to do; ``check`` is the
    :class:`keyshape.schema.keycheck.KeyCheck` with the counts and examples. Also a
    :class:`BadInput` (the keys given are not the schema's)."""

    def __init__(self, message: str, check: object = None) -> None:
        super().__init__(message)
        self.check = check
