"""``timestamp``: milliseconds since the epoch (0 up to ``Long.MAX_VALUE``).

Encodings: ``hbase`` (the default: ``Bytes.toBytes(long)``, 8 bytes, what Java writers put in keys,
order-preserving for these non-negative values), ``ordered`` (9 bytes) and ``text`` (19 digits).
``desc`` writes ``Long.MAX_VALUE - ts``, the classic reverse timestamp. Values may be given as
ints, ``datetime`` or ISO-8601 text.
"""

from __future__ import annotations

import datetime as _dt
import operator
from typing import Any

import pyarrow as pa

from keyshape.core import hbytes
from keyshape.errors import KeyshapeError
from keyshape.schema.fieldtypes.families import IntegerType

__all__ = ["TimestampType", "parse_timestamp"]


def parse_timestamp(value: Any) -> int:
    """Milliseconds since the epoch from an int, a ``datetime`` (naive = UTC) or an ISO-8601 string."""
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text)
        except ValueError:
            pass
        try:
            value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise KeyshapeError(f"cannot read {value!r} as a timestamp; give ms since the epoch or ISO-8601 like 2026-01-01T00:00:00Z") from None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return int(value.timestamp() * 1000)
    try:
        return operator.index(value)
    except TypeError:
        raise KeyshapeError(f"a timestamp must be integer ms, got {value!r}") from None


class TimestampType(IntegerType):
    name = "timestamp"
    encodings = ("hbase", "ordered", "text")
    range_fix = "a timestamp is ms since 1970, 0 up to 2^63-1"

    def coerce(self, spec: Any, value: Any) -> int:
        return parse_timestamp(value)

    min, max = 0, hbytes.MAX_LONG
    text_digits = 19
    widths = {"ordered": 9, "hbase": 8}
    native_codes = {"text": 2, "hbase": 4}  # K_DIGITS, K_INT64
    arrow_type = pa.int64()
    column_dtype = "int64"
