"""The codecs the built-in types share, one class per family (no type of its own: the modules of
``int32``, ``int64``, ``timestamp``, ``string`` and ``bytes`` subclass them with their facts).

- :class:`IntegerType`: a Java integer in ``ordered`` (OrderedBytes FixedInt), ``hbase``
  (big-endian two's complement) or ``text`` (zero-padded decimal) encoding; ``desc`` writes
  ``max - v`` (hbase, text) or OrderedBytes DESCENDING.
- :class:`TextType`: text or raw bytes as they are (``text``/``hbase``: padded or cut to a
  ``width``, every byte inverted for ``desc``) or OrderedBytes (``ordered``, self-delimiting).

The field's options (width, pad, truncate, order) and their checks stay with the field
(:class:`~keyshape.schema.fields.FieldSpec`, given as ``spec``); a type says how a value becomes
bytes and back.
"""

from __future__ import annotations

import operator
import struct
from typing import Any, ClassVar

from keyshape.core import hbytes, ordered
from keyshape.errors import KeyshapeError
from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["IntegerType", "TextType"]

_INVERT = bytes(range(255, -1, -1))


class IntegerType(FieldType):
    """A Java integer (the facts: ``min``, ``max``, ``widths`` ...; the codec below)."""

    integer = numeric = True
    #: ``Bytes.toBytes`` of the hbase encoding, OrderedBytes of the ordered one (one value, a column)
    hbase_bytes: ClassVar[Any] = staticmethod(hbytes.int64)  # (int) -> bytes
    hbase_dtype: ClassVar[str] = ">i8"
    hbase_struct = ">q"
    ordered_bytes: ClassVar[Any] = staticmethod(ordered.encode_int64)  # (value, descending) -> bytes
    ordered_many = staticmethod(ordered.encode_int64_many)

    def encode_lines(self, spec: Any, i: int, env: dict[str, Any]) -> list[str] | None:
        """An int in the field's domain packed, or its zero-padded digits, in one line."""
        f, enc, desc = spec, spec.encoding, spec.descending
        v, p, F = f"v{i}", f"p{i}", f"F{i}"
        slow = [f"    {p} = {F}.encode({v})"]
        lo, hi = f.int_domain()
        if enc == "ordered":
            env[f"E{i}"] = self.ordered_bytes
            return [f"    if {v}.__class__ is int and {lo} <= {v} <= {hi}:", f"        {p} = E{i}({v}, {desc})", "    else:", "    " + slow[0]]
        lines = [f"    if {v}.__class__ is not int:", f"        {v} = {F}.coerce({v})"]
        x = f"({f.type_max} - {v})" if desc else f"({v} % {10**f.text_width})" if f.keeps_last_digits else v
        if enc == "hbase":
            pk = f"_pack_{self.hbase_struct[1]}"
            env[pk] = struct.Struct(self.hbase_struct).pack
            return lines + [f"    if {lo} <= {v} <= {hi}:", f"        {p} = {pk}({x})", "    else:", "    " + slow[0]]
        digits = f.text_width  # desc can need more digits than the width: the slow path raises
        top = f.type_max - lo if desc else min(hi, 10**digits - 1) if f.keeps_last_digits else hi
        bottom = f.type_max - hi if desc else lo
        fits = 0 <= bottom and top < 10**digits  # then '%0{digits}d' is always exactly that wide
        return (
            lines
            + [f"    if {lo} <= {v} <= {hi}:", f"        {p} = b'%0{digits}d' % {x}"]
            + ([] if fits else [f"        if len({p}) != {digits}:", "        " + slow[0]])
            + ["    else:", "    " + slow[0]]
        )

    def decode_lines(self, spec: Any, i: int, env: dict[str, Any], cut: str, key: str, at: str) -> list[str] | None:
        """A big-endian integer unpacked (``max - x`` when desc), or digits read (``isdigit``)."""
        o, desc = f"o{i}", spec.descending
        if spec.encoding == "hbase":
            assert self.hbase_struct is not None
            up = f"_unpack_{self.hbase_struct[1]}"
            env[up] = struct.Struct(self.hbase_struct).unpack_from
            x = f"{up}({key}, {at})[0]"
            return [f"    {o} = {spec.type_max} - {x}" if desc else f"    {o} = {x}"]
        # isdigit: int() would also take signs, spaces and underscores.
        whole = cut == key
        raw = key if whole else "raw"
        lines = [] if whole else [f"    raw = {cut}"]
        lines += [f"    if not {raw}.isdigit():", "        raise _Doubt"]
        return lines + [f"    {o} = {spec.type_max} - int({raw})" if desc else f"    {o} = int({raw})"]

    def coerce(self, spec: Any, value: Any) -> int:
        if isinstance(value, str):
            return int(value.strip())
        return operator.index(value)

    def encode_value(self, spec: Any, value: Any) -> bytes:
        spec._check_range(value)
        if spec.encoding == "ordered":
            return self.ordered_bytes(value, spec.descending)
        if spec.descending:
            value = spec.type_max - value
        if spec.encoding == "hbase":
            return self.hbase_bytes(value)
        if spec.keeps_last_digits:
            value %= 10**spec.text_width
        digits = b"%d" % value
        if len(digits) > spec.text_width:
            raise KeyshapeError(f"field {spec.name!r}: {value} needs {len(digits)} digits, more than width {spec.text_width}; raise width")
        return digits.rjust(spec.text_width, b"0")

    def decode_value(self, spec: Any, raw: bytes) -> int:
        if spec.encoding == "ordered":
            value, _ = ordered.decode(raw)
            return value  # type: ignore[no-any-return]
        if spec.encoding == "hbase":
            v = int.from_bytes(raw, "big", signed=True)
        else:
            if not raw.isdigit():
                raise KeyshapeError(f"field {spec.name!r}: {hbytes.to_string_binary(raw)} is not {len(raw)} decimal digits")
            v = int(raw)
        return spec.type_max - v if spec.descending else v


class TextType(FieldType):
    """Text or bytes (the facts: ``utf8_text``, pads ...; the codec below)."""

    text_like = True
    ordered_bytes: ClassVar[Any] = staticmethod(ordered.encode_blob_var)  # (value, descending) -> bytes

    def encode_lines(self, spec: Any, i: int, env: dict[str, Any]) -> list[str] | None:
        """A str (bytes) value: its OrderedBytes, or its UTF-8 (bytes) padded, cut and inverted."""
        f, enc, desc = spec, spec.encoding, spec.descending
        v, p, F = f"v{i}", f"p{i}", f"F{i}"
        slow = [f"    {p} = {F}.encode({v})"]
        want = "str" if self.utf8_text else "bytes"
        if enc == "ordered":
            env[f"E{i}"] = self.ordered_bytes
            return [f"    if {v}.__class__ is {want}:", f"        {p} = E{i}({v}, {desc})", "    else:", "    " + slow[0]]
        env["_INVERT"] = _INVERT
        raw = f"{v}.encode()" if self.utf8_text else v
        lines = [f"    if {v}.__class__ is {want}:", f"        {p} = {raw}"]
        w = f.width
        if w is not None:
            pad = f.pad_byte
            env[f"PAD{i}"] = pad
            if f.pad == "none":
                lines += [f"        if len({p}) != {w}:", f"            {p} = {F}.encode({v})"]
                if desc:
                    lines += ["        else:", f"            {p} = {p}.translate(_INVERT)"]
            else:
                just = "rjust" if f.pad == "left" else "ljust"
                inv = ".translate(_INVERT)" if desc else ""
                if len(pad) != 1:
                    lines += [f"        {p} = {F}.encode({v})"]
                elif f.truncate == "keep-last":
                    # The generic path also drops UTF-8 continuation bytes at the cut: leave those to it.
                    return lines + [
                        f"        if len({p}) > {w}:",
                        f"            if 0x80 <= {p}[-{w}] < 0xC0:",
                        f"                {p} = {F}.encode({v})",
                        "            else:",
                        f"                {p} = {p}[-{w}:]" + inv,
                        "        else:",
                        f"            {p} = {p}.{just}({w}, PAD{i})" + inv,
                        "    else:",
                        "    " + slow[0],
                    ]
                else:
                    return lines + [
                        f"        if len({p}) > {w}:",
                        f"            {p} = {F}.encode({v})",
                        "        else:",
                        f"            {p} = {p}.{just}({w}, PAD{i})" + inv,
                        "    else:",
                        "    " + slow[0],
                    ]
            return lines + ["    else:", "    " + slow[0]]
        if desc:
            lines += [f"        {p} = {p}.translate(_INVERT)"]
        return lines + ["    else:", "    " + slow[0]]

    def decode_lines(self, spec: Any, i: int, env: dict[str, Any], cut: str, key: str, at: str) -> list[str] | None:
        """The bytes inverted (desc), their padding stripped, text decoded (a doubt if not UTF-8)."""
        o = f"o{i}"
        env["_INVERT"] = _INVERT
        expr = cut + (".translate(_INVERT)" if spec.descending else "")
        if spec.width is not None and spec.pad != "none":
            env[f"PAD{i}"] = spec.pad_byte
            expr += f".{'lstrip' if spec.pad == 'left' else 'rstrip'}(PAD{i})"
        if self.utf8_text:
            return ["    try:", f"        {o} = {expr}.decode()", "    except UnicodeDecodeError:", "        raise _Doubt"]
        return [f"    {o} = {expr}"]

    def raw(self, value: Any) -> bytes:
        """A (coerced) value's bytes before padding: its UTF-8 for text, the bytes themselves."""
        return value.encode("utf-8") if self.utf8_text else bytes(value)

    def encode_value(self, spec: Any, value: Any) -> bytes:
        if spec.encoding == "ordered":
            return self.ordered_bytes(value, spec.descending)
        raw = spec._fit(self.raw(value))
        return raw.translate(_INVERT) if spec.descending else raw

    def decode_value(self, spec: Any, raw: bytes) -> Any:
        """The value of the field's bytes in the ``text``/``hbase`` encoding (``ordered`` text
        finds its own end: :meth:`FieldSpec.decode_at` reads it)."""
        if spec.descending:
            raw = raw.translate(_INVERT)
        if spec.width is not None and spec.pad != "none":
            pb = spec.pad_byte
            raw = raw.lstrip(pb) if spec.pad == "left" else raw.rstrip(pb)
        if not self.utf8_text:
            return raw
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise KeyshapeError(f"field {spec.name!r}: {hbytes.to_string_binary(raw)} is not UTF-8 text") from None
