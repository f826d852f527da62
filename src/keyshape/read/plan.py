"""Scan planning for a salted table: one ``[start, stop)`` stored-key range per bucket.

Ordering model used by the whole read package: a row's *original key* is its stored key without
the prefix (and the separator after it), as ``Prefix.strip`` gives it. Merged reads order rows by
``(original key, stored key)``: by original key first, and rows whose original keys are equal in
several buckets (``random`` salt writes the same key into any bucket) by their stored key, i.e. by
bucket prefix. A reverse read yields exactly the reverse of that order.

Because every bucket head (prefix + separator) has the same width, that order is fixed by the last
row returned alone: in bucket ``h`` the rows after a cursor row ``(ca, ch + ca)`` are those with
original key ``> ca``, plus the one with original key ``== ca`` when ``h > ch``. :func:`after_cursor`
turns one stored key into the exact position in every bucket; that is what a page token holds.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from keyshape.errors import KeyshapeError

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema

__all__ = ["BucketRange", "head_width", "original_key", "plan_ranges", "after_cursor", "fingerprint"]


@dataclass(frozen=True)
class BucketRange:
    """Stored keys ``start <= key < stop`` of one bucket (``stop == b""``: unbounded)."""

    head: bytes
    start: bytes
    stop: bytes

    def is_empty(self) -> bool:
        return bool(self.stop) and self.start >= self.stop


def head_width(schema: KeySchema) -> int:
    """Bytes before the original key: prefix + separator; 0 when the key cannot be stripped
    (md5-full: the stored key is the only key there is)."""
    p = schema.prefix
    return p.head_width if p.recoverable else 0


def original_key(schema: KeySchema, key: bytes) -> bytes:
    """The original key of a stored key (``Prefix.strip``; the key itself for md5-full)."""
    p = schema.prefix
    return p.strip(key) if p.recoverable else key


def _min_stop(a: bytes, b: bytes) -> bytes:
    if not a:
        return b
    if not b:
        return a
    return min(a, b)


def plan_ranges(
    schema: KeySchema,
    leading: Mapping[str, Any],
    start: bytes | None = None,
    stop: bytes | None = None,
) -> list[BucketRange]:
    """The bucket ranges of a query, sorted by head, empty ones dropped.

    ``leading`` goes to ``schema.scan_ranges`` (one range per bucket, or the one bucket the given
    hashed fields pin). ``start``/``stop`` bound the ORIGINAL key, ``start <= original < stop``
    (None or ``b""`` stop: unbounded), and are applied inside every bucket as ``head + start`` /
    ``head + stop``.
    """
    hw = head_width(schema)
    out = []
    for s, e in schema.scan_ranges(**dict(leading)):
        head = s[:hw]
        if start is not None:
            s = max(s, head + bytes(start))
        if stop:
            e = _min_stop(e, head + bytes(stop))
        r = BucketRange(head, s, e)
        if not r.is_empty():
            out.append(r)
    return out


def after_cursor(schema: KeySchema, ranges: list[BucketRange], after: bytes, reverse: bool) -> list[BucketRange]:
    """Narrow ``ranges`` to the rows strictly after the stored key ``after`` in merge order
    (forward: greater ``(original, stored)``; reverse: smaller)."""
    hw = head_width(schema)
    after = bytes(after)
    try:
        a_orig = original_key(schema, after)
    except KeyshapeError as exc:
        raise KeyshapeError(f"page cursor is not a key of this schema: {exc}") from None
    a_head = after[: len(after) - len(a_orig)] if hw else b""
    out = []
    for r in ranges:
        if not reverse:
            lo = r.head + a_orig + (b"" if r.head > a_head else b"\x00")
            n = BucketRange(r.head, max(r.start, lo), r.stop)
        else:
            hi = r.head + a_orig + (b"\x00" if r.head < a_head else b"")
            n = BucketRange(r.head, r.start, _min_stop(r.stop, hi))
        if not n.is_empty():
            out.append(n)
    return out


def fingerprint(table: str, ranges: list[BucketRange], reverse: bool) -> int:
    """A 32-bit check value of a query (table, direction, bucket ranges) so a page token is not
    silently resumed against another query."""
    crc = zlib.crc32(table.encode("utf-8") + (b"\x01" if reverse else b"\x00"))
    for r in ranges:
        for part in (r.start, r.stop):
            crc = zlib.crc32(len(part).to_bytes(4, "big") + part, crc)
    return crc
