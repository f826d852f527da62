"""Region labels people can read: a region's start key decoded as far as the schema allows.

A split key is usually a *partial* key: a salt bucket alone (``03_``), the first 8 bytes of a
timestamp (``createTable(start, end, n)`` over a time range), or a whole sampled key. So
:func:`key_label` reads the prefix and then the leading fields one by one and stops at the first
field it cannot read whole, marking the unread rest with "…". It never raises: a key it cannot
read at all (an md5-full hash, bytes from another schema) gets HBase's toStringBinary form.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import KeyshapeError

if TYPE_CHECKING:  # annotations only
    from keyshape.schema.keyschema import KeySchema

__all__ = ["key_label", "label_legend", "leading_values"]

_VALUE_CHARS = 24
_RUN = -1  # _field_end: the field runs into the next one


def label_legend(schema: KeySchema) -> str:
    """What a label is made of, in order: ``"bucket · user_id · ts"`` (``md5``, ``crc32`` or
    ``hash`` instead of ``bucket`` for those prefixes)."""
    p = schema.prefix
    head = [p.label_word] if p.width and p.label_word else []
    return " · ".join(head + [f.name for f in schema.fields])


def key_label(schema: KeySchema, key: bytes) -> str:
    """``key`` as ``"bucket 03 · user0042 · 2026-01-01 03:00"``: the prefix's bucket, then each
    leading field the key holds whole; "…" when bytes remain that do not form a whole field.

    ``""`` for the empty key (the table's first region starts there). Falls back to
    ``to_string_binary(key)`` when not even the first part can be read.
    """
    key = bytes(key)
    if not key:
        return ""
    p, sep = schema.prefix, schema.separator
    parts: list[str] = []
    pos = 0
    if p.width:
        if not p.label_word or len(key) < p.width:
            return to_string_binary(key)
        bucket = p.bucket_text(key[: p.width])
        if bucket is None:
            return to_string_binary(key)
        parts.append(f"{p.label_word} {bucket}")
        pos = p.head_width
        if len(key) > p.width and key[p.width : pos] != (sep if p.sep_after else b""):
            return to_string_binary(key)
    values, pos, run = _leading(schema, key, pos)
    parts += [_value_text(schema.field(name), v) for name, v in values.items()]
    if run:  # fields run together with no separator (encode-only): shown as written
        parts.append(_cut(to_string_binary(key[pos:])))
        pos = len(key)
    if not parts:
        return to_string_binary(key)
    return " · ".join(parts) + ("…" if pos < len(key) else "")


def leading_values(schema: KeySchema, key: bytes) -> dict[str, Any]:
    """The leading fields a possibly partial ``key`` holds whole, by name (``{}`` when it holds
    none, or its prefix does not read): what a split point such as ``t04`` or the first 8 bytes
    of a 12-byte key says about the rows of its region. Never raises."""
    key = bytes(key)
    p, sep = schema.prefix, schema.separator
    pos = 0
    if p.width:
        if len(key) < p.width or (len(key) > p.width and key[p.width : p.head_width] != (sep if p.sep_after else b"")):
            return {}
        pos = p.head_width
    return _leading(schema, key, pos)[0]


def _leading(schema: KeySchema, key: bytes, pos: int) -> tuple[dict[str, Any], int, bool]:
    """The fields read whole from ``pos`` on, where reading stopped, and whether the rest runs
    together with no separator (an encode-only key whose field ends are unknowable)."""
    sep = schema.separator
    fields = schema.fields
    out: dict[str, Any] = {}
    for i, f in enumerate(fields):
        if pos >= len(key):
            break
        try:
            end = _field_end(schema, i, key, pos)
            if end == _RUN:
                return out, pos, True
            value, pos = f.decode_at(key, pos, end)
        except (KeyshapeError, ValueError, IndexError):
            break
        out[f.name] = value
        if i < len(fields) - 1 and sep and pos < len(key):
            if key[pos : pos + len(sep)] != sep:
                break
            pos += len(sep)
    return out, pos, False


def _field_end(schema: KeySchema, i: int, key: bytes, pos: int) -> int | None:
    """Where a variable-width text/bytes field ends in a possibly partial key: at the next
    separator, or the end of the key for the last field (None: the field finds its own end)."""
    f = schema.fields[i]
    if f.self_delimiting:
        return None
    last = i == len(schema.fields) - 1
    if last:
        return len(key)
    if not schema.separator:
        return _RUN  # runs into the next field (an encode-only key): its end is unknowable
    end = key.find(schema.separator, pos)
    # A split key may stop right after the value: the region starts at that value.
    return len(key) if end < 0 else end


def _value_text(f: Any, value: Any) -> str:
    if f.type == "timestamp" and isinstance(value, int):
        try:
            t = datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, OSError, ValueError):
            return str(value)
        if value % 60_000 == 0:
            return t.strftime("%Y-%m-%d %H:%M")
        if value % 1000 == 0:
            return t.strftime("%Y-%m-%d %H:%M:%S")
        return t.strftime("%Y-%m-%d %H:%M:%S.") + f"{value % 1000:03d}"
    if isinstance(value, bytes):
        return _cut(to_string_binary(value))
    if isinstance(value, float):
        return f"{value:g}"
    return _cut(str(value))


def _cut(text: str) -> str:
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"
