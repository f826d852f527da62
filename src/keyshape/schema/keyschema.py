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
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, overload


from keyshape.core.hbytes import to_string_binary
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError, SchemaError
from keyshape.schema.batchdecode import decode_many
from keyshape.schema.compiled import encode_rows, encoder_for
from keyshape.schema.compiled_decode import decoder_for
from keyshape.schema.counters import parse_counters
from keyshape.schema.fields import FieldSpec
from keyshape.schema.index import IndexSpec, parse_indexes
from keyshape.schema.layout import Columns, KeyLayout
from keyshape.schema.lint import Finding, lint
from keyshape.schema.loaders import load_entry_points, loader_for, loaders
from keyshape.schema.parse import (
    Section,
    parse_key,
    parse_prefix,
    parse_table,
)
from keyshape.schema.prefixes import STRATEGIES, Prefix, make_prefix
from keyshape.schema.specs import FamilySpec, SplitSpec, TableSpec
from keyshape.schema.splitting import SplitContext, check_splits, parse_splits, split_keys
from keyshape.schema.synthetic import WorkloadSpec, generate, generate_sample, parse_workload

__all__ = ["KeySchema", "TableSpec", "FamilySpec", "SplitSpec", "load_schema"]


class KeySchema:
    """A row-key design: table, fields, separator, prefix strategy, splits and workload.

    A façade over the key's immutable :class:`~keyshape.schema.layout.KeyLayout` (:attr:`layout`,
    what every codec reads) plus the table, ``[splits]``, ``[workload]``, indexes and counters.
    Build it with :meth:`load` or :meth:`from_dict`; the constructor takes parsed parts:

    - ``table``: the table (name, namespace, families).
    - ``fields``: the key's fields in key order; ``separator``: the bytes between two fields.
    - ``prefix``: the prefix strategy; ``hash_fields``: the names of the fields a ``J`` prefix hashes.
    - ``splits_spec``: the ``[splits]`` section (default None: one region).
    - ``workload``: the ``[workload]`` section (default None: default generators per field type).
    - ``source``: where the schema came from, for messages (default ``"<dict>"``).

    >>> schema = KeySchema.from_dict({
    ...     "table": {"name": "events"},
    ...     "key": {
    ...         "separator": "|",
    ...         "prefix": {"strategy": "mod", "buckets": 4},
    ...         "hash_fields": ["user"],
    ...         "fields": [{"name": "user", "type": "string"}, {"name": "seq", "type": "int64", "encoding": "text", "width": 4}],
    ...     },
    ...     "splits": {"algorithm": "prefix"},
    ... })
    >>> key = schema.encode({"user": "ann", "seq": 7})
    >>> key
    b'01|ann|0007'
    >>> schema.decode(key)
    {'user': 'ann', 'seq': 7}
    >>> schema.split_keys()
    [b'01', b'02', b'03']
    >>> schema.layout.hash_idx, schema.layout.separator
    ((0,), b'|')
    """

    def __init__(
        self,
        table: TableSpec,
        fields: Sequence[FieldSpec],
        separator: bytes,
        prefix: Prefix,
        hash_fields: Sequence[str],
        splits_spec: SplitSpec | None = None,
        workload: WorkloadSpec | None = None,
        source: str = "<dict>",
    ) -> None:
        self.table = table
        self.splits, self.workload, self.source = splits_spec, workload, source
        self.indexes: list[IndexSpec[KeySchema]] = []  # each [[index]] (keyshape.schema.index)
        self.counters: list = []  # CounterSpec of each [[counter]] (keyshape.schema.counters)
        self._set_layout(KeyLayout(tuple(fields), separator, prefix, tuple(hash_fields), table.full_name))

    # ------------------------------------------------------------------------------- layout

    def _set_layout(self, layout: KeyLayout) -> None:
        self.layout = layout
        self._fields = list(layout.fields)
        self._install_trampolines()

    @property
    def fields(self) -> list[FieldSpec]:
        """The key's fields in key order (:attr:`KeyLayout.fields`); assigning one rebuilds the layout."""
        return self._fields

    @fields.setter
    def fields(self, value: Sequence[FieldSpec]) -> None:
        self._set_layout(self.layout.replace(fields=tuple(value)))

    @property
    def separator(self) -> bytes:
        """The bytes between two fields (:attr:`KeyLayout.separator`)."""
        return self.layout.separator

    @separator.setter
    def separator(self, value: bytes) -> None:
        self._set_layout(self.layout.replace(separator=value))

    @property
    def prefix(self) -> Prefix:
        """The prefix strategy (:attr:`KeyLayout.prefix`)."""
        return self.layout.prefix

    @prefix.setter
    def prefix(self, value: Prefix) -> None:
        self._set_layout(self.layout.replace(prefix=value))

    @property
    def hash_fields(self) -> list[str]:
        """The names of the fields a ``J`` prefix hashes (:attr:`KeyLayout.hash_fields`)."""
        return list(self.layout.hash_fields)

    @hash_fields.setter
    def hash_fields(self, value: Sequence[str]) -> None:
        self._set_layout(self.layout.replace(hash_fields=tuple(value)))

    # ------------------------------------------------------------------------------- loading

    @classmethod
    def load(cls, path: str | Path) -> KeySchema:
        """Read a schema file of any kind (:func:`load_schema`: keyshape TOML, or a kind a loader is
        registered for, such as a Phoenix DDL file); SchemaError (one line, file + key path + fix) if bad.

        - ``path``: the schema file.
        """
        return load_schema(path)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "<dict>") -> KeySchema:
        """Build a schema from the TOML structure as a dict (see the module docstring).

        - ``d``: the schema document (``[table]``, ``[key]``, ``[splits]``, ``[workload]``, ``[[index]]``, ``[[counter]]``).
        - ``source``: what messages call it (default ``"<dict>"``; :meth:`load` gives the file).

        Raises SchemaError (one line: source, key path, fix) when the document is bad.
        """
        top = Section(d, "", source)
        table = parse_table(top.required_section("table"))
        key = parse_key(top.required_section("key"))
        fields, separator, prefix = key.fields, key.separator, key.prefix
        split_section = top.section("splits")
        split_spec = parse_splits(split_section, prefix) if split_section is not None else None
        wl_section = top.section("workload")
        workload = parse_workload(wl_section, fields) if wl_section is not None else None
        schema = cls(table, fields, separator, prefix, key.hash_fields, split_spec, workload, source)
        indexes = parse_indexes(top, table, schema.layout, cls)
        counters = parse_counters(top, table)
        top.done()
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
        prefix = make_prefix(name, **opts)
        spec = self.splits if isinstance(splits, str) and splits == "keep" else splits
        if isinstance(spec, str):
            raise KeyshapeError(f"with_prefix: splits must be a SplitSpec, None or 'keep', got {spec!r}")
        check_splits(spec, prefix, self.source)  # the splits must suit the new prefix
        out = KeySchema(self.table, self.fields, self.separator, prefix, self.hash_fields, spec, self.workload, self.source)
        out.indexes = list(self.indexes)
        out.counters = list(self.counters)
        return out

    # ------------------------------------------------------------------------------ encoding

    @property
    def field_names(self) -> list[str]:
        """The field names in key order."""
        return self.layout.field_names

    def field(self, name: str) -> FieldSpec:
        """The field called ``name``; KeyshapeError naming the fields when there is none."""
        return self.layout.field(name)

    def encode(self, record: Mapping[str, Any]) -> bytes:
        """The row key of ``record`` (a mapping with every key field; extra entries are ignored).

        Runs a function compiled once for this schema's layout (:mod:`keyshape.schema.compiled`)."""
        return self._encoder()(record)

    def _install_trampolines(self) -> None:
        # encode/decode are called once per row: the instance attributes below shadow the
        # methods, and on first use are replaced by the functions compiled for the layout, so a
        # call is one plain function call (no method dispatch, no "compiled yet?" test).
        self.encode = self._first_encode  # type: ignore[method-assign]
        self.decode = self._first_decode  # type: ignore[method-assign]

    def _first_encode(self, record: Mapping[str, Any]) -> bytes:
        return self._encoder()(record)

    def _first_decode(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        return self._decoder()(key, verify)

    def _encoder(self) -> Any:
        fn = encoder_for(self.layout)
        self.encode = fn  # type: ignore[method-assign,assignment]
        return fn

    def _decoder(self) -> Any:
        # (an encode-only layout compiles to its generic decode, which says why it cannot)
        fn = decoder_for(self.layout)
        self.decode = fn  # type: ignore[method-assign]
        return fn

    def __getstate__(self) -> dict[str, Any]:
        # Compiled functions are not picklable (nor kept by a pickled layout); they are rebuilt
        # on first use after loading.
        state = dict(self.__dict__)
        for name in ("encode", "decode"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._install_trampolines()

    def __copy__(self) -> KeySchema:
        # A copy shares the (immutable) layout and its compiled functions, but not the instance
        # attributes that shadow encode/decode.
        out = type(self).__new__(type(self))
        out.__setstate__(self.__getstate__())
        return out

    def _encode_generic(self, record: Mapping[str, Any]) -> bytes:
        """:meth:`encode` walking the field specs: the reference the compiled encoder equals."""
        return self.layout.encode_generic(record)

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[False] = False) -> list[bytes]: ...

    @overload
    def encode_many(self, columns: Columns, as_array: Literal[True]) -> KeyArray: ...

    @overload
    def encode_many(self, columns: Columns, as_array: bool) -> list[bytes] | KeyArray: ...

    def encode_many(self, columns: Columns, as_array: bool = False) -> list[bytes] | KeyArray:
        """Row keys of many records given as columns, equal to ``[encode(r) for r in rows]``.

        - ``columns``: field name -> values (a list or a numpy array), every field, all one length.
        - ``as_array``: return a :class:`~keyshape.core.keyarray.KeyArray` (default False: a list of
          bytes); :meth:`keyshape.core.regions.RegionMap.assign` takes it without a ``bytes`` per key.

        Every field is encoded for the whole column at once (numbers given as numpy integer arrays
        without per-value Python), the keys are assembled as one byte matrix and the prefixes
        computed on it with numpy; only md5 and crc32 prefixes and text values call into Python per key.
        """
        if self.layout.key_tail is not None:  # a key that ends by its last field's rule: built per record
            return encode_rows(self.layout, columns, as_array)
        return self.layout.encode_many(columns, as_array)

    @property
    def encode_only(self) -> str | None:
        """Why keys of this schema cannot be decoded, or None when they can.

        Variable-width fields concatenated with no separator (``"user" + "142"``, as hand-written
        Java key functions build them) encode byte-exactly, but ``"user1" + "42"`` is the same key:
        :meth:`decode` raises, and :meth:`scan_ranges` refuses leading values that would also
        match longer ones. Everything that only encodes (splits, analyze, load) works.
        """
        return self.layout.encode_only

    @property
    def ambiguous_fields(self) -> list[FieldSpec]:
        """The fields :meth:`decode` ends at the first separator after them: a separator inside
        one of their values makes its key decode wrongly or not at all.

        Empty when at most one field has a variable width without an ordered encoding and every
        field after it has a fixed width (that field is then measured from the end of the key).
        """
        return self.layout.ambiguous_fields

    def decode(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """The fields of ``key`` (exact inverse of :meth:`encode` up to width padding).

        - ``key``: a whole row key (bytes).
        - ``verify``: re-derive the hash prefix from the decoded fields and refuse a key whose
          prefix differs (default True). False skips that check only (the prefix is stripped, as
          HBaseWD, Phoenix and OpenTSDB read their salted keys): for keys read from the table itself.

        Fields are read left to right; fixed-width fields take their width whatever their bytes
        (a binary timestamp may contain the separator), ordered ones find their own end. The last
        variable-width text/bytes field ends where the fixed-width fields after it begin, counted
        from the end of the key, so its value may contain the separator; any earlier one ends at
        the next separator (see :attr:`ambiguous_fields`).

        Raises KeyshapeError for md5-full keys (not recoverable), an :attr:`encode_only` schema,
        a key that does not parse, or a key whose hash prefix does not match its fields (written
        with another schema).
        """
        return self._decoder()(key, verify)

    #: Whether :meth:`decode` gives values that :meth:`encode` turns back into the very same key.
    #: keyshape's own codecs do; a flavour whose decode rounds (Phoenix's TIMESTAMP to milliseconds)
    #: says False, and :meth:`decode_exact` then checks every key.
    exact_decode: bool = True

    def decode_exact(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """:meth:`decode`, refusing a key its values do not encode back to (KeyshapeError).

        What a copy into another design must use: a value decode rounds (a Phoenix TIMESTAMP's
        nanoseconds) would move the row to another key, and two rows that differ only in what was
        rounded would land on ONE key, the later overwriting the earlier. Free where
        :attr:`exact_decode` holds; otherwise one encode per key. ``verify`` as in :meth:`decode`.
        """
        record = self.decode(key, verify)
        if not self.exact_decode and self.encode(record) != bytes(key):
            raise KeyshapeError(
                f"key {to_string_binary(bytes(key))} does not encode back from its decoded values "
                f"(this schema's decode rounds them, e.g. a Phoenix TIMESTAMP's nanoseconds): copied, it would "
                "move to another key or overwrite a neighbour, so it is rejected"
            )
        return record

    def _decode_generic(self, key: bytes, verify: bool = True) -> dict[str, Any]:
        """:meth:`decode` walking the field specs: the reference the compiled decoder equals."""
        return self.layout.decode_generic(key, verify)

    def decode_many(self, keys: Sequence[bytes] | KeyArray, *, as_arrow: bool = False, verify: bool = True) -> Any:
        """The fields of many keys as columns (field name -> values, in key order).

        - ``keys``: row keys, a list of bytes or a :class:`~keyshape.core.keyarray.KeyArray`.
        - ``as_arrow``: return a ``pyarrow.Table`` (int64, float64, string, binary columns), built
          without a Python object per value (default False: numbers as numpy int64/float64 arrays,
          text as numpy str arrays, bytes as lists of bytes).
        - ``verify``: as in :meth:`decode` (default True).

        Equals decoding every key with :meth:`decode` (and raises its error for the first bad
        key); vectorized over the keys for the usual layouts (:mod:`keyshape.schema.batchdecode`).
        """
        return decode_many(self.layout, keys, as_arrow=as_arrow, verify=verify)  # encode-only: raises on the first key

    # ------------------------------------------------------------------------------- buckets

    def buckets(self) -> list[bytes] | None:
        """Every prefix of a salted strategy, sorted; None when the key is not salted."""
        return self.prefix.buckets()

    # --------------------------------------------------------------------------- scan ranges

    def scan_ranges(self, **leading: Any) -> list[tuple[bytes, bytes]]:
        """``[start, stop)`` ranges (start inclusive, stop exclusive; ``stop == b""``: to the end
        of the table) covering exactly the rows whose leading fields have the given values.

        - ``leading``: field name -> value for the first fields of the key (any keyword order).
          The last one may be a range ``(lo, hi)`` meaning ``lo <= value < hi`` (either end
          ``None``: open); descending fields are handled.

        A salted key gives one range per bucket, sorted, unless the hashed fields are all given,
        which pins the one bucket; ``random`` always fans out.

        A given variable-width text/bytes field (no width, not ordered) is matched by its bytes
        plus the separator, so when values may contain the separator the ranges also hold rows
        whose value extends the given one with it (``u="a"`` scans under ``a_``, where ``u="a_b"``
        lives too): ``keyshape.read.scan`` drops those rows by decoding; elsewhere filter by
        :meth:`decode`, or give the field a width or an ordered encoding.
        """
        return self.layout.scan_ranges(**leading)

    # ---------------------------------------------------------------------------- split keys

    def split_keys(self) -> list[bytes]:
        """The split keys from ``[splits]`` (``[]`` without it: one region), sorted; each starts a
        region after the first. The algorithm (:data:`keyshape.schema.splitting.SPLIT_ALGORITHMS`)
        reads the key's layout and, for ``sample``, rows generated from the schema's ``[workload]``.

        ``prefix`` puts region boundaries on bucket boundaries: bucket ``i * N // regions`` for
        ``i = 1..regions-1`` with N buckets (so each region holds N/regions buckets, one more for
        some when N is not a multiple); with ``regions >= N`` every bucket but the first starts a
        region. ``regions`` defaults to N when N <= 65536.
        """
        sample = None
        if self.workload is not None:

            def sample(rows: int, seed: int) -> Iterator[dict[str, Any]]:
                return generate_sample(self, rows, seed=seed)

        return split_keys(self.splits, SplitContext(self.layout, sample, self.source))

    # ---------------------------------------------------------------------------------- lint

    def lint(self) -> list[Finding]:
        """Design findings, most severe first (see :mod:`keyshape.schema.lint`), with rows
        generated from the schema's ``[workload]`` (or its fields' default generators)."""

        def sample(n: int) -> dict[str, Any]:
            return next(generate(self, rows=n, seed=0, chunk_rows=n))

        index_fields = [f for spec in self.indexes for f in spec.fields]
        return lint(self.layout, splits=self.splits, workload=self.workload, index_fields=index_fields, sample=sample)

    def __repr__(self) -> str:
        return f"KeySchema({self.table.full_name!r}, fields={self.field_names}, prefix={self.prefix.name!r}, separator={self.separator!r})"


def load_schema(path: str | Path) -> KeySchema:
    """The key schema a file describes: the one function every schema file is read with.

    - ``path``: a keyshape TOML schema, or a file a registered loader claims
      (:mod:`keyshape.schema.loaders`; :mod:`keyshape.phoenix.schema` registers Phoenix DDL ``.sql``
      files and TOML files with a ``[phoenix]`` section).

    Raises SchemaError (one line naming the file, the key path and the fix) when the file is bad.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "events.toml"
    >>> _ = path.write_text('''
    ... [table]
    ... name = "events"
    ... [key]
    ... separator = "|"
    ... prefix = { strategy = "mod", buckets = 4 }
    ... hash_fields = ["user"]
    ... fields = [{ name = "user", type = "string" }, { name = "seq", type = "int64", encoding = "text", width = 4 }]
    ... ''')
    >>> schema = load_schema(path)
    >>> key = schema.encode({"user": "ann", "seq": 7})
    >>> key
    b'01|ann|0007'
    >>> schema.decode(key)
    {'user': 'ann', 'seq': 7}
    >>> schema.scan_ranges(user="ann")
    [(b'01|ann|', b'01|ann}')]
    """
    p = Path(path)
    loader = loader_for(p)
    if loader is None and load_entry_points():
        loader = loader_for(p)  # a kind an installed package registers, its module not imported yet
    if loader is not None:
        schema = loader.load(p)
        if not isinstance(schema, KeySchema):
            raise SchemaError(f"{p}: the {loader.kind} loader read no key schema from it ({type(schema).__name__})")
        return schema
    from keyshape.core.files import read_text

    if not p.exists():
        raise SchemaError(f"{p}: no such schema file")
    try:
        # One reader for every input file: a binary, UTF-16 or non-UTF-8 file is named (issue 40).
        text = read_text(p, "a key schema (TOML, or a Phoenix .sql)")
    except SchemaError:
        raise
    except KeyshapeError as exc:
        raise SchemaError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        kinds = ", ".join(loaders()) or "none"
        raise SchemaError(
            f"{p}: not valid TOML ({exc}), and no other kind of schema file claims it (kinds: {kinds}; "
            "a Phoenix DDL file ends in .sql and holds a CREATE TABLE)"
        ) from None
    return KeySchema.from_dict(data, source=str(p))
