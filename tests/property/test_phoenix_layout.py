"""A Phoenix table's KeyLayout is its key (issue 43): over random Phoenix tables (types, ASC/DESC,
nullable variable-width columns, trailing NULLs, salted or not), the plain layout walk reads the
key the table writes, and writes it byte for byte.

The tables and values are the ones tests/property/test_phoenix_resalt_keys.py draws (DECIMAL,
DATE, TIMESTAMP with nanoseconds, CHAR, BINARY, VARCHAR, BOOLEAN ...), salted or not.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from property.test_phoenix_resalt_keys import VALUES, VARIABLE

from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.phoenix import PhoenixKeyError, PhoenixTimestamp, parse_ddl
from keyshape.phoenix.schema import PhoenixKeySchema
from keyshape.schema import KeySchema
from keyshape.schema.keycheck import FITS, FOREIGN, WRONG_SALT, fit_codes


@st.composite
def phoenix_rows(draw: st.DrawFn, multi_tenant: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """A Phoenix table's DDL (salted or not; ``multi_tenant``: MULTI_TENANT, its first column the
    tenant id) and rows of it (a nullable variable-width column may be NULL)."""
    columns = []
    for i in range(draw(st.integers(2 if multi_tenant else 1, 4))):
        sql_type = draw(st.sampled_from(sorted(VALUES)))
        nullable = sql_type in VARIABLE and i > 0 and draw(st.booleans())
        columns.append((f"C{i}", sql_type, draw(st.booleans()) and sql_type != "BOOLEAN", nullable))
    defs = ", ".join(f"{c} {t}{'' if nullable else ' NOT NULL'}" for c, t, _, nullable in columns)
    pk = ", ".join(f"{c}{' DESC' if desc else ''}" for c, _, desc, _ in columns)
    salt = draw(st.sampled_from(["", " SALT_BUCKETS=1", " SALT_BUCKETS=7", " SALT_BUCKETS=256"]))
    options = " MULTI_TENANT=true" + ("," if salt else "") if multi_tenant else ""
    ddl = f"CREATE TABLE PL (V VARCHAR, {defs} CONSTRAINT PK PRIMARY KEY ({pk})){options}{salt}"
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        row = {c: (None if nullable and draw(st.booleans()) else draw(VALUES[t])) for c, t, _, nullable in columns}
        if all(v in (None, "") for v in row.values()):
            row[columns[0][0]] = draw(VALUES[columns[0][1]].filter(lambda v: v != ""))
        rows.append(row)
    return ddl, rows


@settings(max_examples=300, deadline=None)
@given(phoenix_rows())
def test_the_layout_of_a_phoenix_schema_reads_and_writes_its_keys(case: tuple[str, list[dict[str, Any]]]) -> None:
    ddl, rows = case
    table = parse_ddl(ddl)
    schema = PhoenixKeySchema(table)
    layout = schema.layout
    for row in rows:
        try:
            key = schema.encode(row)
        except PhoenixKeyError:
            continue  # a row Phoenix refuses too (a NULL or a value the column cannot hold)
        values = table.key.decode(key)  # the row as Phoenix reads it back (CHAR unpadded, a DECIMAL cut to its scale)
        assert layout.decode_generic(key) == _millis(values)
        assert schema.decode(key) == _millis(values)
        assert layout.encode_generic(row) == key
        assert layout.encode_generic(values) == key


def test_key_checks_read_a_phoenix_tables_keys_by_its_layout() -> None:
    """keycheck asks the layout whether the C reader reads its keys (no class test): a Phoenix
    table's keys fit, a key with another salt byte is WRONG_SALT, bytes of no row are FOREIGN."""
    ddl = "CREATE TABLE T (U VARCHAR NOT NULL, T BIGINT NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (U, T DESC)) SALT_BUCKETS=8"
    schema = PhoenixKeySchema(parse_ddl(ddl))
    keys = [schema.encode({"U": f"user{i}", "T": i}) for i in range(20)]
    wrong = bytes([(keys[0][0] + 1) % 8]) + keys[0][1:]
    got = fit_codes(schema, KeyArray.from_keys([*keys, wrong, b"\x03ab"]))
    assert got.tolist() == [FITS] * 20 + [WRONG_SALT, FOREIGN]


@settings(max_examples=300, deadline=None)
@given(phoenix_rows(), st.data())
def test_the_layout_walk_reads_any_bytes_as_phoenix_does(case: tuple[str, list[dict[str, Any]]], data: st.DataObject) -> None:
    """Keys cut, extended, with a byte changed, or any bytes: unverified, the layout walk gives
    Phoenix's values or refuses the bytes Phoenix's walk refuses (the salt byte stripped unread)."""
    ddl, rows = case
    table = parse_ddl(ddl)
    layout = PhoenixKeySchema(table).layout
    try:
        good = table.key.encode(rows[0])
    except PhoenixKeyError:
        good = data.draw(st.binary(max_size=12))
    cut = data.draw(st.integers(0, len(good)))
    flip = data.draw(st.integers(0, max(len(good) - 1, 0)))
    changed = good[:flip] + bytes([data.draw(st.integers(0, 255))]) + good[flip + 1 :] if good else b"\xff"
    for key in (good, good[:cut], good + data.draw(st.binary(min_size=1, max_size=3)), data.draw(st.binary(max_size=10)), changed):
        assert _outcome(layout.decode_generic, key) == _outcome(lambda k, v: _millis(table.key.decode(k, v)), key), key


def _millis(values: dict[str, Any]) -> dict[str, Any]:
    """Phoenix's values as the key schema's layout reads them: a TIMESTAMP as its milliseconds."""
    return {k: v.millis if isinstance(v, PhoenixTimestamp) else v for k, v in values.items()}


def _outcome(decode: Any, key: bytes) -> tuple[str, Any]:
    try:
        return "ok", repr(decode(key, False))  # (repr: a NaN read from random bytes equals itself)
    except KeyshapeError:
        return "refused", None


@settings(max_examples=200, deadline=None)
@given(phoenix_rows(multi_tenant=True))
def test_the_layout_of_each_connection_of_a_multi_tenant_table_is_its_key(case: tuple[str, list[dict[str, Any]]]) -> None:
    """A MULTI_TENANT table's keys through a tenant connection (a DESC tenant column's ascending
    bytes) and through the global one: each connection's layout reads and writes its own."""
    ddl, rows = case
    table = parse_ddl(ddl)
    schema = PhoenixKeySchema(table)
    for tenant_connection in (False, True):
        layout, key_format = schema.layout_for(tenant_connection), table.key.layout(tenant_connection)
        for row in rows:
            try:
                key = key_format.encode(row)
            except PhoenixKeyError:
                continue  # a row (or tenant id) Phoenix refuses too
            assert layout.decode_generic(key) == _millis(key_format.decode(key))
            assert layout.encode_generic(row) == key
            view = schema.for_connection(tenant_connection)  # a plain KeySchema of that connection's keys
            assert view.encode(row) == key
            assert view.decode(key) == _millis(key_format.decode(key))


def _plain(schema: PhoenixKeySchema) -> KeySchema:
    """A plain KeySchema over a Phoenix schema's layout (its compiled routes, no Phoenix override)."""
    layout = schema.layout
    return KeySchema(schema.table, list(layout.fields), layout.separator, layout.prefix, list(layout.hash_fields), None, None, "<plain>")


def test_a_plain_key_schema_over_a_phoenix_layout_encodes_as_phoenix() -> None:
    """What PhoenixKeySchema needs before its encode override can go: the plain KeySchema of its
    layout writes Phoenix's key ('a' with B NULL is 61, not 61 00), per record and in a batch."""
    schema = PhoenixKeySchema(parse_ddl("CREATE TABLE T (A VARCHAR NOT NULL, B VARCHAR, V VARCHAR CONSTRAINT PK PRIMARY KEY (A, B)) SALT_BUCKETS=4"))
    layout, plain = schema.layout, _plain(schema)
    rows = [{"A": "a", "B": None}, {"A": "a", "B": "b"}]
    for row in rows:
        assert layout.encode_generic(row) == schema.encode(row)  # (the reference walk already does)
        assert plain.encode(row) == schema.encode(row)
    assert plain.encode_many({"A": ["a", "a"], "B": [None, "b"]}) == [schema.encode(r) for r in rows]
    assert plain.encode({"A": "a", "B": None})[1:] == b"a"


@settings(max_examples=200, deadline=None)
@given(phoenix_rows())
def test_the_compiled_routes_of_a_phoenix_layout_write_its_keys(case: tuple[str, list[dict[str, Any]]]) -> None:
    """Over random Phoenix tables, the general compiled encoder and the batch encoder of the layout
    (a plain KeySchema) write the key Phoenix writes, trailing NULLs trimmed."""
    ddl, rows = case
    schema = PhoenixKeySchema(parse_ddl(ddl))
    plain = _plain(schema)
    good = []
    for row in rows:
        try:
            key = schema.encode(row)
        except PhoenixKeyError:
            continue
        assert plain.encode(row) == key
        good.append((row, key))
    if good:
        columns = {n: [r[n] for r, _ in good] for n in plain.field_names}
        keys = [k for _, k in good]
        assert plain.encode_many(columns) == keys
        # and read back by the compiled decoder (the C reader first) and decode_many, as Phoenix reads them
        want = [_millis(schema.phoenix.key.decode(k)) for k in keys]
        for verify in (True, False):
            assert [plain.decode(k, verify) for k in keys] == want
            assert plain.decode_many(keys, verify=verify) == {n: [w[n] for w in want] for n in plain.field_names}
