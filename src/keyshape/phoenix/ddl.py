"""Phoenix DDL in and out: ``CREATE TABLE`` / ``CREATE INDEX`` (global) to a :class:`PhoenixTable`,
and a table back to the ``CREATE TABLE`` whose split points Phoenix applies byte for byte.

What is read: column types with length/scale, NOT NULL, the PK (inline ``PRIMARY KEY`` or a
``CONSTRAINT name PRIMARY KEY (c ASC|DESC, ...)``, ``ROW_TIMESTAMP`` accepted), ``SALT_BUCKETS``,
``MULTI_TENANT``, other table options (kept, not interpreted) and ``SPLIT ON`` literals (integers,
decimals, strings, ``X'..'``, ``CAST(.. AS type)``), each encoded as Phoenix does: with the
literal's own type, ASC (an integer literal is an INTEGER when it fits, whatever the column).
``ARRAY`` and ``DEFAULT`` on columns outside the primary key are kept as written (they do not touch
the row key). A global index on a MULTI_TENANT table leads with the tenant column, as Phoenix builds it.
Anything else (views, local indexes, ARRAY or DEFAULT in the primary key, expressions in SPLIT ON)
is refused with one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from keyshape.errors import KeyshapeError
from keyshape.phoenix.key import PhoenixColumn, PhoenixKey
from keyshape.phoenix.types import PhoenixType, PhoenixTypeError, phoenix_type

__all__ = ["DDLScript", "PhoenixDDLError", "PhoenixTable", "create_table_sql", "parse_ddl", "parse_ddl_script", "read_ddl_script", "split_literal"]


class PhoenixDDLError(KeyshapeError):
    """DDL that keyshape cannot read (the message names the feature or the position)."""


@dataclass
class PhoenixTable:
    """A Phoenix table (or global index) as its DDL declares it."""

    name: str
    columns: list[tuple[str, PhoenixType, bool]]  # every column: name, type, nullable
    key: PhoenixKey
    options: dict[str, str] = field(default_factory=dict)
    split_on: list[bytes] = field(default_factory=list)  # SPLIT ON points, as Phoenix encodes them
    index_of: str | None = None  # the data table of a global index
    split_literals: list[str] = field(default_factory=list)  # the SPLIT ON literals as written
    # non-key columns' ARRAY suffix ("ARRAY", "ARRAY[5]", "[]") and DEFAULT expression, as written:
    # kept so the CREATE TABLE printed back declares the same columns
    arrays: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, str] = field(default_factory=dict)

    @property
    def hbase_table(self) -> str:
        """The physical HBase table (namespace mapping off: ``SCHEMA.NAME``)."""
        return self.name

    def region_boundaries(self) -> list[bytes]:
        """The region boundaries Phoenix creates for this DDL (SPLIT ON padded, or the salt buckets)."""
        return self.key.region_boundaries(self.split_on)


_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^']|'')*')|(?P<hex>[xX]'[0-9a-fA-F\s]*')|(?P<qid>"(?:[^"]|"")*")|
                       (?P<num>[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)|(?P<word>[A-Za-z_][A-Za-z0-9_$#]*(?:\.[A-Za-z_"][A-Za-z0-9_$#"]*)*)|
                       (?P<sym>\|\||[(),=;.*+\-/%<>!\[\]]))""",
    re.X,
)


class _Tokens:
    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.items: list[tuple[str, str, int]] = []
        pos = 0
        text = sql.strip().rstrip(";")
        self.text = text
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise PhoenixDDLError(f"cannot read the DDL at {text[pos : pos + 20]!r}")
            kind = m.lastgroup or "sym"
            self.items.append((kind, m.group(kind), m.start(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.i = 0

    def peek(self, ahead: int = 0) -> str:
        j = self.i + ahead
        return self.items[j][1].upper() if j < len(self.items) else ""

    def take(self) -> tuple[str, str]:
        if self.i >= len(self.items):
            raise PhoenixDDLError("the DDL ends too early")
        kind, text, _ = self.items[self.i]
        self.i += 1
        return kind, text

    def expect(self, word: str) -> None:
        kind, text = self.take()
        if text.upper() != word:
            raise PhoenixDDLError(f"expected {word} but found {text!r}")

    def accept(self, *words: str) -> bool:
        if self.peek() in words:
            self.i += 1
            return True
        return False

    def name(self) -> str:
        kind, text = self.take()
        if kind == "qid":
            return text[1:-1].replace('""', '"')
        if kind != "word":
            raise PhoenixDDLError(f"expected a name but found {text!r}")
        return ".".join(p.strip('"') if p.startswith('"') else p.upper() for p in text.split("."))

    def done(self) -> bool:
        return self.i >= len(self.items)


def _type(tokens: _Tokens) -> PhoenixType:
    _, name = tokens.take()
    length = scale = None
    if tokens.accept("("):
        length = int(tokens.take()[1])
        if tokens.accept(","):
            scale = int(tokens.take()[1])
        tokens.expect(")")
    try:
        return phoenix_type(name, length, scale)
    except PhoenixTypeError as exc:
        if name.upper() in ("JSON", "BSON", "VARBINARY_ENCODED"):
            raise PhoenixDDLError(f"{name.upper()} is not supported (Phoenix 5.3+ or not a key type)") from None
        raise PhoenixDDLError(str(exc)) from None


def _array(tokens: _Tokens) -> str | None:
    """A column's ``ARRAY``, ``ARRAY[n]``, ``[]`` or ``[n]`` after its type, as written (None: not an array)."""
    words = []
    if tokens.accept("ARRAY"):
        words.append("ARRAY")
    if tokens.accept("["):
        size = "" if tokens.peek() == "]" else tokens.take()[1]
        tokens.expect("]")
        words.append(f"[{size}]")
    return "".join(words) or None


def _default(tokens: _Tokens) -> str:
    """The expression after ``DEFAULT``, as written (to the column's end at the same depth)."""
    first = tokens.i
    depth = 0
    while not tokens.done():
        word = tokens.peek()
        if depth == 0 and (word in (",", ")", "PRIMARY", "ROW_TIMESTAMP", "CONSTRAINT")):
            break
        depth += (word in ("(", "[")) - (word in (")", "]"))
        tokens.take()
    if tokens.i == first:
        raise PhoenixDDLError("DEFAULT without a value")
    _, last, end = tokens.items[tokens.i - 1]
    return tokens.text[tokens.items[first][2] : end + len(last)]


def _options(tokens: _Tokens) -> dict[str, str]:
    out: dict[str, str] = {}
    while not tokens.done() and tokens.peek() not in ("SPLIT",):
        key = tokens.name()
        tokens.expect("=")
        _, value = tokens.take()
        out[key.split(".")[-1].upper()] = value.strip("'")
        tokens.accept(",")
    return out


def _literal(tokens: _Tokens) -> tuple[bytes, str]:
    """One SPLIT ON literal as Phoenix encodes it (its own type, ASC) and its text."""
    kind, text = tokens.take()
    if kind == "hex":
        digits = re.sub(r"\s", "", text[2:-1])
        return bytes.fromhex(digits), text
    if kind == "str":
        string = text[1:-1].replace("''", "'")
        return string.encode("utf-8"), text
    if kind == "num":
        return split_literal(text), text
    if text.upper() == "CAST":
        tokens.expect("(")
        inner, inner_text = tokens.take()
        tokens.expect("AS")
        target = _type(tokens)
        tokens.expect(")")
        value: object
        if inner == "str":
            value = inner_text[1:-1]
        elif "." in inner_text or "e" in inner_text.lower():
            value = Decimal(inner_text)
            if target.name in _INTEGER_TYPES and value == value.to_integral_value():
                value = int(value)  # CAST(1.5e3 AS BIGINT): Phoenix splits at 1500
        else:
            value = int(inner_text)
        if target.name in ("DECIMAL",):
            value = Decimal(str(value))
            # Phoenix encodes a CAST split literal without the target's precision and scale:
            # CAST(12.7 AS DECIMAL(5)) splits at 12.7, not at 12.
            target = phoenix_type("DECIMAL")
        try:
            return target.encode(value), f"CAST({inner_text} AS {target.sql})"
        except PhoenixTypeError as exc:
            raise PhoenixDDLError(f"SPLIT ON CAST({inner_text} AS {target.sql}): {exc}") from None
    raise PhoenixDDLError(f"SPLIT ON literal {text!r} is not supported; write it as X'..' (keyshape prints the bytes: keyshape phoenix ddl)")


_INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UNSIGNED_TINYINT", "UNSIGNED_SMALLINT", "UNSIGNED_INT", "UNSIGNED_LONG")


def split_literal(number: str) -> bytes:
    """How Phoenix encodes a numeric SPLIT ON literal: a non-negative whole number as INTEGER when it
    fits (``ParseNodeFactory.wholeNumber``), a larger or negative one as BIGINT, a number with an
    exponent (``1e3``) as DOUBLE (Phoenix's grammar reads it as a double literal), any other number
    with a point as DECIMAL."""
    if re.fullmatch(r"[-+]?\d+", number):
        value = int(number)
        # A minus sign makes the literal an expression, which Phoenix evaluates to a BIGINT.
        if 0 <= value < 2**31 and not number.startswith("-"):
            return phoenix_type("INTEGER").encode(value)
        return phoenix_type("BIGINT").encode(value)
    if "e" in number.lower():
        try:
            return phoenix_type("DOUBLE").encode(float(number))
        except PhoenixTypeError as exc:
            raise PhoenixDDLError(f"SPLIT ON ({number}): {exc}") from None
    return phoenix_type("DECIMAL").encode(Decimal(number))


def parse_ddl(sql: str, tables: dict[str, PhoenixTable] | None = None) -> PhoenixTable:
    """A ``CREATE TABLE`` or ``CREATE INDEX`` statement (``tables`` holds the data tables an index
    may refer to, by name). PhoenixDDLError for anything not supported."""
    tokens = _Tokens(sql)
    tokens.expect("CREATE")
    if tokens.accept("LOCAL"):
        raise PhoenixDDLError("local indexes are not supported (their keys start with the region's start key)")
    if tokens.accept("VIEW"):
        raise PhoenixDDLError("views are not supported; give the CREATE TABLE of the physical table")
    if tokens.accept("INDEX"):
        return _index(tokens, tables or {})
    tokens.accept("IMMUTABLE")
    tokens.expect("TABLE")
    if tokens.accept("IF"):
        tokens.expect("NOT")
        tokens.expect("EXISTS")
    name = tokens.name()
    tokens.expect("(")
    columns: list[tuple[str, PhoenixType, bool]] = []
    arrays: dict[str, str] = {}
    defaults: dict[str, str] = {}
    pk: list[tuple[str, bool]] = []
    inline_pk: list[tuple[str, bool]] = []
    while True:
        if tokens.accept("CONSTRAINT"):
            tokens.name()
            tokens.expect("PRIMARY")
            tokens.expect("KEY")
            tokens.expect("(")
            while True:
                col = tokens.name()
                desc = tokens.accept("DESC")
                tokens.accept("ASC")
                tokens.accept("ROW_TIMESTAMP")
                pk.append((col, desc))
                if tokens.accept(")"):
                    break
                tokens.expect(",")
        else:
            col = tokens.name()
            ctype = _type(tokens)
            array = _array(tokens)
            if array:
                arrays[col] = array
            nullable = True
            while tokens.peek() in ("NOT", "NULL", "PRIMARY", "DEFAULT", "ROW_TIMESTAMP"):
                if tokens.accept("NOT"):
                    tokens.expect("NULL")
                    nullable = False
                elif tokens.accept("NULL"):
                    nullable = True
                elif tokens.accept("PRIMARY"):
                    tokens.expect("KEY")
                    desc = tokens.accept("DESC")
                    tokens.accept("ASC")
                    inline_pk.append((col, desc))
                elif tokens.accept("DEFAULT"):
                    defaults[col] = _default(tokens)
                else:
                    tokens.take()
            columns.append((col, ctype, nullable))
        if tokens.accept(")"):
            break
        if tokens.peek() != "CONSTRAINT":  # Phoenix lets the PK constraint follow a column without a comma
            tokens.expect(",")
    if pk and inline_pk:
        raise PhoenixDDLError("both an inline PRIMARY KEY and a CONSTRAINT .. PRIMARY KEY")
    pk = pk or inline_pk
    if not pk:
        raise PhoenixDDLError(f"table {name} has no PRIMARY KEY")
    options = _options(tokens)
    split_on, literals = _split_on(tokens)
    if not tokens.done():
        raise PhoenixDDLError(f"unexpected {tokens.peek()!r} after the table options")
    by_name = {c[0]: c for c in columns}
    key_columns = []
    for col, desc in pk:
        if col not in by_name:
            raise PhoenixDDLError(f"PRIMARY KEY column {col} is not a column of {name}")
        _, ctype, nullable = by_name[col]
        if col in arrays:
            raise PhoenixDDLError(f"PRIMARY KEY column {col} is an ARRAY ({ctype.sql} {arrays[col]}): keyshape does not model array keys")
        if col in defaults:
            raise PhoenixDDLError(
                f"PRIMARY KEY column {col} has DEFAULT {defaults[col]}: Phoenix writes that value into the row key when an "
                f"UPSERT leaves {col} out, which keyshape's keys do not model; drop the DEFAULT from the DDL given to "
                f"keyshape and give {col} in every row"
            )
        single = len(pk) == 1
        key_columns.append(PhoenixColumn(col, ctype, desc, nullable and not single))
    key = _key(key_columns, options)
    _check_splits(key, split_on, literals)
    return PhoenixTable(name, columns, key, options, split_on, None, literals, arrays, defaults)


def _check_splits(key: PhoenixKey, split_on: list[bytes], literals: list[str]) -> None:
    """Refuse SPLIT ON points that pad to one region boundary (HBase refuses the table)."""
    try:
        key.region_boundaries(split_on)
    except KeyshapeError as exc:
        listed = "SPLIT ON (" + ", ".join(literals) + "): " if literals else ""
        raise PhoenixDDLError(listed + str(exc)) from None


def _key(columns: list[PhoenixColumn], options: dict[str, str], tenant_index: bool = False) -> PhoenixKey:
    salt = int(options["SALT_BUCKETS"]) if "SALT_BUCKETS" in options else None
    if salt == 0:
        salt = None
    try:
        return PhoenixKey(columns, salt, options.get("MULTI_TENANT", "false").lower() == "true", tenant_index=tenant_index)
    except KeyshapeError as exc:
        raise PhoenixDDLError(str(exc)) from None


def _split_on(tokens: _Tokens) -> tuple[list[bytes], list[str]]:
    if not tokens.accept("SPLIT"):
        return [], []
    tokens.expect("ON")
    tokens.expect("(")
    points, texts = [], []
    while True:
        point, text = _literal(tokens)
        points.append(point)
        texts.append(text)
        if tokens.accept(")"):
            return points, texts
        tokens.expect(",")


def parse_ddl_script(text: str, where: str = "the DDL") -> dict[str, PhoenixTable]:
    """Every CREATE TABLE / CREATE INDEX of a script (statements end with ``;``; ``--`` starts a
    comment), by name, in order. PhoenixDDLError for the first statement keyshape cannot read, or
    when there is none (:func:`read_ddl_script` reads past such statements)."""
    script = read_ddl_script(text, where)
    for error in script.skipped.values():
        raise error
    return script.tables


@dataclass
class DDLScript:
    """A DDL file's tables: those keyshape reads, and the statements it cannot read (by name, with
    why), so that one unsupported statement does not hide the other tables of the file."""

    tables: dict[str, PhoenixTable]
    skipped: dict[str, PhoenixDDLError]
    order: list[str]  # every statement's name, in the file's order
    where: str
    kinds: dict[str, str] = field(default_factory=dict)  # TABLE, INDEX or VIEW, of each skipped statement

    def pick(self, name: str | None = None) -> PhoenixTable:
        """The table or index ``name`` (default: the file's first statement); PhoenixDDLError
        naming the statement's problem when it is one keyshape cannot read."""
        if name is None:
            wanted = self.order[0]
        else:
            wanted = name.strip('"') if '"' in name else name.upper()
        if wanted in self.skipped:
            raise PhoenixDDLError(f"{self.where}: {wanted}: {self.skipped[wanted]}")
        if wanted not in self.tables:
            raise PhoenixDDLError(f"{self.where} has no table {name!r}; it has: {', '.join(self.tables)}")
        return self.tables[wanted]


_INDEX_ON = re.compile(r'\s*CREATE\s+(?:LOCAL\s+)?INDEX\s+.*?\s+ON\s+("(?:[^"]|"")*"|[A-Za-z_][\w$#.]*)', re.I | re.S)
_STATEMENT_KIND = re.compile(r"\s*CREATE\s+(?:LOCAL\s+)?(?:IMMUTABLE\s+)?(TABLE|INDEX|VIEW)", re.I)


def _kind(statement: str) -> str:
    m = _STATEMENT_KIND.match(statement)
    return m.group(1).upper() if m else ""


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name.upper()


_STATEMENT_NAME = re.compile(
    r'\s*CREATE\s+(?:LOCAL\s+)?(?:IMMUTABLE\s+)?(?:TABLE|INDEX|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?("(?:[^"]|"")*"|[A-Za-z_][\w$#.]*)', re.I
)


def read_ddl_script(text: str, where: str = "the DDL") -> DDLScript:
    """Every statement of a script as :func:`parse_ddl_script` reads them, keeping the ones keyshape
    cannot read in ``skipped`` (an index on a skipped table is skipped too). PhoenixDDLError when the
    script has no statement, or none keyshape can name."""
    lines = [line.split("--", 1)[0] if "'" not in line.split("--", 1)[0] else line for line in text.splitlines()]
    script = DDLScript({}, {}, [], where)
    for statement in (part.strip() for part in "\n".join(lines).split(";")):
        if not statement:
            continue
        try:
            parsed = parse_ddl(statement, script.tables)
        except PhoenixDDLError as exc:
            m = _STATEMENT_NAME.match(statement)
            if m is None:
                raise
            name = _unquote(m.group(1))
            on = _INDEX_ON.match(statement)
            data = _unquote(on.group(1)) if on else None
            error = exc
            if data in script.skipped:
                error = PhoenixDDLError(
                    f"index on view {data}: a view index (its keys lead with a view-index id, in the physical table's _IDX_ table) is not supported"
                    if script.kinds.get(data) == "VIEW"
                    else f"index on {data}, which keyshape cannot read ({script.skipped[data]})"
                )
            script.skipped[name] = error
            script.kinds[name] = _kind(statement)
            script.order.append(name)
            continue
        script.tables[parsed.name] = parsed
        script.order.append(parsed.name)
    if not script.order:
        raise PhoenixDDLError(f"{where} has no CREATE TABLE statement")
    return script


# Nullable fixed-width indexed columns change type in the index (IndexUtil.getIndexColumnDataType).
_INDEX_TYPE = {"CHAR": "VARCHAR", "BINARY": "VARBINARY"}


def _index(tokens: _Tokens, tables: dict[str, PhoenixTable]) -> PhoenixTable:
    if tokens.accept("IF"):
        tokens.expect("NOT")
        tokens.expect("EXISTS")
    name = tokens.name()
    tokens.expect("ON")
    data_name = tokens.name()
    data = tables.get(data_name)
    if data is None:
        raise PhoenixDDLError(f"index {name} is on {data_name}: give that table's CREATE TABLE first")
    # A global index on a MULTI_TENANT table is itself multi-tenant: the tenant column leads its
    # key (before the indexed columns), and Phoenix refuses indexing the tenant column again.
    tenant = data.key.columns[0] if data.key.multi_tenant else None
    by_name = {c[0]: c for c in data.columns}
    tokens.expect("(")
    indexed: list[PhoenixColumn] = []
    while True:
        col = tokens.name()
        if col not in by_name:
            raise PhoenixDDLError(f"index {name}: {col} is not a column of {data_name} (expressions are not supported)")
        if col in data.arrays:
            raise PhoenixDDLError(f"index {name}: {col} is an ARRAY column; keyshape does not model array keys")
        if tenant is not None and col == tenant.name:
            raise PhoenixDDLError(
                f"index {name}: {col} is the tenant column of MULTI_TENANT {data_name}; Phoenix refuses it (duplicate column: "
                "the index leads with it already): leave it out"
            )
        desc = tokens.accept("DESC")
        tokens.accept("ASC")
        _, ctype, nullable = by_name[col]
        pk_col = next((c for c in data.key.columns if c.name == col), None)
        nullable = pk_col.nullable if pk_col is not None else nullable
        pad_to = None
        data_type = None
        if nullable and ctype.fixed:
            pad_to = ctype.width if ctype.name in _INDEX_TYPE else None
            # numbers, dates, times and BOOLEAN: the index holds the data value as a DECIMAL
            data_type = None if ctype.name in _INDEX_TYPE else ctype
            ctype = phoenix_type(_INDEX_TYPE.get(ctype.name, "DECIMAL"))
        data_desc = None
        data_order = pk_col.desc if pk_col is not None else False  # (cells are written ASC)
        if ctype.name == "DECIMAL" and ctype.scale is not None and data_order != desc:
            # in the other sort order than the data row: the number its bytes read as
            data_type, data_desc = ctype, data_order
        indexed.append(PhoenixColumn(col, ctype, desc, nullable, pad_to, data_type, data_desc))
        if tokens.accept(")"):
            break
        tokens.expect(",")
    if tokens.accept("INCLUDE"):
        tokens.expect("(")
        while not tokens.accept(")"):
            tokens.take()
    options = _options(tokens)
    split_on, literals = _split_on(tokens)
    seen = {c.name for c in indexed}
    rest = [c for c in data.key.columns if c.name not in seen]  # same order: the data row's bytes
    if "SALT_BUCKETS" not in options and data.key.salt_buckets:
        options["SALT_BUCKETS"] = str(data.key.salt_buckets)
    if tenant is not None:
        options.setdefault("MULTI_TENANT", "true")
        rest = [c for c in rest if c.name != tenant.name]
    key = _key(([tenant] if tenant is not None else []) + indexed + rest, options, tenant_index=tenant is not None)
    _check_splits(key, split_on, literals)
    columns = [(c.name, c.type, c.nullable) for c in key.columns]
    return PhoenixTable(name, columns, key, options, split_on, data_name, literals)


def create_table_sql(table: PhoenixTable, split_points: list[bytes] | None = None, salt_buckets: int | None | str = "keep") -> str:
    """The ``CREATE TABLE`` for ``table``; ``split_points`` become ``SPLIT ON (X'..', ...)`` (the one
    form Phoenix applies byte for byte); ``salt_buckets`` replaces SALT_BUCKETS (None drops it)."""
    if table.index_of is not None:
        raise PhoenixDDLError(f"{table.name} is an index; print its data table's DDL instead")
    pk = {c.name: c for c in table.key.columns}
    lines = []
    for col, ctype, nullable in table.columns:
        not_null = " NOT NULL" if (col in pk and not pk[col].nullable) or (col not in pk and not nullable) else ""
        array = (" " if table.arrays[col].startswith("ARRAY") else "") + table.arrays[col] if col in table.arrays else ""
        default = f" DEFAULT {table.defaults[col]}" if col in table.defaults else ""
        lines.append(f"    {_quote(col)} {ctype.sql}{array}{not_null}{default}")
    order = ", ".join(f"{_quote(c.name)}{' DESC' if c.desc else ''}" for c in table.key.columns)
    lines.append(f"    CONSTRAINT PK PRIMARY KEY ({order})")
    options = dict(table.options)
    if salt_buckets != "keep":
        options.pop("SALT_BUCKETS", None)
        if salt_buckets:
            options["SALT_BUCKETS"] = str(salt_buckets)
    opts = ", ".join(f"{k}={v}" for k, v in options.items())
    sql = f"CREATE TABLE {table.name} (\n" + ",\n".join(lines) + "\n)" + (f" {opts}" if opts else "")
    if split_points:
        sql += " SPLIT ON (" + ", ".join(f"X'{p.hex().upper()}'" for p in split_points) + ")"
    return sql


def _quote(name: str) -> str:
    return name if re.fullmatch(r"[A-Z_][A-Z0-9_]*(\.[A-Z_][A-Z0-9_]*)?", name) else '"' + name.replace('"', '""') + '"'
