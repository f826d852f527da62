"""Page tokens: the position after the last row returned, as a short URL-safe string.

Layout (before base64url without padding)::

    version (1 byte, = 1) | flags (1 byte, bit 0 = reverse) | query check (4 bytes, big-endian
    CRC-32 of table, direction and bucket ranges) | stored key of the last row returned

One stored key is enough to resume every bucket exactly (see :mod:`keyshape.read.plan`), so a
token for a 65,536-bucket md5 table is as short as one for an unsalted table.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from keyshape.errors import KeyshapeError

__all__ = ["Cursor", "encode_token", "decode_token"]

_VERSION = 1


@dataclass(frozen=True)
class Cursor:
    """What a page token holds."""

    after: bytes
    check: int
    reverse: bool


def encode_token(cursor: Cursor) -> str:
    """The page token for ``cursor``."""
    raw = bytes([_VERSION, 1 if cursor.reverse else 0]) + cursor.check.to_bytes(4, "big") + cursor.after
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def decode_token(token: str) -> Cursor:
    """The cursor in ``token``; KeyshapeError when it is not a keyshape page token."""
    text = token.strip()
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) < 7 or raw[0] != _VERSION or raw[1] > 1:
        raise KeyshapeError(f"{token[:40]!r} is not a keyshape page token; pass the next_token of the previous page unchanged")
    return Cursor(raw[6:], int.from_bytes(raw[2:6], "big"), bool(raw[1]))
