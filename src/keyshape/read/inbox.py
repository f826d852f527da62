"""The inbox pattern: index column families inside one row.

One row per user holds the messages AND their indexes, so every inbox query is a single-row Get
(atomic in HBase: a row's cells are written together, so message and index entries never
disagree — unlike index *tables*, see :mod:`keyshape.read.index`). HBase sorts qualifiers inside a
family by unsigned bytes, so a family whose qualifiers start with an order-preserving encoding of a
field IS an index on that field:

==================  ============================================================  ==========
family              qualifier                                                     value
==================  ============================================================  ==========
``m``               message id                                                    the message
``idx-from-asc``    OrderedBytes(sender) + reverse_timestamp(received) + id       message id
``idx-subject-desc``  OrderedBytes(subject, DESCENDING) + reverse_timestamp + id  message id
==================  ============================================================  ==========

"Descending" subjects are byte-inverted (XOR 0xFF). Inverting raw UTF-8 alone is wrong for
prefixes ("ab" would still sort before "abc"), so the subject goes through OrderedBytes TEXT,
whose terminator is inverted too (``keyshape.core.ordered.encode_string(s, descending=True)``). The
reverse timestamp puts the newest mail first among equal senders/subjects; the message id makes
qualifiers unique. Create the table with families ``m``, ``idx-from-asc`` and
``idx-subject-desc``; keep rows small enough for one region (HBase never splits a row).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from keyshape.core import ordered
from keyshape.errors import KeyshapeError

if TYPE_CHECKING:  # annotations only
    from keyshape.store.base import Store

__all__ = ["FAMILIES", "message_cells", "inbox_by"]

FAMILIES = ("m", "idx-from-asc", "idx-subject-desc")
_BY = {"from": b"idx-from-asc", "subject": b"idx-subject-desc"}


def message_cells(message_id: str, sender: str, subject: str, received_ms: int, body: bytes) -> dict[bytes, bytes]:
    """The cells one message adds to its user's row: the message and one entry per index."""
    mid = message_id.encode("utf-8")
    rts = ordered.reverse_timestamp(received_ms)
    return {
        b"m:" + mid: body,
        b"idx-from-asc:" + ordered.encode_string(sender) + rts + mid: mid,
        b"idx-subject-desc:" + ordered.encode_string(subject, descending=True) + rts + mid: mid,
    }


def inbox_by(store: Store, table: str, user_row: bytes, by: str, equals: str | None = None, limit: int | None = None) -> list[str]:
    """Message ids of one user ordered by ``by`` ("from": sender ascending; "subject": subject
    descending), newest first among equals; ``equals`` keeps one sender/subject only. One Get of
    the index family; the qualifiers are sorted here as HBase returns them."""
    family = _BY.get(by)
    if family is None:
        raise KeyshapeError(f"inbox_by: by must be 'from' or 'subject', got {by!r}")
    cells = store.get(table, user_row, columns=[family])
    head = len(family) + 1
    want = None
    if equals is not None:
        want = ordered.encode_string(equals, descending=(by == "subject"))
    out = []
    for column in sorted(cells):
        if want is None or column[head:].startswith(want):
            out.append(cells[column].decode("utf-8"))
            if limit is not None and len(out) >= limit:
                break
    return out
