"""KeySchema: one declarative description of a row key, loaded from TOML or a dict.

From it keyshape encodes and decodes keys (:meth:`KeySchema.encode`, :meth:`KeySchema.decode`,
:meth:`KeySchema.encode_many`), plans scans for a partial key (:meth:`KeySchema.scan_ranges`, one
range per bucket when the key is salted), computes split keys (:meth:`KeySchema.split_keys`) and
lints the design (:meth:`KeySchema.lint`). Field encodings are described in :mod:`keyshape.schema.fields`,
prefix strategies and their byte layouts in :mod:`keyshape.schema.prefixes`, workloads in
:mod:`keyshape.workload`. The file format::

    [table]                       name (required), namespace = "default", [[table.families]]
    [key]                         separator = "" , hash_fields = [all fields],
                                  prefix = { strategy = "none", ...options }, [[key.fields]]
    [splits]                      algorithm = "prefix" | hex | decimal | uniform | range |
                                  buckets | sample | explicit, regions = ..., ...
    [workload]                    rows = ..., seed = 0, fields.NAME = { generator = ... }
    [[index]]                     secondary index tables (keyshape.schema.index)
    [[counter]]                   id counters (keyshape.schema.counters)

Without ``[[table.families]]`` the table gets one family ``d`` with HBase's defaults.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload

import numpy as np

from keyshape.core import hbytes, splits
from keyshape.core.hbytes import next_prefix
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError, SchemaError
from keyshape.schema.fields import FieldSpec
from keyshape.schema.counters import parse_counters
from keyshape.schema.index import parse_indexes
from keyshape.schema.parse import (
    Section,
    parse_key,
    parse_prefix,
    parse_splits,
    parse_table,
)
from keyshape.schema.prefixes import MAX_LISTED_BUCKETS, STRATEGIES, Prefix, make_prefix
from keyshape.schema.specs import FamilySpec, SplitSpec, TableSpec

# Columns of records: a list or a numpy array of values per field name.
Columns = Mapping[str, Sequence[Any] | np.ndarray]

__all__ = ["KeySchema", "TableSpec", "FamilySpec", "SplitSpec"]


class KeySchema:
    """A row-key design: table, fields, separator, prefix strategy, splits and workload.

    Build it with :meth:`load` or :meth:`from_dict`; the constructor takes parsed parts.
    """

    def __init__(
        self,
        table: TableSpec,
        fields: Sequence[FieldSpec],
        separator: bytes,
        prefix: Prefix,
        hash_fields: Sequence[str],
        splits_spec: SplitSpec | None = None,
        workload: Any = None,
        source: str = "<dict>",
    ) -> None:
        self.table, self.fields, self.separator = table, list(fields), separator
        self.prefix, self.hash_fields = prefix, list(hash_fields)
        self.splits, self.workload, self.source = splits_spec, workload, source
        self._by_name = {f.name: f for f in self.fields}
        self._hash_idx = [i for i, f in enumerate(self.fields) if f.name in set(self.hash_fields)]
        self._j_is_k = len(self._hash_idx) == len(self.fields)
        self._ends = self._plan_field_ends()
        self._encode_only = self._encode_only_reason()
        self.indexes: list = []  # IndexSpec of each [[index]] (keyshape.schema.index)
        self.counters: list = []  # CounterSpec of each [[counter]] (keyshape.schema.counters)
        self._install_trampolines()

    # ------------------------------------------------------------------------------- loading

    @classmethod
    def load(cls, path: str | Path) -> KeySchema:
        """Read a schema from a TOML file; SchemaError (one line, file + key path + fix) if bad."""
        p = Path(path)
        try:
            with p.open("rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError:
            raise SchemaError(f"{p}: no such schema file") from None
        except tomllib.TOMLDecodeError as exc:
            raise SchemaError(f"{p}: not valid TOML ({exc})") from None
        return cls.from_dict(data, source=str(p))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<dict>") -> KeySchema:
        """Build a schema from the TOML structure as a dict (see the module docstring)."""
        from keyshape.workload import (
            parse_workload,  # workload sits beside schema, not below it
        )

        top = Section(d, "", source)
        table = parse_table(top.required_section("table"))
        key = parse_key(top.required_section("key"))
        fields, separator, prefix = key.fields, key.separator, key.prefix
        split_section = top.section("splits")
        split_spec = parse_splits(split_section, prefix) if split_section is not None else None
        wl_section = top.section("workload")
        workload = parse_workload(wl_section, fields) if wl_section is not None else None
        indexes = parse_indexes(top, table, fields, separator, cls)
        counters = parse_counters(top, table)
        top.done()
        schema = cls(table, fields, separator, prefix, key.hash_fields, split_spec, workload, source)
        if indexes and schema.encode_only is not None:
            # Index rows are built and repaired from decoded main keys.
            raise SchemaError(
                f"{source}: index: needs main-table keys that decode, but "
                f"{schema.encode_only}; give that field a width or encoding = 'ordered', "
                "or set key.separator"
            )
        schema.indexes = indexes
        schema.counters = counters
        return schema

    def with_prefix(self, strategy: str, *, splits: SplitSpec | None | str = "keep", **options: int) -> KeySchema:
        """A copy of this schema whose key uses prefix ``strategy`` with ``options`` (``buckets``,
        ``length`` for md5, ...; the strategy's defaults for the rest), checked exactly like
        ``key.prefix = { strategy = ..., ... }`` in a schema file. Fields, separator,
        hash_fields, table, workload and indexes are kept.

        ``splits``: the ``[splits]`` of the copy (``"keep"``: this schema's). ``algorithm =
        "prefix"`` splits need a prefix with buckets (and ``regions`` when there are more than
        65536). Raises SchemaError (one line naming the key path and the fix) when bad.
        """
        key = Section({"prefix": {"strategy": strategy, **options}}, "key", self.source)
        name, opts = parse_prefix(key)
        opts.update(STRATEGIES[name].key_options(key, self.fields, self.separator, self.hash_fields))
        prefix = make_prefix(name, self.separator, **opts)
        spec = self.splits if isinstance(splits, str) and splits == "keep" else splits
        if isinstance(spec, str):
            raise KeyshapeError(f"with_prefix: splits must be a SplitSpec, None or 'keep', got {spec!r}")
        if spec is not None and spec.algorithm == "prefix":
            n = prefix.bucket_count()
            if n is None:
                raise SchemaError(
                    f"{self.source}: splits.algorithm: 'prefix' needs a prefix strategy, but key.prefix is {name!r}; give other splits (e.g. sample)"
                )
            if spec.regions is None and n > MAX_LISTED_BUCKETS:
                raise SchemaError(f"{self.source}: splits.regions: is required: the {name} prefix has {n} possible values; e.g. regions = 16")
        out = KeySchema(self.table, self.fields, self.separator, prefix, self.hash_fields, spec, self.workload, self.source)
        out.indexes = list(self.indexes)
        out.counters = list(self.counters)
        return out

    # ------------------------------------------------------------------------------ encoding

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> FieldSpec:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyshapeError(f"no field {name!r} in the key; fields: {', '.join(self.field_names)}") from None

    def _parts(self, record: Mapping[str, Any]) -> list[bytes]:
        out = []
        for f in self.fields:
            if f.name not in record:
                raise KeyshapeError(f"record lacks key field {f.name!r}; give all of: {', '.join(self.field_names)}")
            out.append(f.encode(record[f.name]))
        return out

    def _material(self, parts: list[bytes], k: bytes) -> bytes:
        if self.prefix.material == "K" or self._j_is_k:
            return k
        return self.separator.join([parts[i] for i in self._hash_idx])

    def encode(self, record: Mapping[str, Any]) -> bytes:
        """The row key of ``record`` (a mapping with every key field; extra entries are ignored).

        Runs a function compiled once for this schema (:mod:`keyshape.schema.compiled`)."""
        return self._encoder()(record)

    def _install_trampolines(self) -> None:
        # encode/decode are called once per row: the instance attributes below shadow the
        # methods, and on first use are replaced by the functions compiled for this schema, so a
        # call is one plain function call (no method dispatch, no "compiled yet?" test).
        self._compiled_encode: Any = None
        self._compiled_decode: Any = None
        self.encode = self._first_encode  # type: ignore[method-assign]
        self.decode = self._first_decode  # type: ignore[method-assign]

    def _first_encode(self, record: Mapping[str, Any]) -> bytes:
        return self._encoder()(record)

    def _first_decode(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        return self._decoder()(key, verify)

    def _encoder(self) -> Any:
        if self._compiled_encode is None:
            from keyshape.schema.compiled import compile_encoder

            self._compiled_encode = compile_encoder(self)
            self.encode = self._compiled_encode  # type: ignore[method-assign]
        return self._compiled_encode

    def _decoder(self) -> Any:
        if self._compiled_decode is None:
            from keyshape.schema.compiled import compile_decoder

            # (an encode-only schema compiles to its generic decode, which says why it cannot)
            self._compiled_decode = compile_decoder(self)
            self.decode = self._compiled_decode  # type: ignore[method-assign]
        return self._compiled_decode

    def __getstate__(self) -> dict[str, Any]:
        # Compiled functions are not picklable; they are rebuilt on first use after loading.
        state = dict(self.__dict__)
        for name in ("encode", "decode", "_compiled_encode", "_compiled_decode", "_native_readers"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._install_trampolines()

    def __copy__(self) -> KeySchema:
        # A copy shares fields and prefix but must compile its own functions: their fallbacks
        # are bound to the schema they were compiled for.
        out = KeySchema.__new__(KeySchema)
        out.__setstate__(self.__getstate__())
        return out

    def _encode_generic(self, record: Mapping[str, Any]) -> bytes:
        """:meth:`encode` walking the field specs: the reference the compiled encoder equals."""
        parts = self._parts(record)
        k = self.separator.join(parts)
        return self.prefix.apply(self.prefix.prefix_for(self._material(parts, k)), k)

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[False] = False) -> list[bytes]: ...

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[True]) -> KeyArray: ...

    @overload
    def encode_many(self, columns: Columns, as_array: bool) -> list[bytes] | KeyArray: ...

    def encode_many(self, columns: Columns, as_array: bool = False) -> list[bytes] | KeyArray:
        """Row keys of many records given as columns (field name -> values, all the same length).

        The result equals ``[encode(r) for r in rows]``. Every field is encoded for the whole
        column at once (numbers given as numpy integer arrays without per-value Python), the keys
        are assembled as one byte matrix and the prefixes computed on it with numpy; only md5 and
        crc32 prefixes and text values call into Python per key. With ``as_array=True`` the keys
        come back as a :class:`~keyshape.core.keyarray.KeyArray`, which
        :meth:`keyshape.core.regions.RegionMap.assign` takes without making a ``bytes`` per key.
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

        def join(pieces: list[KeyArray]) -> KeyArray:
            if sep is not None:
                pieces = [x for piece in pieces for x in (sep, piece)][1:]
            return KeyArray.concat(pieces)

        ks = join(parts)
        p = self.prefix
        if p.width:
            if p.material == "K" or self._j_is_k:
                mats = ks
            else:
                mats = join([parts[i] for i in self._hash_idx])
            prefixes = p.prefix_many(mats)
            if p.whole_key:
                ks = prefixes
            elif p.sep_after and sep is not None:
                ks = KeyArray.concat([prefixes, sep, ks])
            else:
                ks = KeyArray.concat([prefixes, ks])
        return ks if as_array else ks.tolist()

    def _plan_field_ends(self) -> list[int | None]:
        """How :meth:`decode` finds where each field ends, per field.

        ``None``: the field finds its own end (fixed width, or an ordered encoding). ``-1``: at the
        next separator. ``n >= 0``: ``n`` bytes before the end of K. The last variable-width,
        non-self-delimiting field gets ``n`` when every field after it has a fixed width (the
        fields after it fill exactly ``n`` bytes with their separators), so its value may contain
        the separator; every other such field ends at the first separator after it.
        """
        ends: list[int | None] = [None if f.self_delimiting else -1 for f in self.fields]
        tail = 0
        for i in range(len(self.fields) - 1, -1, -1):
            f = self.fields[i]
            if not f.self_delimiting:
                ends[i] = tail
                break
            if f.fixed_width is None:
                break  # an ordered variable-width field cannot be measured from the right
            tail += f.fixed_width + len(self.separator)
        return ends

    def _encode_only_reason(self) -> str | None:
        if self.separator:
            return None
        runs = [f.name for f in self.fields[:-1] if not f.self_delimiting]
        if not runs:
            return None
        return f"field {runs[0]!r} has variable width and no separator follows it, so where it ends cannot be found"

    @property
    def encode_only(self) -> str | None:
        """Why keys of this schema cannot be decoded, or None when they can.

        Variable-width fields concatenated with no separator (``"user" + "142"``, as hand-written
        Java key functions build them) encode byte-exactly, but ``"user1" + "42"`` is the same key:
        :meth:`decode` raises, and :meth:`scan_ranges` refuses leading values that would also
        match longer ones. Everything that only encodes (splits, analyze, load) works.
        """
        return self._encode_only

    def _refuse_encode_only(self, what: str) -> None:
        if self._encode_only is not None:
            raise KeyshapeError(
                f"{what}: this schema is encode-only: {self._encode_only}; give the variable-width fields "
                "a width or encoding = 'ordered', or set key.separator, if the keys must be read back"
            )

    @property
    def ambiguous_fields(self) -> list[FieldSpec]:
        """The fields :meth:`decode` ends at the first separator after them: a separator inside
        one of their values makes its key decode wrongly or not at all.

        Empty when at most one field has a variable width without an ordered encoding and every
        field after it has a fixed width (that field is then measured from the end of the key).
        """
        return [f for f, e in zip(self.fields, self._ends) if e == -1]

    def decode(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """The fields of ``key`` (exact inverse of :meth:`encode` up to width padding).

        Fields are read left to right; fixed-width fields take their width whatever their bytes
        (a binary timestamp may contain the separator), ordered ones find their own end. The last
        variable-width text/bytes field ends where the fixed-width fields after it begin, counted
        from the end of the key, so its value may contain the separator; any earlier one ends at
        the next separator (see :attr:`ambiguous_fields`).

        Raises KeyshapeError for md5-full keys (not recoverable), an :attr:`encode_only` schema,
        a key that does not parse, or a key whose hash prefix does not match its fields (written
        with another schema). ``verify=False`` skips that last check only (the prefix is
        stripped, not re-derived from the fields, as HBaseWD, Phoenix and OpenTSDB read their
        salted keys): for keys that come from the table itself, where re-hashing every key
        would cost more than parsing it.
        """
        return self._decoder()(key, verify)

    def _decode_generic(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """:meth:`decode` walking the field specs: the reference the compiled decoder equals."""
        key = bytes(key)
        k = self.prefix.strip(key)  # md5-full says first that its fields are gone
        head = len(key) - len(k)
        self._refuse_encode_only(f"cannot decode {hbytes.to_string_binary(key)}")
        out: dict[str, Any] = {}
        pos, sep, last = 0, self.separator, len(self.fields) - 1
        for i, (f, plan) in enumerate(zip(self.fields, self._ends)):
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
        if verify and self.prefix.width and self.prefix.material and self._encode_generic(out) != key:
            raise KeyshapeError(
                f"key {hbytes.to_string_binary(key)}: its {self.prefix.name} prefix does not match its fields; "
                "was it written with this schema (separator, hash_fields, buckets)?"
            )
        return out

    def decode_many(self, keys: Sequence[bytes] | KeyArray, *, as_arrow: bool = False, verify: bool = True) -> Any:
        """The fields of many keys as columns (field name -> values, in key order): numbers as
        numpy arrays (int64 / float64), text as numpy str arrays, bytes as lists of bytes; with
        ``as_arrow=True`` a ``pyarrow.Table`` (int64, float64, string, binary columns), built
        without a Python object per value.

        Equals decoding every key with :meth:`decode` (and raises its error for the first bad
        key; ``verify`` as there); vectorized over the keys for the usual layouts
        (:mod:`keyshape.schema.batchdecode`).
        """
        from keyshape.schema.batchdecode import decode_many

        return decode_many(self, keys, as_arrow=as_arrow, verify=verify)  # encode-only: raises on the first key

    # ------------------------------------------------------------------------------- buckets

    def buckets(self) -> list[bytes] | None:
        """Every prefix of a salted strategy, sorted; None when the key is not salted."""
        return self.prefix.buckets()

    # --------------------------------------------------------------------------- scan ranges

    def scan_ranges(self, **leading: Any) -> list[tuple[bytes, bytes]]:
        """``[start, stop)`` ranges covering exactly the rows whose leading fields have the given
        values (``stop == b""``: to the end of the table).

        The given fields must be the first fields of the key (any keyword order). The last one
        may be a range ``(lo, hi)`` meaning ``lo <= value < hi`` (either end ``None``: open);
        descending fields are handled. A salted key gives one range per bucket, sorted, unless
        the hashed fields are all given, which pins the one bucket; ``random`` always fans out.

        A given variable-width text/bytes field (no width, not ordered) is matched by its bytes
        plus the separator, so when values may contain the separator the ranges also hold rows
        whose value extends the given one with it (``u="a"`` scans under ``a_``, where ``u="a_b"``
        lives too): ``keyshape.read.scan`` drops those rows by decoding; elsewhere filter by
        :meth:`decode`, or give the field a width or an ordered encoding.
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
        if self._encode_only is not None and len(eq) < len(names) and any(not self.field(n).self_delimiting for n in given):
            # Without a separator "user" also matches "user1"'s rows and decode cannot drop them.
            self._refuse_encode_only("scan_ranges")
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
                planned = self._field_range(rng_field, base, rng)
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
            if p.material == "J" and all(i < len(eq) for i in self._hash_idx):
                pinned = p.prefix_for(sep.join(parts[i] for i in self._hash_idx))
            elif p.material == "K" and complete:
                pinned = p.prefix_for(body)
            heads = [p.apply(b, b"") for b in ([pinned] if pinned is not None else p.buckets() or [])]
        out = []
        for h in heads:
            s = h + start
            e = next_prefix(h + stop) if is_next else h + stop
            out.append((s, e))
        return sorted(out)

    def _field_range(self, f: FieldSpec, base: bytes, rng: Sequence[Any]) -> tuple[bytes, bytes, bool] | None:
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

    # ---------------------------------------------------------------------------- split keys

    def split_keys(self) -> list[bytes]:
        """The split keys from ``[splits]`` (``[]`` without it: one region).

        ``prefix`` puts region boundaries on bucket boundaries: bucket ``i * N // regions`` for
        ``i = 1..regions-1`` with N buckets (so each region holds N/regions buckets, one more for
        some when N is not a multiple); with ``regions >= N`` every bucket but the first starts a
        region. ``regions`` defaults to N when N <= 65536.
        """
        s = self.splits
        if s is None:
            return []
        o = s.options
        if s.algorithm == "prefix":
            n = self.prefix.bucket_count()
            if n is None:
                raise SchemaError(
                    f"{self.source}: splits.algorithm: 'prefix' needs a prefix strategy, but key.prefix is 'none'; give other splits (e.g. sample)"
                )
            r = s.regions if s.regions is not None else n
            if r >= n:
                return [self.prefix.bucket(i) for i in range(1, n)]
            return [self.prefix.bucket(i * n // r) for i in range(1, r)]
        if s.algorithm == "hex":
            return splits.hex_string_split(self._split_regions(s), o.get("first", "00000000"), o.get("last", "FFFFFFFF"))
        if s.algorithm == "decimal":
            return splits.decimal_string_split(self._split_regions(s), o.get("first", "00000000"), o.get("last", "99999999"))
        if s.algorithm == "uniform":
            return splits.uniform_split(self._split_regions(s), _bin(o.get("first", "")), _bin(o.get("last", "\\xFF" * 8)))
        if s.algorithm == "range":
            return splits.range_split(_bin(o["start"]), _bin(o["end"]), self._split_regions(s))
        if s.algorithm == "buckets":
            return splits.bucket_splits(o["buckets"], o.get("encoding", "byte"), o.get("width"))
        if s.algorithm == "explicit":
            return sorted({_bin(k) for k in o["keys"]} - {b""})
        from keyshape.workload import (
            generate_sample,  # sample: quantiles of the schema's own workload
        )

        if self.workload is None:
            raise KeyshapeError(f"{self.source}: splits.algorithm = 'sample' needs a [workload] section to sample from")
        keys: list[bytes] = []
        for chunk in generate_sample(self, o.get("sample_rows", 100_000), seed=o.get("seed", 0)):
            keys.extend(self.encode_many(chunk))
        return splits.sample_splits(keys, self._split_regions(s))

    def _split_regions(self, s: SplitSpec) -> int:
        # parse_splits requires regions for these algorithms; a SplitSpec built in code may lack it.
        if s.regions is None:
            raise SchemaError(f"{self.source}: splits.regions is required for algorithm '{s.algorithm}'; give it, e.g. regions = 16")
        return s.regions

    # ---------------------------------------------------------------------------------- lint

    def lint(self) -> list:
        """Design findings, most severe first (see :mod:`keyshape.schema.lint`)."""
        from keyshape.schema.lint import lint

        return lint(self)

    def __repr__(self) -> str:
        return f"KeySchema({self.table.full_name!r}, fields={self.field_names}, prefix={self.prefix.name!r}, separator={self.separator!r})"


def _bin(text: str) -> bytes:
    return hbytes.to_bytes_binary(text)
