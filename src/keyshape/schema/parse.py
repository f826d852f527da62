"""Reading a key schema (a TOML file or the same structure as a dict) with precise errors.

Every problem raises :class:`keyshape.errors.SchemaError` with one line that names the source (the
file, or ``<dict>``), the key path (``key.prefix.strategy``) and how to fix it. Unknown keys are
errors too, so a typo never silently falls back to a default.

:class:`Section` is the checked reader; :func:`parse_table`, :func:`parse_key`,
:func:`parse_field` and :func:`parse_prefix` read the schema's sections
(:meth:`keyshape.schema.KeySchema.from_dict` puts them together; ``[splits]`` is read by
:func:`keyshape.schema.splitting.parse_splits`, ``[workload]`` by
:func:`keyshape.schema.synthetic.parse_workload`, ``[[index]]`` by :mod:`keyshape.schema.index`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from keyshape.core import names
from keyshape.errors import SchemaError
from keyshape.schema.fields import ENCODINGS, FIELD_TYPES, FieldSpec
from keyshape.schema.fieldtypes import field_type
from keyshape.schema.prefixes import STRATEGIES, Prefix, make_prefix
from keyshape.schema.prefixes.opentsdb import metric_width as opentsdb_metric_width
from keyshape.schema.specs import SPLIT_POLICIES, TABLE_ATTRIBUTES, FamilySpec, TableSpec

__all__ = [
    "Section",
    "fail",
    "KeyParts",
    "parse_table",
    "parse_key",
    "parse_field",
    "parse_prefix",
    "opentsdb_metric_width",
]

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", float: "a number", list: "a list", dict: "a table"}


def _example(kind: type, value: Any, minimum: int | None = None, maximum: int | None = None) -> str:
    """A TOML value of ``kind`` for a fix hint: ``value`` unquoted when it is a number in quotes;
    within ``minimum``..``maximum`` (a hint of 8 for a size of at least 1 MiB misled; issue 40)."""
    if kind in (int, float) and isinstance(value, str):
        try:
            number = kind(value.strip())
            if (minimum is None or number >= minimum) and (maximum is None or number <= maximum):
                return str(number)
        except ValueError:
            pass
    if kind is int and minimum is not None and minimum > 8:
        return str(minimum)
    return {str: '"..."', int: "8", float: "1.5", bool: "true", list: '["...", "..."]', dict: "{ ... }"}.get(kind, "...")


def fail(source: str, path: str, problem: str, fix: str = "") -> NoReturn:
    """Raise the SchemaError for ``path`` in ``source``."""
    msg = f"{source}: {path}: {problem}"
    raise SchemaError(f"{msg}; {fix}" if fix else msg)


class Section:
    """One table of the schema at a dotted ``path``; hands out checked values and remembers which
    keys were read so :meth:`done` can reject the rest."""

    def __init__(self, data: Any, path: str, source: str) -> None:
        if not isinstance(data, Mapping):
            fail(source, path, f"expected a table, got {data!r}", f"write [{path}] with key = value lines")
        self.data, self.path, self.source = data, path, source
        self._seen: set[str] = set()

    def at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str, fix: str = "") -> NoReturn:
        fail(self.source, self.at(key), problem, fix)

    def has(self, key: str) -> bool:
        return key in self.data

    def get(
        self,
        key: str,
        kind: type | tuple[type, ...],
        default: Any = None,
        *,
        required: bool = False,
        choices: Iterable[Any] | None = None,
        minimum: int | None = None,
        maximum: int | None = None,
    ) -> Any:
        """The value at ``key``, checked for type, choices and range; ``default`` when absent."""
        self._seen.add(key)
        if key not in self.data:
            if required:
                self.fail(key, "is missing", f"add {key} = ... to [{self.path or 'top level'}]")
            return default
        value = self.data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if float in kinds and int not in kinds and isinstance(value, int) and not isinstance(value, bool):
            ok, value = True, float(value)
        if not ok:
            want = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
            self.fail(key, f"must be {want}, got {value!r}", f"write {key} = {_example(kinds[0], value, minimum, maximum)}")
        if choices is not None:
            options = list(choices)
            if value not in options:
                self.fail(key, f"unknown value {value!r}", "use one of: " + ", ".join(str(o) for o in options))
        if minimum is not None and value < minimum or maximum is not None and value > maximum:
            bounds = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
            self.fail(key, f"{value} is out of range", f"use a value in {bounds}")
        return value

    def section(self, key: str, *, required: bool = False) -> Section | None:
        """The sub-table at ``key`` (None when absent and not required)."""
        if key in self.data and not isinstance(self.data[key], Mapping):
            self._seen.add(key)
            self.fail(key, f"must be a table, got {self.data[key]!r}", f"write [{self.at(key)}] or {key} = {{ ... }}")
        value = self.get(key, dict, required=required)
        return None if value is None else Section(value, self.at(key), self.source)

    def required_section(self, key: str) -> Section:
        """The sub-table at ``key``; SchemaError (via :meth:`fail`) when it is absent."""
        sec = self.section(key, required=True)
        if sec is None:  # section(required=True) has already failed; this keeps the type exact
            self.fail(key, "is required", f"add [{self.at(key)}]")
        return sec

    def sections(self, key: str, *, required: bool = False) -> list[Section]:
        """The array of tables at ``key`` (``[[key]]`` in TOML)."""
        if key in self.data and not isinstance(self.data[key], list):
            self._seen.add(key)
            self.fail(key, f"must be an array of tables, got {self.data[key]!r}", f"write each entry as [[{self.at(key)}]]")
        items = self.get(key, list, [], required=required)
        return [Section(v, f"{self.at(key)}[{i}]", self.source) for i, v in enumerate(items)]

    def done(self) -> None:
        """Reject every key that was never read (a typo or an option of another strategy)."""
        extra = [k for k in self.data if k not in self._seen]
        if extra:
            known = ", ".join(sorted(self._seen)) or "(none)"
            self.fail(extra[0], "unknown key", f"known keys here: {known}")


# ------------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class KeyParts:
    """The checked ``[key]`` section."""

    fields: list[FieldSpec]
    separator: bytes
    prefix: Prefix
    hash_fields: list[str]


def parse_table(t: Section) -> TableSpec:
    """``[table]`` and its ``[[table.families]]`` (one family ``d`` with HBase's defaults when none)."""
    name = t.get("name", str, required=True)
    if not name or ":" in name:
        t.fail("name", f"{name!r} is not a table name", "use letters, digits, '_', '-', '.'; put the namespace in namespace")
    ns = t.get("namespace", str, "default")
    # HBase's TableName rules, checked where the schema is read (keyshape.core.names, issue 40).
    if problem := names.qualifier_problem(name):
        t.fail("name", f"{name!r} is not a table name HBase accepts: {problem}")
    if problem := names.namespace_problem(ns) or names.system_namespace_problem(ns):
        t.fail("namespace", f"{ns!r} is not a namespace for a user table: {problem}")
    families = []
    for fs in t.sections("families"):
        families.append(
            FamilySpec(
                name=fs.get("name", str, required=True),
                versions=fs.get("versions", int, 1, minimum=1),
                compression=fs.get("compression", str, "NONE", choices=("NONE", "GZ", "SNAPPY", "LZ4", "LZO", "ZSTD", "BZIP2")),
                bloom_filter=fs.get("bloom_filter", str, "ROW", choices=("NONE", "ROW", "ROWCOL", "ROWPREFIX_FIXED_LENGTH")),
                block_size=fs.get("block_size", int, 65536, minimum=1024),
                ttl=fs.get("ttl", int, None, minimum=1),
                in_memory=fs.get("in_memory", bool, False),
                data_block_encoding=fs.get("data_block_encoding", str, "NONE", choices=("NONE", "PREFIX", "DIFF", "FAST_DIFF", "ROW_INDEX_V1")),
            )
        )
        fs.done()
    attributes: dict[str, str] = {}
    # HBase's own sanity checks refuse a MAX_FILESIZE under 2 MiB and a flush size under 1 MiB.
    max_filesize = t.get("max_filesize", int, None, minimum=2 << 20)
    flush = t.get("memstore_flushsize", int, None, minimum=1 << 20)
    durability = t.get("durability", str, None, choices=("USE_DEFAULT", "SKIP_WAL", "ASYNC_WAL", "SYNC_WAL", "FSYNC_WAL"))
    replication = t.get("region_replication", int, None, minimum=1)
    policy = t.get("split_policy", str, None)
    if policy is not None and policy not in SPLIT_POLICIES and "." not in policy:
        t.fail("split_policy", f"unknown split policy {policy!r}", f"use one of {', '.join(SPLIT_POLICIES)} or a full Java class name")
    for key, value in (
        ("max_filesize", max_filesize),
        ("memstore_flushsize", flush),
        ("durability", durability),
        ("region_replication", replication),
        ("split_policy", SPLIT_POLICIES.get(policy, policy) if policy else None),
    ):
        if value is not None:
            attributes[TABLE_ATTRIBUTES[key]] = str(value)
    t.done()
    return TableSpec(name, ns, families or [FamilySpec("d")], attributes)


def parse_key(key: Section) -> KeyParts:
    """``[key]``: separator, ``[[key.fields]]``, prefix and hash_fields, checked together."""
    separator = key.get("separator", str, "").encode("utf-8")
    fields = [parse_field(s) for s in key.sections("fields", required=True)]
    if not fields:
        key.fail("fields", "is empty", "add at least one [[key.fields]] with name and type")
    names = [f.name for f in fields]
    for i, n in enumerate(names):
        if n in names[:i]:
            key.fail(f"fields[{i}].name", f"duplicate field name {n!r}", "give every field its own name")
    # Variable-width fields concatenated with no separator (as hand-written Java writers do with
    # "user" + "142") are accepted: such a key encodes byte-exactly but cannot be decoded, so
    # KeySchema marks it encode-only (KeySchema.encode_only) and lint reports it.
    strategy, options = parse_prefix(key)
    hash_fields = key.get("hash_fields", list, None)
    # hash_fields feed a prefix only: with no prefix at all (computed from nothing, no buckets) it
    # was ignored in silence before (issue 40)
    if hash_fields is not None and not STRATEGIES[strategy].material and not STRATEGIES[strategy].salted:
        key.fail("hash_fields", "feeds the key's prefix, and this key has none", "add a [key.prefix] (e.g. strategy = 'mod') or remove hash_fields")
    if hash_fields is None:
        if STRATEGIES[strategy].requires_hash_fields:
            key.fail(
                "hash_fields",
                f"is required for strategy {strategy!r}",
                "list the metric field then the tag fields, e.g. hash_fields = ['metric', 'tagk', 'tagv']",
            )
        hash_fields = names
    for h in hash_fields:
        if h not in names:
            key.fail("hash_fields", f"{h!r} is not a key field", "use field names from: " + ", ".join(names))
    if not hash_fields or len(set(hash_fields)) != len(hash_fields):
        key.fail("hash_fields", "must list distinct fields, at least one", "e.g. hash_fields = ['user_id']")
    options.update(STRATEGIES[strategy].key_options(key, fields, separator, hash_fields))
    key.done()
    return KeyParts(fields, separator, make_prefix(strategy, **options), list(hash_fields))


def parse_field(s: Section, index: int = 0) -> FieldSpec:
    """One ``[[key.fields]]`` entry (also ``[[index.columns]]``); ``index`` is unused."""
    name = s.get("name", str, required=True)
    if not name.strip() or "=" in name:  # FIELD=VALUE on the command line could never name it (issue 40)
        s.fail("name", f"{name!r} is not a field name", "give a name without '=' that is not blank, e.g. name = 'user_id'")
    ftype = s.get("type", str, required=True, choices=FIELD_TYPES)
    allowed = ENCODINGS[ftype]
    encoding = s.get("encoding", str, allowed[0], choices=allowed)
    order = s.get("order", str, "asc", choices=("asc", "desc"))
    width = s.get("width", int, None, minimum=1)
    ft = field_type(ftype)
    numeric = ft.numeric
    text_like = ft.text_like and encoding != "ordered"
    # "none": every value exactly width bytes (binary ids; zero-padded ids given whole, which a
    # "0" pad would refuse: see fields.py, padding never gives two values one key)
    pad = s.get("pad", str, ft.default_pad, choices=("none", "left", "right")) if text_like else "left"
    pad_char = s.get("pad_char", str, ft.default_pad_char) if text_like else "0"
    # keep-last also cuts a decimal integer to its last width digits (an order number's last 6)
    cuts = text_like or ft.integer and encoding == "text"
    truncate = s.get("truncate", str, "error", choices=("error", "keep-last")) if cuts else "error"
    if truncate == "keep-last" and numeric and order == "desc":
        s.fail("truncate", "keep-last cuts the value and order = 'desc' writes MAX - value: they do not mix", "use order = 'asc' or drop truncate")
    if text_like and len(pad_char) != 1:
        s.fail("pad_char", f"{pad_char!r} must be one character", "e.g. pad_char = '0'")
    # The pad fills the width byte by byte: a character of more than one byte would overfill it.
    if text_like and ftype == "string" and not pad_char.isascii():
        s.fail(
            "pad_char",
            f"{pad_char!r} is {len(pad_char.encode())} bytes in UTF-8; a string field pads with one byte",
            "use an ASCII pad_char, e.g. '0' or ' '",
        )
    if text_like and ftype == "bytes" and ord(pad_char) > 0xFF:
        s.fail("pad_char", f"{pad_char!r} is not one byte", "use a character from \\x00 to \\xff")
    if width is not None and not (text_like or encoding == "text" and ft.text_digits is not None):
        s.fail("width", f"{encoding} {ftype} has a fixed size already", "remove width")
    if encoding == "text" and numeric:
        digits = ft.text_digits
        if order == "desc" and width is not None and width < digits:
            s.fail(
                "width",
                f"order = 'desc' writes MAX - value, which needs {digits} digits; width {width} is too small",
                f"set width >= {digits} or remove it",
            )
    if order == "desc" and ftype == "float64" and encoding == "hbase":
        s.fail("order", "descending hbase float64 is not defined", "use encoding = 'ordered' for a descending float")
    s.done()
    return FieldSpec(name, ftype, encoding, order, width, pad, pad_char, truncate)


def parse_prefix(key: Section) -> tuple[str, dict[str, int]]:
    """``prefix`` of ``key``: a strategy name or ``{ strategy = ..., options }``, with defaults."""
    raw = key.data.get("prefix", "none")
    if not isinstance(raw, (str, Mapping)):
        key.fail("prefix", f"must be a strategy name or a table, got {raw!r}", 'e.g. prefix = { strategy = "md5", length = 4 } or prefix = "none"')
    if isinstance(raw, str):
        key.get("prefix", str, choices=STRATEGIES)
        strategy, sec = raw, None
    else:
        sec = key.required_section("prefix")
        strategy = sec.get("strategy", str, required=True, choices=STRATEGIES)
    cls = STRATEGIES[strategy]
    options = dict(cls.defaults)
    if sec is not None:
        for opt, (lo, hi) in cls.options.items():
            if sec.has(opt):
                options[opt] = sec.get(opt, int, minimum=lo, maximum=hi)
        sec.done()
    return strategy, options
