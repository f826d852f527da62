"""KeyLayout: the immutable, public description of a row key's bytes that every codec route reads.

A layout is the fields in key order, the separator between them, the prefix strategy, and the
fields whose bytes the prefix hashes; from those it derives, once, what the encoders and decoders
need: which fields are hashed (:attr:`KeyLayout.hash_idx`), whether the hashed bytes are the whole
unprefixed key (:attr:`KeyLayout.hashes_whole_key`), where each field ends
(:attr:`KeyLayout.field_ends`), the pad byte of each field (:attr:`KeyLayout.pad_bytes`) and why
keys cannot be decoded (:attr:`KeyLayout.encode_only`). The compilers
(:mod:`keyshape.schema.compiled`, :mod:`keyshape.schema.compiled_decode`), the batch decoder
(:mod:`keyshape.schema.batchdecode`), the C reader and lint take a layout;
:class:`~keyshape.schema.KeySchema` is a façade over a layout plus the table, splits and workload.

>>> from keyshape.schema.fields import FieldSpec
>>> from keyshape.schema.prefixes import make_prefix
>>> user = FieldSpec("user", "string", "text", width=4)
>>> ts = FieldSpec("ts", "int64", "hbase")
>>> layout = KeyLayout((user, ts), b"_", make_prefix("mod", buckets=16), ("user",))
>>> key = layout.encode_generic({"user": "ab", "ts": 7})
>>> key
b'01_00ab_\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x07'
>>> layout.decode_generic(key)
{'user': 'ab', 'ts': 7}
>>> layout.hash_idx, layout.field_ends, layout.encode_only
((0,), (None, None), None)
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, overload

import numpy as np

from keyshape.core import hbytes
from keyshape.core.hbytes import next_prefix
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.fields import FieldSpec
from keyshape.schema.fieldtypes import FieldPlan
from keyshape.schema.prefixes import Prefix

__all__ = ["Columns", "KeyLayout"]

T = TypeVar("T")

# Columns of records: a list or a numpy array of values per field name.
Columns = Mapping[str, Sequence[Any] | np.ndarray]


@dataclass(frozen=True, eq=False)
class KeyLayout:
    """The bytes of a row key: ``prefix + field1 + separator + field2 + ...`` (see the module docstring).

    - ``fields``: the key's fields in key order (a sequence; kept as a tuple).
    - ``separator``: the bytes between two fields (``b""``: none).
    - ``prefix``: the prefix strategy (:mod:`keyshape.schema.prefixes`; ``none`` for an unprefixed key),
      bound to ``separator`` (:meth:`Prefix.bound`): the layout is the one place the separator is set.
    - ``hash_fields``: the names of the fields whose bytes (joined by the separator) a ``J`` prefix
      hashes; names not in ``fields`` are ignored.
    - ``name``: what compiled functions and messages call the layout (the table's full name).

    Derived once (not constructor arguments): :attr:`hash_idx`, :attr:`hashes_whole_key`,
    :attr:`field_ends`, :attr:`pad_bytes`, :attr:`encode_only`. Immutable: change a part with
    :func:`dataclasses.replace`, which derives them again.
    """

    fields: tuple[FieldSpec, ...]
    separator: bytes
    prefix: Prefix
    hash_fields: tuple[str, ...]
    name: str = "key"
    #: Positions in :attr:`fields` of the hashed fields, in key order.
    hash_idx: tuple[int, ...] = field(init=False)
    #: True when every field is hashed: the hashed bytes are the unprefixed key K itself.
    hashes_whole_key: bool = field(init=False)
    #: Per field, how a decoder finds its end: ``None`` (fixed width or self-delimiting), ``-1``
    #: (at the next separator), ``n >= 0`` (``n`` bytes before the end of the unprefixed key).
    field_ends: tuple[int | None, ...] = field(init=False)
    #: Per field, the byte its padding fills with (``b""`` for a field without a width).
    pad_bytes: tuple[bytes, ...] = field(init=False)
    #: Per field, how every decode route reads it (width, end, pad, C field code, integer bounds).
    plans: tuple[FieldPlan, ...] = field(init=False)
    #: How a key ends, when its last field's type shapes it (:attr:`FieldType.shapes_key_tail`:
    #: Phoenix's trailing NULLs): the encoded parts of a record whose last part is empty -> the
    #: parts the key joins; None: the parts are joined as they are. Every encode route applies it.
    key_tail: Callable[[list[bytes]], list[bytes]] | None = field(init=False)
    #: True when decoded values encode back to the key's bytes (:attr:`FieldType.exact_decode` of
    #: every field); else a prefix computed from the key's bytes is verified against those bytes.
    exact_decode: bool = field(init=False)
    #: Why keys of this layout cannot be decoded, or None when they can.
    encode_only: str | None = field(init=False)
    _by_name: dict[str, FieldSpec] = field(init=False, repr=False)
    # compiled functions and C readers made for this layout (keyshape.schema.compiled); not pickled
    _cache: dict[Any, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        fields = tuple(self.fields)
        hashed = set(self.hash_fields)
        idx = tuple(i for i, f in enumerate(fields) if f.name in hashed)
        ends = _field_ends(fields, self.separator)
        init = {
            "fields": fields,
            "hash_fields": tuple(self.hash_fields),
            "separator": bytes(self.separator),
            # the one place the separator is set: the prefix writes the layout's after itself
            "prefix": self.prefix.bound(bytes(self.separator)),
            "hash_idx": idx,
            "hashes_whole_key": len(idx) == len(fields),
            "field_ends": ends,
            "pad_bytes": tuple(f.pad_byte if f.width is not None else b"" for f in fields),
            "plans": tuple(_plan(f, e) for f, e in zip(fields, ends)),
            "key_tail": _key_tail(fields),
            "exact_decode": all(f.ftype.exact_decode for f in fields),
            "encode_only": _encode_only_reason(fields, self.separator),
            "_by_name": {f.name: f for f in fields},
            "_cache": {},
        }
        for k, v in init.items():
            object.__setattr__(self, k, v)

    def __getstate__(self) -> dict[str, Any]:
        # Compiled functions are not picklable; a loaded layout compiles its own on first use.
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)

    def __repr__(self) -> str:
        return f"KeyLayout({self.name!r}, fields={self.field_names}, prefix={self.prefix.name!r}, separator={self.separator!r})"

    def cached(self, what: str, make: Callable[[], T]) -> T:
        """What ``make()`` returns, made once per layout and kept under ``what`` (the compiled
        encoder and decoder, the C readers): a layout never changes, so neither do they. Not pickled.

        - ``what``: the cache key; ``make``: builds the value on first use.
        """
        got = self._cache.get(what)
        if got is None:
            got = self._cache[what] = make()
        return got  # type: ignore[no-any-return]

    def replace(self, **changes: Any) -> KeyLayout:
        """A copy with ``changes`` (``fields``, ``separator``, ``prefix``, ``hash_fields``, ``name``);
        the prefix is bound to the copy's separator (:meth:`Prefix.bound`), as in every layout.

        - ``changes``: the parts to change, by name."""
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------------------- fields

    @property
    def field_names(self) -> list[str]:
        """The field names in key order."""
        return [f.name for f in self.fields]

    def field(self, name: str) -> FieldSpec:
        """The field called ``name``; KeyshapeError naming the fields when there is none."""
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyshapeError(f"no field {name!r} in the key; fields: {', '.join(self.field_names)}") from None

    @property
    def ambiguous_fields(self) -> list[FieldSpec]:
        """The fields a decoder ends at the first separator after them: a separator inside one of
        their values makes its key decode wrongly or not at all."""
        return [f for f, e in zip(self.fields, self.field_ends) if e == -1]

    def refuse_encode_only(self, what: str) -> None:
        """Raise KeyshapeError (``what``: the refused operation) when the layout is encode-only."""
        if self.encode_only is not None:
            raise KeyshapeError(
                f"{what}: this schema is encode-only: {self.encode_only}; give the variable-width fields "
                "a width or encoding = 'ordered', or set key.separator, if the keys must be read back"
            )

    # ----------------------------------------------------------------------------- encoding

    def parts(self, record: Mapping[str, Any]) -> list[bytes]:
        """The encoded bytes of every field of ``record`` (a mapping with every key field)."""
        out = []
        for f in self.fields:
            if f.name not in record:
                if f.ftype.null_when_absent:
                    out.append(f.encode(None))
                    continue
                raise KeyshapeError(f"record lacks key field {f.name!r}; give all of: {', '.join(self.field_names)}")
            out.append(f.encode(record[f.name]))
        return out

    def material(self, parts: list[bytes], k: bytes) -> bytes:
        """What the prefix hashes: ``k`` (the unprefixed key) for a K prefix or when every field is
        hashed, else the hashed fields' ``parts`` joined by the separator."""
        if self.prefix.material == "K" or self.hashes_whole_key:
            return k
        return self.separator.join([parts[i] for i in self.hash_idx])

    def encode_generic(self, record: Mapping[str, Any]) -> bytes:
        """The row key of ``record``, walking the field specs: the reference every compiled encoder equals."""
        parts = self.parts(record)
        if self.key_tail is not None and not parts[-1]:  # how the key ends is its last field type's rule (Phoenix trims trailing NULLs)
            parts = self.key_tail(parts)
        k = self.separator.join(parts)
        return self.prefix.apply(self.prefix.prefix_for(self.material(parts, k)), k)

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[False] = False) -> list[bytes]: ...

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[True]) -> KeyArray: ...

    @overload
    def encode_many(self, columns: Columns, as_array: bool) -> list[bytes] | KeyArray: ...

    def encode_many(self, columns: Columns, as_array: bool = False) -> list[bytes] | KeyArray:
        """Row keys of many records, equal to encoding each record.

        - ``columns``: field name -> values (a list or a numpy array), every field, all one length.
        - ``as_array``: return a :class:`KeyArray` (default False: a list of bytes).
        """
        missing = [n for n in self.field_names if n not in columns]
        if missing:
            raise KeyshapeError(f"encode_many lacks columns {missing}; give all of: {', '.join(self.field_names)}")
        lengths = {len(columns[n]) for n in self.field_names}
        if len(lengths) > 1:
            raise KeyshapeError(f"encode_many: columns differ in length {sorted(lengths)}; give equal lengths")
        n = lengths.pop()
        parts = [f.encode_column(columns[f.name]) for f in self.fields]
        sep = KeyArray.constant(self.separator, n) if self.separator else None
        tailed = None
        if self.key_tail is not None:
            # the key's end is its last field type's rule, per record (Phoenix's trailing NULLs)
            tail = self.key_tail
            rows = [list(r) if r[-1] else tail(list(r)) for r in zip(*(c.tolist() for c in parts))]
            if self.prefix.width and not (self.prefix.material == "K" or self.hashes_whole_key):
                return self._prefixed_rows(rows, as_array)  # the hashed parts differ per record
            tailed = KeyArray.from_keys([self.separator.join(r) for r in rows])

        def join(pieces: list[KeyArray]) -> KeyArray:
            if sep is not None:
                pieces = [x for piece in pieces for x in (sep, piece)][1:]
            return KeyArray.concat(pieces)

        ks = join(parts) if tailed is None else tailed
        p = self.prefix
        if p.width:
            if p.material == "K" or self.hashes_whole_key:
                mats = ks
            else:
                mats = join([parts[i] for i in self.hash_idx])
            prefixes = p.prefix_many(mats)
            if p.whole_key:
                ks = prefixes
            elif p.sep_after and sep is not None:
                ks = KeyArray.concat([prefixes, sep, ks])
            else:
                ks = KeyArray.concat([prefixes, ks])
        return ks if as_array else ks.tolist()

    def _prefixed_rows(self, rows: list[list[bytes]], as_array: bool) -> list[bytes] | KeyArray:
        """The keys of records whose parts are ``rows`` (their tail applied), prefixed one by one
        (a J prefix reads the hashed parts of each row)."""
        p = self.prefix
        keys = []
        for parts in rows:
            k = self.separator.join(parts)
            keys.append(p.apply(p.prefix_for(self.material(parts, k)), k))
        return KeyArray.from_keys(keys) if as_array else keys

    # ----------------------------------------------------------------------------- decoding

    def decode_generic(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """The fields of ``key``, walking the field specs: the reference every compiled decoder
        equals (values, and the one-line KeyshapeError for a key that does not fit). ``verify``
        (default True): re-derive the hash prefix from the fields and refuse a key whose prefix differs."""
        key = bytes(key)
        k = self.prefix.strip(key)  # md5-full says first that its fields are gone
        head = len(key) - len(k)
        self.refuse_encode_only(f"cannot decode {hbytes.to_string_binary(key)}")
        out: dict[str, Any] = {}
        pos, sep, last = 0, self.separator, len(self.fields) - 1
        for i, (f, plan) in enumerate(zip(self.fields, self.field_ends)):
            end = None
            if plan == -1:
                end = k.find(sep, pos)
                if end < 0:
                    raise KeyshapeError(f"key {hbytes.to_string_binary(key)}: no separator after field {f.name!r}")
            elif plan is not None:
                end = len(k) - plan
                if end < pos:
                    raise KeyshapeError(
                        f"key {hbytes.to_string_binary(key)} is too short for field {f.name!r} and the "
                        f"{plan} bytes of fixed-width fields after it; was it written with this schema?"
                    )
            # read in the whole key's coordinates, so an error names the key and offset as given
            out[f.name], stop = f.decode_at(key, head + pos, None if end is None else head + end)
            pos = stop - head
            if i < last and sep:
                if k[pos : pos + len(sep)] != sep:
                    raise KeyshapeError(f"key {hbytes.to_string_binary(key)}: expected separator after field {f.name!r} at offset {pos}")
                pos += len(sep)
        if pos != len(k):
            raise KeyshapeError(f"key {hbytes.to_string_binary(key)} has {len(k) - pos} unexpected trailing bytes; was it written with this schema?")
        if verify and self.prefix.width and self.prefix.material and self._rewritten(out, k) != key:
            raise KeyshapeError(
                f"key {hbytes.to_string_binary(key)}: its {self.prefix.name} prefix does not match its fields; "
                "was it written with this schema (separator, hash_fields, buckets)?"
            )
        return out

    def _rewritten(self, values: dict[str, Any], k: bytes) -> bytes:
        """The key ``values`` encode to, for the check of its prefix; for a layout whose values
        may not encode back (:attr:`exact_decode` False) and a prefix of the key's bytes, the
        prefix of ``k`` (the key's own unprefixed bytes) instead."""
        p = self.prefix
        if not self.exact_decode and (p.material == "K" or self.hashes_whole_key):
            return p.apply(p.prefix_for(k), k)
        return self.encode_generic(values)

    # -------------------------------------------------------------------------- scan ranges

    def scan_ranges(self, **leading: Any) -> list[tuple[bytes, bytes]]:
        """``[start, stop)`` ranges (start inclusive, stop exclusive; ``stop == b""``: to the end
        of the table) covering exactly the keys whose leading fields have the given values; see
        :meth:`keyshape.schema.KeySchema.scan_ranges`.

        - ``leading``: field name -> value for the first fields of the key (any keyword order);
          the last may be a range ``(lo, hi)``, ``lo <= value < hi``, either end ``None``: open.
        """
        names = self.field_names
        given = [n for n in names if n in leading]
        unknown = [n for n in leading if n not in names]
        if unknown:
            raise KeyshapeError(f"scan_ranges: no field {unknown[0]!r}; fields: {', '.join(names)}")
        if given != names[: len(given)]:
            raise KeyshapeError(
                f"scan_ranges: the given fields must lead the key; with fields ({', '.join(names)}) "
                f"give {', '.join(names[: len(given)])} before later ones"
            )
        eq, rng_field = given, None
        rng: Sequence[Any] = ()
        if given and isinstance(leading[given[-1]], (tuple, list)):
            rng_field, eq = self.field(given[-1]), given[:-1]
            rng = leading[given[-1]]
            if len(rng) != 2:
                raise KeyshapeError(f"scan_ranges: {given[-1]} range must be (lo, hi), got {rng!r}")
        if self.encode_only is not None and len(eq) < len(names) and any(not self.field(n).self_delimiting for n in given):
            # Without a separator "user" also matches "user1"'s rows and decode cannot drop them.
            self.refuse_encode_only("scan_ranges")
        parts = [self.field(n).encode(leading[n]) for n in eq]
        sep = self.separator
        body = sep.join(parts)
        complete = len(eq) == len(names)
        # The range inside one bucket, as (start, stop, stop_is_next_prefix_of).
        if complete:
            start, stop, is_next = body, body + b"\x00", False
        else:
            base = body + sep if eq else b""
            start, stop, is_next = base, base, True
            if rng_field is not None:
                planned = _field_range(rng_field, base, rng)
                if planned is None:
                    return []
                start, stop, is_next = planned
        p = self.prefix
        if p.whole_key:
            if not complete:
                raise KeyshapeError(
                    f"{p.name} keys cannot be range-scanned: the key is a hash of all fields; "
                    "give every field for a point read, or use strategy 'md5'"
                )
            return [(p.prefix_for(body), p.prefix_for(body) + b"\x00")]
        heads = [b""]
        if p.salted:
            pinned = None
            if p.material == "J" and all(i < len(eq) for i in self.hash_idx):
                pinned = p.prefix_for(sep.join(parts[i] for i in self.hash_idx))
            elif p.material == "K" and complete:
                pinned = p.prefix_for(body)
            heads = [p.apply(b, b"") for b in ([pinned] if pinned is not None else p.buckets() or [])]
        out = []
        for h in heads:
            s = h + start
            e = next_prefix(h + stop) if is_next else h + stop
            out.append((s, e))
        return sorted(out)


def _field_range(f: FieldSpec, base: bytes, rng: Sequence[Any]) -> tuple[bytes, bytes, bool] | None:
    hbase_number = f.encoding == "hbase" and f.type in ("int32", "int64", "float64")
    if not f.self_delimiting or not (f.order_preserving or hbase_number):
        raise KeyshapeError(
            f"scan_ranges: field {f.name!r} ({f.type}, {f.encoding}) cannot be range-scanned: "
            "its bytes do not sort like its values; give it a width or encoding = 'ordered'"
        )
    lo, hi = (None if v is None else f.coerce(v) for v in rng)
    if f.type in ("int32", "int64", "timestamp"):
        # Clamp to what the field can hold; an empty interval scans nothing.
        dmin, dmax = f.int_domain()
        if (lo is not None and lo > dmax) or (hi is not None and hi <= dmin) or (lo is not None and hi is not None and lo >= hi):
            return None
        lo = None if lo is not None and lo <= dmin else lo
        hi = None if hi is not None and hi > dmax else hi
    if hbase_number:  # order-preserving only from 0 up
        if f.type == "float64" or (lo is None or lo < 0):
            raise KeyshapeError(
                f"scan_ranges: {f.name!r} uses hbase encoding, which sorts negative numbers after "
                "positive ones; give a non-negative lo, or use encoding = 'ordered'"
            )
    lo_b = None if lo is None else base + f.encode(lo)
    hi_b = None if hi is None else base + f.encode(hi)
    if not f.descending:
        start = lo_b if lo_b is not None else base
        if hi_b is None:
            return start, base, True
        return start, hi_b, False
    # Descending: larger values sort first; encodings are prefix-free, so the keys of one
    # value are exactly those under base + enc(value).
    start = next_prefix(hi_b) if hi_b is not None else base
    return start, (lo_b if lo_b is not None else base), True


def _plan(f: FieldSpec, end: int | None) -> FieldPlan:
    """The decode plan of field ``f`` whose end is found as ``end`` says (see :attr:`KeyLayout.field_ends`)."""
    ft = f.ftype
    strips = ft.text_like and f.encoding != "ordered" and f.width is not None and f.pad != "none"
    lo, hi = f.int_domain() if ft.integer else (0, 0)
    return FieldPlan(
        width=f.fixed_width,
        end=end,
        pad=f.pad_byte if strips else b"",
        pad_left=f.pad == "left",
        native=None if ft.own_codec else ft.native_codes.get(f.encoding),
        max=ft.max or 0,
        lo=lo,
        hi=hi,
    )


def _key_tail(fields: Sequence[FieldSpec]) -> Callable[[list[bytes]], list[bytes]] | None:
    """The last field type's rule for how a key ends (see :attr:`KeyLayout.key_tail`), or None."""
    if not fields or not fields[-1].ftype.shapes_key_tail:
        return None
    return functools.partial(fields[-1].ftype.key_tail, fields)


def _field_ends(fields: Sequence[FieldSpec], separator: bytes) -> tuple[int | None, ...]:
    """How a decoder finds where each field ends, per field.

    ``None``: the field finds its own end (fixed width, or an ordered encoding). ``-1``: at the
    next separator. ``n >= 0``: ``n`` bytes before the end of K. The last variable-width,
    non-self-delimiting field gets ``n`` when every field after it has a fixed width (the
    fields after it fill exactly ``n`` bytes with their separators), so its value may contain
    the separator; every other such field ends at the first separator after it.
    """
    ends: list[int | None] = [None if f.self_delimiting else -1 for f in fields]
    tail = 0
    for i in range(len(fields) - 1, -1, -1):
        f = fields[i]
        if not f.self_delimiting:
            ends[i] = tail
            break
        if f.fixed_width is None:
            break  # an ordered variable-width field cannot be measured from the right
        tail += f.fixed_width + len(separator)
    return tuple(ends)


def _encode_only_reason(fields: Sequence[FieldSpec], separator: bytes) -> str | None:
    if separator:
        return None
    runs = [f.name for f in fields[:-1] if not f.self_delimiting]
    if not runs:
        return None
    return f"field {runs[0]!r} has variable width and no separator follows it, so where it ends cannot be found"
