"""The base of every field type, the registry the package fills, and the per-field decode plan.

A field type (:class:`FieldType`) holds what keyshape knows of one kind of key value, per
encoding: the encodings it takes (default first), the fixed width of each, the value range of an
integer, the digits of its decimal text, the C reader's field code (``core/_native.c``'s ``K_*``),
the Arrow type and numpy dtype of a decoded column, and how a value becomes bytes and back
(:meth:`FieldType.coerce`, :meth:`FieldType.encode_value`, :meth:`FieldType.decode_value`: what
:class:`~keyshape.schema.fields.FieldSpec` asks for every type; the built-in families share
theirs in :mod:`.families`). A type with :attr:`FieldType.own_codec` is also called by the compiled
routes per value; the built-in types' compiled lines, vector and C routes still live in
:mod:`keyshape.schema.compiled`, :mod:`keyshape.schema.compiled_decode` and
:mod:`keyshape.schema.batchdecode`, which read these facts.

:class:`FieldPlan` is what :class:`~keyshape.schema.layout.KeyLayout` derives once per field
(:attr:`KeyLayout.plans`) for every decode route: the field's width, where it ends, the pad byte
decode strips, its C field code, and its integer bounds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import pyarrow as pa

from keyshape.errors import KeyshapeError

__all__ = ["REGISTRY", "FieldPlan", "FieldType", "field_type"]

#: name -> the one instance of each field type (filled as the package's modules are imported)
REGISTRY: dict[str, FieldType] = {}


class FieldType:
    """One field type; subclasses set the class attributes and, with :attr:`own_codec`, the codec.

    A subclass that sets ``name`` registers itself (one instance) in :data:`REGISTRY`.
    """

    name: ClassVar[str] = ""
    #: the encodings this type takes, the default first
    encodings: ClassVar[tuple[str, ...]] = ()
    #: an integer with a value range: ``order = "desc"`` writes ``max - v`` (hbase, text)
    integer: ClassVar[bool] = False
    #: a number (integer or float): never padded or cut to a width
    numeric: ClassVar[bool] = False
    #: string-like bytes in ``text``/``hbase`` encodings: ``width`` pads or cuts, ``desc`` inverts bytes
    text_like: ClassVar[bool] = False
    #: the smallest and largest value of an integer type (None for others)
    min: ClassVar[int | None] = None
    max: ClassVar[int | None] = None
    #: decimal digits of the ``text`` encoding when no ``width`` is given
    text_digits: ClassVar[int | None] = None
    #: the fixed width in bytes per encoding (an encoding not listed: ``width`` or variable)
    widths: ClassVar[Mapping[str, int]] = {}
    #: the C reader's field code per encoding (core/_native.c's K_*): an encoding not listed is read in Python
    native_codes: ClassVar[Mapping[str, int]] = {}
    #: the Arrow type of a decoded column (None: inferred from the values)
    arrow_type: ClassVar[pa.DataType | None] = pa.binary()
    #: the numpy dtype of a decoded column (None: a list of values)
    column_dtype: ClassVar[str | None] = None
    #: how a ``pad_char`` becomes the pad byte (bytes: latin-1, one byte per character)
    pad_encoding: ClassVar[str] = "utf-8"
    #: OrderedBytes of a numpy column of values (numbers), or None
    ordered_many: ClassVar[Callable[..., Any] | None] = None
    #: what an out-of-range value's error advises when no value of the type fits (None: a generic fix)
    range_fix: ClassVar[str | None] = None
    #: the value is text stored as UTF-8 (a cut never starts inside a character); else raw bytes
    utf8_text: ClassVar[bool] = False
    #: the ``struct`` format of the hbase encoding of a number (">i", ">q", ">d"), or None
    hbase_struct: ClassVar[str | None] = None
    #: the salt can be checked on the field's own bytes (they are what its value re-encodes to);
    #: False (float64: NaN payloads): the value is re-encoded, and the C reader leaves such keys
    raw_checkable: ClassVar[bool] = True
    #: pad defaults of a ``width`` (text-like types)
    default_pad: ClassVar[str] = "left"
    default_pad_char: ClassVar[str] = "0"
    #: how the ``uuid`` workload generator feeds this type ("text": canonical UUID strings,
    #: "bytes": 16 bytes; None: it cannot), and whether a field without a generator gets it
    uuid_values: ClassVar[str | None] = None
    uuid_by_default: ClassVar[bool] = False
    #: True: the type's own :meth:`encode_value` / :meth:`decode_value` are its codec on every route
    #: (compiled routes call them; the C reader and the vector batch route leave it to Python)
    own_codec: ClassVar[bool] = False
    #: True: decoded values encode back to the key's bytes (a prefix computed from the key is
    #: verified by re-encoding them); False (Phoenix: a TIMESTAMP read as milliseconds, a DESC
    #: DECIMAL written ASC): a prefix computed from the key's bytes is verified against those bytes
    exact_decode: ClassVar[bool] = True
    #: True: the C reader reads a layout of this type's fields in its Phoenix mode (a separator only
    #: after a variable-width value, ending it): :meth:`native_spec` gives its field tuples
    native_phoenix: ClassVar[bool] = False
    #: True: a record may leave a field of this type out, which is its value None (Phoenix's NULL)
    null_when_absent: ClassVar[bool] = False
    #: True: as the last field's type, :meth:`key_tail` shapes how a key whose last field's bytes
    #: are empty ends (every encode route applies it then: :attr:`KeyLayout.key_tail`); False: the
    #: parts are joined as they are
    shapes_key_tail: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__ and cls.name:
            REGISTRY[cls.name] = cls()

    def __repr__(self) -> str:
        return f"<field type {self.name}>"

    # ------------------------------------------------------------------------- facts per spec

    def fixed_width(self, encoding: str, width: int | None) -> int | None:
        """The encoded length in bytes of every value (``width``: the field's), or None when it varies."""
        if encoding in self.widths:
            return self.widths[encoding]
        if encoding == "text" and self.text_digits is not None:
            return width if width is not None else self.text_digits
        if encoding == "ordered":
            return None
        return width

    # -------------------------------------------------------- the codec of an own-codec type

    def coerce(self, spec: Any, value: Any) -> Any:
        """``value`` as this type's Python value (a string from a command line parsed)."""
        return value

    def encode_value(self, spec: Any, value: Any) -> bytes:
        """The bytes of ``value`` (already coerced) in ``spec``'s encoding and order."""
        raise NotImplementedError

    def decode_value(self, spec: Any, raw: bytes) -> Any:
        """The value of a field's bytes ``raw`` (exactly the field's bytes); KeyshapeError when
        they are not a value of this type."""
        raise NotImplementedError

    def encode_lines(self, spec: Any, i: int, env: dict[str, Any]) -> list[str] | None:
        """The compiled encoder's source lines turning ``v{i}`` (the record's value of field
        ``spec``, bound as ``F{i}`` in ``env``) into ``p{i}`` (its bytes), the names they use put
        in ``env``; None: the line ``p{i} = F{i}.encode(v{i})``. Lines handle the common, exactly
        typed case and leave anything else to ``F{i}.encode``, which gives the same bytes or the error."""
        return None

    def native_spec(self, spec: Any, plan: FieldPlan, check: bool) -> tuple[Any, ...] | None:
        """The C reader's tuple for field ``spec`` read by ``plan`` (``check``: the salt is
        re-checked, so an integer's domain is tested), or None when the C reader does not read it."""
        if plan.native is None:
            return None
        width = plan.width if plan.width is not None else -1
        end = -2 if plan.end is None else plan.end
        return (plan.native, width, end, plan.pad, plan.pad_left, spec.descending, plan.max, plan.lo, plan.hi, check and self.integer)

    def decode_lines(self, spec: Any, i: int, env: dict[str, Any], cut: str, key: str, at: str) -> list[str] | None:
        """The compiled decoder's source lines reading ``o{i}`` (the value of field ``spec``, bound
        as ``F{i}``) from the expression ``cut`` (its bytes; ``key[at:]`` starts with them), names
        put in ``env``; ``raise _Doubt`` (or let a slice or unpack fail) when unsure: the generic
        decoder then decides. None: :meth:`decode_value` called in the lines (its error a doubt)."""
        return None

    def key_tail(self, fields: Sequence[Any], parts: list[bytes]) -> list[bytes]:
        """The encoded ``parts`` of ``fields`` as a key whose last field is of this type ends them
        (every encode route asks the last field's type, when it :attr:`shapes_key_tail` and the
        last part is empty; a key whose last part holds bytes is its parts joined): unchanged, but
        for Phoenix's columns, whose trailing NULLs are not written (:mod:`.phoenix`)."""
        return parts


def field_type(name: str) -> FieldType:
    """The field type called ``name``; KeyshapeError naming the types when there is none."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyshapeError(f"no field type {name!r}; types: {', '.join(REGISTRY)}") from None


@dataclass(frozen=True)
class FieldPlan:
    """How every decode route reads one field of a layout (:attr:`KeyLayout.plans`).

    - ``width``: the field's fixed width in bytes (None: it varies).
    - ``end``: how a decoder finds its end: None (fixed width or self-delimiting), -1 (the next
      separator), n >= 0 (n bytes before the end of the unprefixed key).
    - ``pad``: the byte decode strips from the padded side (b"": nothing is stripped).
    - ``pad_left``: the padding is on the left.
    - ``native``: the C reader's field code (None: the C reader does not read this field).
    - ``max``, ``lo``, ``hi``: an integer's type maximum (``max - v`` when descending) and the
      smallest and largest value the field can encode (0 for other types).
    """

    width: int | None
    end: int | None
    pad: bytes
    pad_left: bool
    native: int | None
    max: int
    lo: int
    hi: int
