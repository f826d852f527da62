"""KeySchema: one declarative description of a row key, loaded from TOML or a dict.

From it keyshape encodes and decodes keys (:meth:`KeySchema.encode`, :meth:`KeySchema.decode`,
:meth:`KeySchema.encode_many`), plans scans for a partial key (:meth:`KeySchema.scan_ranges`, one
range per bucket when the key is salted), computes split keys (:meth:`KeySchema.split_keys`) and
lints the design (:meth:`KeySchema.lint`). Field encodings are described in :mod:`keyshape.fields`,
prefix strategies and their byte layouts in :mod:`keyshape.prefixes`, workloads in
:mod:`keyshape.workload`. The file format::

    [table]                       name (required), namespace = "default", [[table.families]]
    [key]                         separator = "" , hash_fields = [all fields],
                                  prefix = { strategy = "none", ...options }, [[key.fields]]
    [splits]                      algorithm = "prefix" | hex | decimal | uniform | range |
                                  buckets | sample | explicit, regions = ..., ...
    [workload]                    rows = ..., seed = 0, fields.NAME = { generator = ... }

Without ``[[table.families]]`` the table gets one family ``d`` with HBase's defaults.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, overload

from keyshape import hbytes, splits
from keyshape.errors import KeyshapeError, SchemaError
from keyshape.fields import ENCODINGS, FIELD_TYPES, FieldSpec
from keyshape.keyarray import KeyArray
from keyshape.prefixes import MAX_LISTED_BUCKETS, STRATEGIES, Prefix, make_prefix
from keyshape.schema_parse import Section

__all__ = ["KeySchema", "TableSpec", "FamilySpec", "SplitSpec", "next_prefix"]

SPLIT_ALGORITHMS = ("prefix", "hex", "decimal", "uniform", "range", "buckets", "sample", "explicit")
# Options each prefix strategy accepts (anything else under key.prefix is an error).
_STRATEGY_OPTIONS: dict[str, dict[str, tuple[int, int]]] = {
    "none": {}, "md5-full": {}, "java-hash-short": {}, "crc32": {},
    "md5": {"length": (4, 32)},
    "mod": {"buckets": (2, 10**9)},
    "random": {"buckets": (2, 10**9), "seed": (0, 2**63)},
    "phoenix": {"buckets": (2, 256)},
    "opentsdb": {"buckets": (1, 2**31 - 1), "width": (1, 8)},
}
_STRATEGY_DEFAULTS = {"md5": {"length": 4}, "mod": {"buckets": 16}, "random": {"buckets": 16},
                      "phoenix": {"buckets": 16}, "opentsdb": {"buckets": 20, "width": 1}}


def next_prefix(prefix: bytes) -> bytes:
    """The smallest key greater than every key that starts with ``prefix``; ``b""`` (unbounded)
    when there is none (``prefix`` empty or all 0xFF): increment the last byte below 0xFF and drop
    what follows it."""
    p = prefix.rstrip(b"\xff")
    return p[:-1] + bytes([p[-1] + 1]) if p else b""


@dataclass(frozen=True)
class FamilySpec:
    """A column family and the HBase attributes keyshape creates it with."""

    name: str
    versions: int = 1
    compression: str = "NONE"
    bloom_filter: str = "ROW"
    block_size: int = 65536
    ttl: int | None = None
    in_memory: bool = False
    data_block_encoding: str = "NONE"


@dataclass(frozen=True)
class TableSpec:
    """A table: name, namespace and column families."""

    name: str
    namespace: str = "default"
    families: list[FamilySpec] = field(default_factory=lambda: [FamilySpec("d")])

    @property
    def full_name(self) -> str:
        """``"ns:name"``, or just ``"name"`` in the default namespace (HBase's convention)."""
        return self.name if self.namespace == "default" else f"{self.namespace}:{self.name}"


@dataclass(frozen=True)
class SplitSpec:
    """The ``[splits]`` section: the algorithm and its options, as written."""

    algorithm: str
    regions: int | None = None
    options: dict[str, Any] = field(default_factory=dict)


class KeySchema:
    """A row-key design: table, fields, separator, prefix strategy, splits and workload.

    Build it with :meth:`load` or :meth:`from_dict`; the constructor takes parsed parts.
    """

    def __init__(self, table: TableSpec, fields: Sequence[FieldSpec], separator: bytes,
                 prefix: Prefix, hash_fields: Sequence[str], splits_spec: SplitSpec | None = None,
                 workload: Any = None, source: str = "<dict>") -> None:
        self.table, self.fields, self.separator = table, list(fields), separator
        self.prefix, self.hash_fields = prefix, list(hash_fields)
        self.splits, self.workload, self.source = splits_spec, workload, source
        self._by_name = {f.name: f for f in self.fields}
        self._hash_idx = [i for i, f in enumerate(self.fields) if f.name in set(self.hash_fields)]
        self._j_is_k = len(self._hash_idx) == len(self.fields)
        self.indexes: list = []  # IndexSpec of each [[index]] (keyshape.schema_index)

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
        from keyshape.workload import parse_workload  # workload sits beside schema, not below it

        top = Section(d, "", source)
        table = _parse_table(top.section("table", required=True))
        key = top.section("key", required=True)
        assert key is not None
        sep_text = key.get("separator", str, "")
        separator = sep_text.encode("utf-8")
        fields = [_parse_field(s, i) for i, s in enumerate(key.sections("fields", required=True))]
        if not fields:
            key.fail("fields", "is empty", "add at least one [[key.fields]] with name and type")
        names = [f.name for f in fields]
        for i, n in enumerate(names):
            if n in names[:i]:
                key.fail(f"fields[{i}].name", f"duplicate field name {n!r}", "give every field its own name")
        for i, f in enumerate(fields[:-1]):
            if not f.self_delimiting and not separator:
                key.fail(f"fields[{i}]", f"field {f.name!r} has variable width and is not last, and the key "
                         "has no separator, so its end cannot be found",
                         "set width, set encoding = 'ordered', or set key.separator")
        strategy, options = _parse_prefix(key)
        hash_fields = key.get("hash_fields", list, None)
        if hash_fields is None:
            if strategy == "opentsdb":
                key.fail("hash_fields", "is required for strategy 'opentsdb'",
                         "list the metric field then the tag fields, e.g. hash_fields = ['metric', 'tagk', 'tagv']")
            hash_fields = names
        for h in hash_fields:
            if h not in names:
                key.fail("hash_fields", f"{h!r} is not a key field", "use field names from: " + ", ".join(names))
        if not hash_fields or len(set(hash_fields)) != len(hash_fields):
            key.fail("hash_fields", "must list distinct fields, at least one", "e.g. hash_fields = ['user_id']")
        if strategy == "opentsdb":
            if separator:
                key.fail("separator", "OpenTSDB keys have no separator", "remove key.separator")
            metric = next(f for f in fields if f.name == hash_fields[0])
            if metric.fixed_width is None:
                key.fail("hash_fields", f"the metric field {metric.name!r} must have a fixed width",
                         "give it width (OpenTSDB metric UIDs are 3 bytes: type = 'bytes', width = 3)")
            options["metric_width"] = metric.fixed_width
        key.done()
        prefix = make_prefix(strategy, separator, **options)
        split_section = top.section("splits")
        split_spec = _parse_splits(split_section, prefix) if split_section is not None else None
        wl_section = top.section("workload")
        workload = parse_workload(wl_section, fields) if wl_section is not None else None
        from keyshape.schema_index import parse_indexes  # [[index]] tables (keyshape.read.index)

        indexes = parse_indexes(top, table, fields, separator)
        top.done()
        schema = cls(table, fields, separator, prefix, hash_fields, split_spec, workload, source)
        schema.indexes = indexes
        return schema

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
        """The row key of ``record`` (a mapping with every key field; extra entries are ignored)."""
        parts = self._parts(record)
        k = self.separator.join(parts)
        return self.prefix.apply(self.prefix.prefix_for(self._material(parts, k)), k)

    @overload
    def encode_many(self, columns: Mapping[str, Sequence[Any]],
                    as_array: Literal[False] = False) -> list[bytes]: ...

    @overload
    def encode_many(self, columns: Mapping[str, Sequence[Any]],
                    as_array: Literal[True]) -> KeyArray: ...

    def encode_many(self, columns: Mapping[str, Sequence[Any]],
                    as_array: bool = False) -> list[bytes] | KeyArray:
        """Row keys of many records given as columns (field name -> values, all the same length).

        The result equals ``[encode(r) for r in rows]``. Every field is encoded for the whole
        column at once (numbers given as numpy integer arrays without per-value Python), the keys
        are assembled as one byte matrix and the prefixes computed on it with numpy; only md5 and
        crc32 prefixes and text values call into Python per key. With ``as_array=True`` the keys
        come back as a :class:`~keyshape.keyarray.KeyArray`, which
        :meth:`keyshape.regions.RegionMap.assign` takes without making a ``bytes`` per key.
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
            if p.name == "md5-full":
                ks = prefixes
            elif p.sep_after and sep is not None:
                ks = KeyArray.concat([prefixes, sep, ks])
            else:
                ks = KeyArray.concat([prefixes, ks])
        return ks if as_array else ks.tolist()

    def decode(self, key: bytes) -> dict[str, Any]:
        """The fields of ``key`` (exact inverse of :meth:`encode` up to width padding).

        Raises KeyshapeError for md5-full keys (not recoverable), a key that does not parse, or a
        key whose hash prefix does not match its fields (written with another schema).
        """
        key = bytes(key)
        k = self.prefix.strip(key)
        out: dict[str, Any] = {}
        pos, sep, last = 0, self.separator, len(self.fields) - 1
        for i, f in enumerate(self.fields):
            end = None
            if not f.self_delimiting:
                end = len(k) if i == last else k.find(sep, pos)
                if end < 0:
                    raise KeyshapeError(f"key {hbytes.to_string_binary(key)}: no separator after field {f.name!r}")
            out[f.name], pos = f.decode_at(k, pos, end)
            if i < last and sep:
                if k[pos : pos + len(sep)] != sep:
                    raise KeyshapeError(
                        f"key {hbytes.to_string_binary(key)}: expected separator after field {f.name!r} at offset {pos}")
                pos += len(sep)
        if pos != len(k):
            raise KeyshapeError(
                f"key {hbytes.to_string_binary(key)} has {len(k) - pos} unexpected trailing bytes; "
                "was it written with this schema?")
        if self.prefix.width and self.prefix.material and self.encode(out) != key:
            raise KeyshapeError(
                f"key {hbytes.to_string_binary(key)}: its {self.prefix.name} prefix does not match its fields; "
                "was it written with this schema (separator, hash_fields, buckets)?")
        return out

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
        """
        names = self.field_names
        given = [n for n in names if n in leading]
        unknown = [n for n in leading if n not in names]
        if unknown:
            raise KeyshapeError(f"scan_ranges: no field {unknown[0]!r}; fields: {', '.join(names)}")
        if given != names[: len(given)]:
            raise KeyshapeError(
                f"scan_ranges: the given fields must lead the key; with fields ({', '.join(names)}) "
                f"give {', '.join(names[: len(given)])} before later ones")
        eq, rng_field, rng = given, None, None
        if given and isinstance(leading[given[-1]], (tuple, list)):
            rng_field, eq = self.field(given[-1]), given[:-1]
            rng = leading[given[-1]]
            if len(rng) != 2:
                raise KeyshapeError(f"scan_ranges: {given[-1]} range must be (lo, hi), got {rng!r}")
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
        if p.name == "md5-full":
            if not complete:
                raise KeyshapeError("md5-full keys cannot be range-scanned: the key is a hash of all fields; "
                                    "give every field for a point read, or use strategy 'md5'")
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
                "its bytes do not sort like its values; give it a width or encoding = 'ordered'")
        lo, hi = (None if v is None else f.coerce(v) for v in rng)
        if f.type in ("int32", "int64", "timestamp"):
            # Clamp to what the field can hold; an empty interval scans nothing.
            dmin, dmax = f.int_domain()
            if (lo is not None and lo > dmax) or (hi is not None and hi <= dmin) or (
                    lo is not None and hi is not None and lo >= hi):
                return None
            lo = None if lo is not None and lo <= dmin else lo
            hi = None if hi is not None and hi > dmax else hi
        if hbase_number:  # order-preserving only from 0 up
            if f.type == "float64" or (lo is None or lo < 0):
                raise KeyshapeError(
                    f"scan_ranges: {f.name!r} uses hbase encoding, which sorts negative numbers after "
                    "positive ones; give a non-negative lo, or use encoding = 'ordered'")
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
            assert n is not None
            r = s.regions if s.regions is not None else n
            if r >= n:
                return [self.prefix.bucket(i) for i in range(1, n)]
            return [self.prefix.bucket(i * n // r) for i in range(1, r)]
        if s.algorithm == "hex":
            return splits.hex_string_split(s.regions, o.get("first", "00000000"), o.get("last", "FFFFFFFF"))
        if s.algorithm == "decimal":
            return splits.decimal_string_split(s.regions, o.get("first", "00000000"), o.get("last", "99999999"))
        if s.algorithm == "uniform":
            return splits.uniform_split(s.regions, _bin(o.get("first", "")), _bin(o.get("last", "\\xFF" * 8)))
        if s.algorithm == "range":
            return splits.range_split(_bin(o["start"]), _bin(o["end"]), s.regions)
        if s.algorithm == "buckets":
            return splits.bucket_splits(o["buckets"], o.get("encoding", "byte"), o.get("width"))
        if s.algorithm == "explicit":
            return sorted({_bin(k) for k in o["keys"]} - {b""})
        from keyshape.workload import generate  # sample: quantiles of the schema's own workload

        if self.workload is None:
            raise KeyshapeError(f"{self.source}: splits.algorithm = 'sample' needs a [workload] section to sample from")
        rows = o.get("sample_rows", 100_000)
        keys: list[bytes] = []
        for chunk in generate(self, rows=rows, seed=o.get("seed", 0)):
            keys.extend(self.encode_many(chunk))
        return splits.sample_splits(keys, s.regions)

    # ---------------------------------------------------------------------------------- lint

    def lint(self) -> list:
        """Design findings, most severe first (see :mod:`keyshape.lint`)."""
        from keyshape.lint import lint

        return lint(self)

    def __repr__(self) -> str:
        return (f"KeySchema({self.table.full_name!r}, fields={self.field_names}, "
                f"prefix={self.prefix.name!r}, separator={self.separator!r})")


def _bin(text: str) -> bytes:
    return hbytes.to_bytes_binary(text)


# ---------------------------------------------------------------------------------- parsers


def _parse_table(t: Section | None) -> TableSpec:
    assert t is not None
    name = t.get("name", str, required=True)
    if not name or ":" in name:
        t.fail("name", f"{name!r} is not a table name", "use letters, digits, '_', '-', '.'; put the namespace in namespace")
    ns = t.get("namespace", str, "default")
    families = []
    for fs in t.sections("families"):
        families.append(FamilySpec(
            name=fs.get("name", str, required=True),
            versions=fs.get("versions", int, 1, minimum=1),
            compression=fs.get("compression", str, "NONE", choices=("NONE", "GZ", "SNAPPY", "LZ4", "LZO", "ZSTD", "BZIP2")),
            bloom_filter=fs.get("bloom_filter", str, "ROW", choices=("NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH")),
            block_size=fs.get("block_size", int, 65536, minimum=1024),
            ttl=fs.get("ttl", int, None, minimum=1),
            in_memory=fs.get("in_memory", bool, False),
            data_block_encoding=fs.get("data_block_encoding", str, "NONE",
                                       choices=("NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1")),
        ))
        fs.done()
    t.done()
    return TableSpec(name, ns, families or [FamilySpec("d")])


def _parse_field(s: Section, index: int) -> FieldSpec:
    name = s.get("name", str, required=True)
    ftype = s.get("type", str, required=True, choices=FIELD_TYPES)
    allowed = ENCODINGS[ftype]
    encoding = s.get("encoding", str, allowed[0], choices=allowed)
    order = s.get("order", str, "asc", choices=("asc", "desc"))
    width = s.get("width", int, None, minimum=1)
    numeric = ftype in ("int32", "int64", "float64", "timestamp")
    text_like = not numeric and encoding != "ordered"
    pad_choices = ("none", "left", "right") if ftype == "bytes" else ("left", "right")
    pad = s.get("pad", str, pad_choices[0], choices=pad_choices) if text_like else "left"
    pad_char = s.get("pad_char", str, "\x00" if ftype == "bytes" else "0") if text_like else "0"
    truncate = s.get("truncate", str, "error", choices=("error", "keep-last")) if text_like else "error"
    if text_like and len(pad_char) != 1:
        s.fail("pad_char", f"{pad_char!r} must be one character", "e.g. pad_char = '0'")
    if width is not None and not (text_like or encoding == "text"):
        s.fail("width", f"{encoding} {ftype} has a fixed size already", "remove width")
    if encoding == "text" and numeric:
        digits = {"int32": 10, "int64": 19, "timestamp": 19}[ftype]
        if order == "desc" and width is not None and width < digits:
            s.fail("width", f"order = 'desc' writes MAX - value, which needs {digits} digits; width {width} is too small",
                   f"set width >= {digits} or remove it")
    if order == "desc" and ftype == "float64" and encoding == "hbase":
        s.fail("order", "descending hbase float64 is not defined", "use encoding = 'ordered' for a descending float")
    s.done()
    return FieldSpec(name, ftype, encoding, order, width, pad, pad_char, truncate)


def _parse_prefix(key: Section) -> tuple[str, dict[str, int]]:
    raw = key.data.get("prefix", "none")
    if isinstance(raw, str):
        key.get("prefix", str, choices=STRATEGIES)
        strategy, sec = raw, None
    else:
        sec = key.section("prefix")
        assert sec is not None
        strategy = sec.get("strategy", str, required=True, choices=STRATEGIES)
    options = dict(_STRATEGY_DEFAULTS.get(strategy, {}))
    if sec is not None:
        for opt, (lo, hi) in _STRATEGY_OPTIONS[strategy].items():
            if sec.has(opt):
                options[opt] = sec.get(opt, int, minimum=lo, maximum=hi)
        sec.done()
    return strategy, options


def _parse_splits(s: Section, prefix: Prefix) -> SplitSpec:
    algo = s.get("algorithm", str, required=True, choices=SPLIT_ALGORITHMS)
    needs_regions = algo in ("hex", "decimal", "uniform", "range", "sample")
    regions = s.get("regions", int, None, required=needs_regions, minimum=3 if algo == "range" else 2)
    opts: dict[str, Any] = {}
    if algo == "prefix":
        n = prefix.bucket_count()
        if n is None:
            s.fail("algorithm", "'prefix' needs a prefix strategy, but key.prefix is 'none'",
                   "set key.prefix or choose another algorithm (e.g. sample)")
        if regions is None and n > MAX_LISTED_BUCKETS:
            s.fail("regions", f"is required: the {prefix.name} prefix has {n} possible values", "e.g. regions = 16")
    for opt in ("first", "last") if algo in ("hex", "decimal", "uniform") else ():
        if s.has(opt):
            opts[opt] = s.get(opt, str)
    if algo == "range":
        opts["start"] = s.get("start", str, required=True)
        opts["end"] = s.get("end", str, required=True)
    if algo == "buckets":
        opts["buckets"] = s.get("buckets", int, required=True, minimum=2)
        opts["encoding"] = s.get("encoding", str, "byte", choices=("byte", "decimal", "long"))
        opts["width"] = s.get("width", int, None, minimum=1)
    if algo == "explicit":
        opts["keys"] = s.get("keys", list, required=True)
        if not all(isinstance(k, str) for k in opts["keys"]):
            s.fail("keys", "must be strings in toStringBinary form", 'e.g. keys = ["a", "m", "\\\\x80"]')
    if algo == "sample":
        opts["sample_rows"] = s.get("sample_rows", int, 100_000, minimum=1)
        opts["seed"] = s.get("seed", int, 0)
    s.done()
    return SplitSpec(algo, regions, opts)
