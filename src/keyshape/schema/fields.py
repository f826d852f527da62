"""The fields of a row key: their types, how each is written as bytes, and how it is read back.

Types and encodings (``encoding`` in the schema; the default is marked *):

=========  ====================================================================================
type       encodings
=========  ====================================================================================
string     ``text``* (UTF-8; ``hbase`` is a synonym: ``Bytes.toBytes(String)`` is UTF-8),
           ``ordered`` (OrderedBytes TEXT: 0x34 + UTF-8 + 0x00, self-delimiting)
bytes      ``hbase``* (the bytes unchanged), ``ordered`` (OrderedBytes BlobVar, self-delimiting;
           like HBase's it sorts exactly only among values of equal length)
int32      ``ordered``* (OrderedBytes FixedInt32, 5 bytes), ``hbase`` (``Bytes.toBytes(int)``,
           4 bytes), ``text`` (zero-padded decimal, ``width`` digits, default 10)
int64      ``ordered``* (FixedInt64, 9 bytes), ``hbase`` (8 bytes), ``text`` (default 19 digits)
float64    ``ordered``* (FixedFloat64, 9 bytes), ``hbase`` (``Bytes.toBytes(double)``, 8 bytes)
timestamp  ``hbase``* (``Bytes.toBytes(long)`` of ms since the epoch, 8 bytes), ``ordered``,
           ``text`` (19 digits)
=========  ====================================================================================

Why these defaults: ``ordered`` is HBase's standard order-preserving encoding and is the only one
that sorts negative numbers correctly, so generic numbers get it. Timestamps are never negative, and
``Bytes.toBytes(ts)`` / ``Bytes.toBytes(Long.MAX_VALUE - ts)`` is what existing Java writers put in
keys, so timestamps default to ``hbase`` (order-preserving for non-negative values). Strings default
to plain UTF-8, as in every hand-written HBase key.

``order = "desc"`` sorts newest/largest first:

* numbers with ``hbase`` or ``text``: ``MAX - v`` where MAX is the Java type's MAX_VALUE (the
  classic reverse timestamp ``Long.MAX_VALUE - ts``); ``v`` must be >= 0. ``text`` desc writes the
  full 10/19 digits of MAX - v, so ``width`` must be at least that.
* ``ordered``: OrderedBytes DESCENDING (every byte XOR 0xFF), correct for every value.
* string/bytes with ``text``/``hbase``: every byte XOR 0xFF. Exact ordering needs a fixed
  ``width`` (a shorter string would still sort first); ``lint`` warns otherwise.

``width`` for string/bytes (``text``/``hbase``) fixes the byte length: a shorter value is padded
with ``pad_char`` (default ``"0"`` for strings, 0x00 for bytes) on the ``pad`` side (``"left"``,
the default for strings, or ``"right"``; ``"none"``, the default for bytes: a value must be
exactly ``width`` bytes, as binary ids and zero-padded ids given whole are, and nothing is stripped
on decode); a longer one is an error (``truncate = "error"``, the default) or keeps its last
``width`` bytes (``truncate = "keep-last"``, e.g. keeping the last digits of an order number).

Padding never gives two values of one run one key. :meth:`FieldSpec.decode_at` strips the
padding, so a value stored whole that itself starts (left pad) or ends (right pad) with the pad
byte shares its key with the value without it (``"0abc"`` and ``"abc"`` are both ``0abc`` at width
4) and decodes as that other value. Two such values that meet in one run of data
(:meth:`FieldSpec.encode_column`: ``encode_many``, a batch a writer encodes) are refused, naming
both, with the fix (a ``pad_char`` the values never hold at that end, or ``pad = "none"``); a value
alone is taken (``"0"`` and ``"000042"`` at width 6 are ordinary ids: protecting the empty string or
``"42"`` by refusing them was the wrong trade), and decode returns it without its padding.
``order = "desc"`` applies the rule before the inversion. A value cut by ``keep-last`` is lossy by
declaration: its key is its last ``width`` bytes, shared with every value that ends in them and
with the shorter value those bytes pad from (``"1000123"``, ``"2000123"`` and ``"123"`` at width
6), and decode returns those bytes without their padding; it is taken whatever they start with.

A number that is an id (an order number) is best an integer with ``encoding = "text"``: zero-padded
decimal of ``width`` digits, each value its own key; ``truncate = "keep-last"`` keeps the last
``width`` digits of a larger one (``1000042`` is ``000042``), and decode returns that number (42).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from keyshape.core import hbytes, ordered, textcols
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.fieldtypes import ENCODINGS, FIELD_TYPES, FieldType, field_type
from keyshape.schema.fieldtypes.timestamp import parse_timestamp

__all__ = ["FIELD_TYPES", "ENCODINGS", "FieldSpec", "parse_timestamp"]

_INVERT = bytes(range(255, -1, -1))


@dataclass(frozen=True)
class FieldSpec:
    """One field of a row key; see the module docstring for the byte layouts.

    Build it through :class:`keyshape.schema.KeySchema`, which validates the combination; the
    constructor itself does not check.
    """

    name: str
    type: str
    encoding: str
    order: str = "asc"
    width: int | None = None
    pad: str = "left"
    pad_char: str = "0"
    truncate: str = "error"

    # ----------------------------------------------------------------------------------- shape

    @property
    def ftype(self) -> FieldType:
        """The field's type (:mod:`keyshape.schema.fieldtypes`): its widths, range, C code and codec."""
        return field_type(self.type)

    @property
    def descending(self) -> bool:
        return self.order == "desc"

    @property
    def is_numeric(self) -> bool:
        return self.ftype.numeric

    @property
    def text_width(self) -> int:
        """Digits of a text-encoded number (``width`` or the type's maximum)."""
        digits = self.ftype.text_digits
        return self.width if self.width is not None else digits if digits is not None else 0

    @property
    def fixed_width(self) -> int | None:
        """The encoded length in bytes when every value has the same length, else None."""
        return self.ftype.fixed_width(self.encoding, self.width)

    @property
    def self_delimiting(self) -> bool:
        """True when a decoder can find the end of the value without a separator."""
        return self.fixed_width is not None or self.encoding == "ordered"

    @property
    def order_preserving(self) -> bool:
        """True when byte order equals value order for every valid value of the field.

        ``hbase`` ints/floats fail for negative numbers (timestamps cannot be negative); variable
        width text fails with ``desc`` (a prefix still sorts first).
        """
        if self.encoding == "hbase" and self.is_numeric and (self.ftype.min is None or self.ftype.min < 0):
            return False
        if self.keeps_last_digits:
            return False  # 1000042 sorts with 42
        if self.ftype.text_like and self.encoding != "ordered" and self.descending:
            return self.width is not None
        return True

    # ------------------------------------------------------------------------------ one value

    def coerce(self, value: Any) -> Any:
        """``value`` as this field's Python type; strings from a command line are parsed.

        int32/int64 -> int, float64 -> float, timestamp -> int ms (ISO-8601 accepted),
        bytes -> bytes (a str is read as ``toStringBinary`` text), string -> str.
        """
        t = self.type
        if value is None:  # str(None) would silently become the text "None"
            raise KeyshapeError(f"field {self.name!r} has no value (None); give a {t}")
        try:
            return self.ftype.coerce(self, value)
        except (TypeError, ValueError, UnicodeDecodeError) as exc:
            if isinstance(exc, KeyshapeError):
                raise
            raise KeyshapeError(f"field {self.name!r} is {t}; cannot use {value!r} ({exc})") from None

    @property
    def keeps_last_digits(self) -> bool:
        """A text-encoded integer that keeps the last ``width`` digits of a wider value
        (``truncate = "keep-last"``: an order number's last 6 digits)."""
        return self.encoding == "text" and self.truncate == "keep-last" and self.ftype.integer

    @property
    def type_max(self) -> int:
        """The largest value of an integer field's type (``order = "desc"`` writes ``type_max - v``); 0 for others."""
        return self.ftype.max or 0

    def int_domain(self) -> tuple[int, int]:
        """The smallest and largest integer this (int32/int64/timestamp) field can encode."""
        ft = self.ftype
        assert ft.min is not None and ft.max is not None, f"{self.type} is not an integer type"
        lo, hi = ft.min, ft.max
        if self.encoding != "ordered" and self.descending or self.encoding == "text":
            lo = 0
        if self.encoding == "text" and not self.descending and not self.keeps_last_digits:
            hi = min(hi, 10**self.text_width - 1)
        return lo, hi

    def _check_range(self, v: int) -> None:
        lo, hi = self.int_domain()
        if not lo <= v <= hi:
            how = f"{self.encoding} encoding" + (" with order='desc'" if self.descending else "")
            if v > (self.ftype.max or 0) or v < (self.ftype.min or 0):
                fix = self.ftype.range_fix or f"no {self.type} can hold it: give a value in range, or type = 'string'"
            elif v < lo:
                fix = "use encoding = 'ordered', the encoding that sorts negative values"
            else:
                fix = f"raise width (text digits: {self.text_width}) or use encoding = 'hbase' or 'ordered'"
            raise KeyshapeError(f"field {self.name!r}: {v} is outside [{lo}, {hi}] allowed by {how}; {fix}")

    def _fit(self, raw: bytes) -> bytes:
        w = self.width
        if w is None:
            return raw
        if len(raw) > w:
            if self.truncate != "keep-last":
                raise KeyshapeError(
                    f"field {self.name!r}: value {hbytes.to_string_binary(raw)} is {len(raw)} bytes, "
                    f"wider than width {w}; shorten it, raise width, or set truncate='keep-last'"
                )
            raw = raw[len(raw) - w :]
            if self.ftype.utf8_text:  # do not start inside a UTF-8 sequence
                while raw and 0x80 <= raw[0] < 0xC0:
                    raw = raw[1:]
        if self.pad == "none" and len(raw) != w:
            raise KeyshapeError(
                f"field {self.name!r}: value {hbytes.to_string_binary(raw)} is {len(raw)} bytes, not "
                f"the field's width {w}; give exactly {w} bytes or set pad = 'left'"
            )
        fill = self.pad_byte * (w - len(raw))
        return fill + raw if self.pad == "left" else raw + fill

    @property
    def pad_byte(self) -> bytes:
        """The one byte (a UTF-8 character for strings) padding fills a short value with."""
        return self.pad_char.encode(self.ftype.pad_encoding)

    def _pad_refusal(self, raw: bytes, twin: bytes) -> KeyshapeError:
        """The error for ``raw`` and ``twin``, two values of one run stored whole that pad to one
        key (``raw`` holds the pad byte at its padded end; decode strips it and returns the shorter)."""
        pb, w = self.pad_byte, self.width
        left = self.pad == "left"
        if self.ftype.utf8_text:
            show, pad = (lambda b: repr(b.decode("utf-8", "replace"))), f"pad character {self.pad_char!r}"
        else:
            show, pad = hbytes.to_string_binary, f"pad byte {hbytes.to_string_binary(pb)}"
        end = "start" if left else "end"
        return KeyshapeError(
            f"field {self.name!r}: values {show(raw)} and {show(twin) if twin else 'the empty value'} of one run "
            f"share one key ({self.pad} padding to width {w} is stripped on decode, so {show(raw)} {end}ing with the "
            f"{pad} cannot be told apart); give values that do not {end} with it, a pad_char they never {end} with, "
            f"or pad = 'none' (every value exactly {w} bytes)"
        )

    def _raw(self, value: Any) -> bytes:
        """A string/bytes value's bytes before padding (as :meth:`encode` takes them)."""
        return self.ftype.raw(self.coerce(value))  # type: ignore[attr-defined,no-any-return]

    def refuse_twins(self, values: Sequence[Any] | np.ndarray, keys: KeyArray) -> None:
        """The pad rule of one run of data (``values`` and their encoded ``keys``): two distinct
        values stored whole (not cut by ``keep-last``) that pad to one key are refused, with the
        pair named; a value alone is never refused for holding the pad byte (``"0"`` and
        ``"000042"`` at width 6 encode; decode returns them without their padding: ``""``, ``"42"``).

        Only keys whose padded end holds the pad byte can be shared, so a run without such keys
        costs one vector compare."""
        w = self.width
        if w is None or self.pad == "none" or not self._plain_in_cells() or len(keys) < 2:
            return
        m = keys.matrix
        if m.shape[1] != w:
            return
        pb = self.pad_byte[0] ^ (0xFF if self.descending else 0)
        rows = np.flatnonzero((m[:, 0] if self.pad == "left" else m[:, w - 1]) == pb)
        if len(rows) < 2:
            return
        seen: dict[bytes, bytes] = {}
        for i in rows.tolist():
            raw = self._raw(values[i])
            if len(raw) > w:
                continue  # cut by keep-last: lossy by declaration
            other = seen.setdefault(m[i].tobytes(), raw)
            if len(other) != len(raw):
                raise self._pad_refusal(max(raw, other, key=len), min(raw, other, key=len))

    def encode(self, value: Any) -> bytes:
        """The bytes of ``value`` in this field's encoding and order (see the module docstring)."""
        return self.ftype.encode_value(self, self.coerce(value))

    # -------------------------------------------------------------------- a value in a cell

    def _plain_in_cells(self) -> bool:
        return self.ftype.text_like and self.encoding != "ordered"

    def cell_bytes(self, value: Any) -> bytes:
        """``value`` as a cell holds it (an index field kept in a main-row column): text as its
        UTF-8 bytes and bytes unchanged, as given (no padding, no cut, no inversion: what a
        reader of the row expects); other fields in their key encoding. Checked as a key value
        first, so a value the key would refuse is refused here too."""
        encoded = self.encode(value)
        if not self._plain_in_cells():
            return encoded
        return self._raw(value)

    def cell_value(self, raw: bytes) -> Any:
        """The value of a cell written by :meth:`cell_bytes`, or by the writers before it, which
        stored the key bytes (padded, cut, inverted): a cell that is not a value this field takes
        whole is read as those."""
        if self._plain_in_cells():
            try:
                value = raw.decode("utf-8") if self.ftype.utf8_text else bytes(raw)
                self.encode(value)
                if self.width is None or len(raw) <= self.width or self.truncate == "keep-last":
                    return value
            except (KeyshapeError, UnicodeDecodeError):
                pass
        return self.decode_at(raw, 0, len(raw))[0]

    def decode_at(self, key: bytes, pos: int, end: int | None) -> tuple[Any, int]:
        """Read this field from ``key`` at ``pos``; return ``(value, position after it)``.

        ``end`` bounds a variable-width, non-self-delimiting value (the next separator or the end of
        the key); fixed-width and ordered values find their own end.
        """
        w = self.fixed_width
        if self.encoding == "ordered" and w is None:  # OrderedBytes text and blobs end themselves
            value, rest = ordered.decode(key[pos:])
            return value, len(key) - len(rest)
        stop = pos + w if w is not None else (len(key) if end is None else end)
        if stop > len(key):
            raise KeyshapeError(f"field {self.name!r}: key {hbytes.to_string_binary(key)} ends before the {w}-byte field at offset {pos}")
        return self.ftype.decode_value(self, key[pos:stop]), stop

    # ----------------------------------------------------------------------------- many values

    def encode_column(self, values: Sequence[Any] | np.ndarray) -> KeyArray:
        """Encode many values, the same bytes as :meth:`encode` per value, as a KeyArray; the
        values are one run of data (:meth:`refuse_twins`)."""
        keys = self._encode_column(values)
        self.refuse_twins(values, keys)
        return keys

    def _encode_column(self, values: Sequence[Any] | np.ndarray) -> KeyArray:
        """Encode many values, the same bytes as :meth:`encode` per value, as a KeyArray.

        Built with numpy without per-value Python for numeric columns given as numpy arrays and
        for ASCII text; other values (non-ASCII text, values that need an error message) go
        through :meth:`encode` one by one."""
        enc, desc = self.encoding, self.descending
        if self.ftype.own_codec:
            return KeyArray.from_keys([self.encode(v) for v in values])
        if self.ftype.integer and not _is_object(values):
            a = np.asarray(values)
            if a.dtype.kind in "iu" and a.ndim == 1:
                return KeyArray(self._encode_int_array(a))
        many = self.ftype.ordered_many
        if not self.ftype.integer and many is not None and enc == "ordered" and not _is_object(values):
            a = np.asarray(values)
            if a.dtype.kind in "iuf" and a.ndim == 1:  # (a float's OrderedBytes, from numbers)
                rows = many(a, desc)
                return KeyArray(rows.view(np.uint8).reshape(len(a), self.ftype.widths["ordered"]))
        if self.ftype.utf8_text and enc != "ordered" and isinstance(values, np.ndarray) and values.dtype.kind == "U":
            fast = self._encode_str_array(values)
            if fast is not None:
                return fast
        if self.ftype.text_like and enc != "ordered":
            vals = values.tolist() if isinstance(values, np.ndarray) else values
            matrix = self._encode_text_matrix(vals)
            if matrix is not None:
                return matrix
            listed = self._encode_text_list(vals)
            if listed is not None:
                return KeyArray.from_keys(listed)
        return KeyArray.from_keys([self.encode(v) for v in values])

    def _encode_text_matrix(self, vals: Sequence[Any]) -> KeyArray | None:
        """Strings or bytes, padded / truncated / inverted as a matrix; None when a value needs
        another path (wrong type, non-ASCII text cut to a width, a width error).

        pyarrow turns the Python list into one UTF-8 buffer plus offsets in a single C pass;
        values of one length (the usual case) are then a reshape of that buffer."""
        want = str if self.ftype.utf8_text else bytes
        n = len(vals)
        if n == 0 or len(self.pad_byte) != 1:
            return None
        # pyarrow takes str, numpy str and UTF-8 bytes(-like) values as text, exactly what
        # coerce() makes of them, and refuses the rest; for bytes fields it would also take str
        # (as UTF-8, where coerce() reads toStringBinary escapes), so those are checked first.
        if want is bytes and set(map(type, vals)) != {bytes}:
            return None
        try:
            arr = pa.array(vals, pa.large_string() if want is str else pa.large_binary())
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return None
        if arr.null_count:
            return None
        ka = KeyArray.from_offsets(arr)
        if want is str and self.width is not None and not ka.matrix.max(initial=0) < 0x80:
            return None  # cutting UTF-8 to a width needs the per-value rules
        return self._fit_matrix(ka.matrix, ka.lengths)

    def _encode_str_array(self, values: np.ndarray) -> KeyArray | None:
        """A numpy str array of ASCII text, straight from its code points (no str per value)."""
        n = len(values)
        if n == 0 or values.ndim != 1 or len(self.pad_byte) != 1:
            return None
        values = np.ascontiguousarray(values)
        codes = values.view(np.uint32).reshape(n, values.dtype.itemsize // 4)
        if codes.shape[1] == 0 or (codes >= 0x80).any():
            return None
        # A NUL inside a value is a 0 in the matrix, exactly its UTF-8 byte; numpy str values
        # never end in NUL, so str_len is each value's length.
        lengths = np.strings.str_len(values).astype(np.int64)
        return self._fit_matrix(codes.astype(np.uint8), lengths)

    def _fit_matrix(self, matrix: np.ndarray, lengths: np.ndarray) -> KeyArray | None:
        """Text as a zero-padded matrix plus lengths, padded / truncated / inverted per the field."""
        n = len(lengths)
        pad = self.pad_byte
        w = self.width
        if w is None:
            if self.descending:
                matrix = matrix ^ (np.arange(matrix.shape[1]) < lengths[:, None]).astype(np.uint8) * np.uint8(0xFF)
            return KeyArray(matrix, lengths)
        if lengths.max() > w and self.truncate != "keep-last":
            return None
        if self.pad == "none" and (lengths != w).any():
            return None
        first, last = int(lengths.min()), int(lengths.max())
        if first == last:  # one length (the usual case): move whole columns
            out = np.full((n, w), pad[0], dtype=np.uint8)
            keep = min(first, w)
            if keep:
                src = matrix[:, first - keep : first]
                if self.pad == "left":
                    out[:, w - keep :] = src
                else:
                    out[:, :keep] = src
            if self.descending:
                out ^= np.uint8(0xFF)
            return KeyArray(out)
        # Output column c of a row takes source column c - shift, or the pad byte where that is
        # outside the value. keep-last truncation is the same move with a negative shift.
        cols = np.arange(w)
        if self.pad == "left":
            src = cols[None, :] - (w - lengths)[:, None]
        else:
            src = cols[None, :] + np.maximum(lengths - w, 0)[:, None]
        inside = (src >= 0) & (src < lengths[:, None])
        if matrix.shape[1] == 0:
            out = np.full((n, w), pad[0], dtype=np.uint8)
        else:
            out = np.take_along_axis(matrix, np.clip(src, 0, matrix.shape[1] - 1), axis=1)
            out = np.where(inside, out, np.uint8(pad[0]))
        if self.descending:
            out ^= np.uint8(0xFF)
        return KeyArray(out)

    def _encode_text_list(self, vals: Sequence[Any]) -> list[bytes] | None:
        """Whole-list string/bytes encoding with C-level loops; None when a value needs the
        per-value path (a wrong type, or a value wider than ``width``)."""
        want = str if self.ftype.utf8_text else bytes
        if not all(type(v) is want for v in vals):
            return None
        raw = [v.encode("utf-8") for v in vals] if want is str else list(vals)
        w = self.width
        if w is not None:
            if max(map(len, raw), default=0) > w:
                ascii_only = want is bytes or b"".join(raw).isascii()
                if self.truncate != "keep-last" or not ascii_only:
                    return None
                raw = [r[-w:] for r in raw]
            if self.pad == "none" and min(map(len, raw), default=w) != w:
                return None
            pb = self.pad_byte
            raw = [r.rjust(w, pb) for r in raw] if self.pad == "left" else [r.ljust(w, pb) for r in raw]
        if self.descending:
            raw = [r.translate(_INVERT) for r in raw]
        return raw

    def _encode_int_array(self, a: np.ndarray) -> np.ndarray:
        enc, desc = self.encoding, self.descending
        n = len(a)
        if n == 0:
            return np.zeros((0, self.fixed_width or 0), dtype=np.uint8)
        lo, hi = int(a.min()), int(a.max())
        self._check_range(lo)
        self._check_range(hi)
        if enc == "ordered":
            fn = self.ftype.ordered_many
            assert fn is not None, f"{self.type} has no OrderedBytes column codec"
            return fn(a, desc).view(np.uint8).reshape(n, self.ftype.widths["ordered"])
        a = a.astype(np.int64)
        if desc:
            a = np.int64(self.type_max) - a
        if enc == "hbase":
            dt = self.ftype.hbase_dtype  # type: ignore[attr-defined]
            return a.astype(dt).view(np.uint8).reshape(n, self.ftype.widths["hbase"])
        w = self.text_width
        if self.keeps_last_digits:
            a = a % np.int64(10**w) if w < 19 else a
        if int(a.max()) >= 10**w:
            raise KeyshapeError(f"field {self.name!r}: {int(a.max())} needs more digits than width {w}; raise width")
        return textcols.digit_matrix(a.astype(np.uint64), w)


def _is_object(values: Any) -> bool:
    return isinstance(values, np.ndarray) and values.dtype == object
