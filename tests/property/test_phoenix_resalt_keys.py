"""The re-salt's key rule as ``phoenix resalt --online`` applies it (issue 32): the copy and the
stream re-key through ``new.encode(old.decode(key))`` (one key at a time, or ``encode_many`` in
the copy's batches), and for :class:`~keyshape.phoenix.resalt.ResaltSchema` that must be exactly
the new salt byte plus the old key's rest, for any table and any row Phoenix can write. The
general Phoenix key schema does not give that for a TIMESTAMP with nanoseconds (pinned below), so
the re-salt cannot simply use it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.hashing import phoenix_salt
from keyshape.phoenix import PhoenixKeyError, PhoenixTimestamp, parse_ddl
from keyshape.phoenix.resalt import ResaltSchema, target_ddl
from keyshape.phoenix.schema import PhoenixKeySchema

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "TINYINT": st.integers(-128, 127),
    "BIGINT": st.integers(-(2**63), 2**63 - 1),
    "UNSIGNED_LONG": st.integers(0, 2**63 - 1),
    "DOUBLE": st.floats(allow_nan=False),
    "DECIMAL(12,3)": st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=Decimal("-999999999"), max_value=Decimal("999999999")),
    "BOOLEAN": st.booleans(),
    "DATE": st.integers(-(2**45), 2**45),
    "TIMESTAMP": st.builds(PhoenixTimestamp, st.integers(-(2**45), 2**45), st.integers(0, 999_999)),
    "CHAR(4)": st.text(alphabet="abcxyz019 ", min_size=1, max_size=4).filter(lambda s: s.strip(" ") == s),
    "BINARY(3)": st.binary(min_size=3, max_size=3),
    "VARCHAR": st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8),
}
VARIABLE = ("VARCHAR", "DECIMAL(12,3)")


@st.composite
def salted_rows(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], int]:
    """A salted table's DDL, rows of it (a nullable variable-width column may be NULL) and a new bucket count."""
    columns = []
    for i in range(draw(st.integers(1, 4))):
        sql_type = draw(st.sampled_from(sorted(VALUES)))
        nullable = sql_type in VARIABLE and i > 0 and draw(st.booleans())
        columns.append((f"C{i}", sql_type, draw(st.booleans()) and sql_type != "BOOLEAN", nullable))
    defs = ", ".join(f"{c} {t}{'' if nullable else ' NOT NULL'}" for c, t, _, nullable in columns)
    pk = ", ".join(f"{c}{' DESC' if desc else ''}" for c, _, desc, _ in columns)
    ddl = f"CREATE TABLE RS (V VARCHAR, {defs} CONSTRAINT PK PRIMARY KEY ({pk})) SALT_BUCKETS={draw(st.integers(1, 32))}"
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        row = {c: (None if nullable and draw(st.booleans()) else draw(VALUES[t])) for c, t, _, nullable in columns}
        if all(v in (None, "") for v in row.values()):
            row[columns[0][0]] = draw(VALUES[columns[0][1]].filter(lambda v: v != ""))
        rows.append(row)
    return ddl, rows, draw(st.integers(1, 256))


@settings(max_examples=300, deadline=None)
@given(salted_rows())
def test_resalt_schemas_move_every_key_to_its_new_salt_and_nowhere_else(case: tuple[str, list[dict[str, Any]], int]) -> None:
    ddl, rows, buckets = case
    source = parse_ddl(ddl)
    target = parse_ddl(target_ddl(source, "RS2", buckets))
    old, new = ResaltSchema(source), ResaltSchema(target)
    keys = []
    for row in rows:
        try:
            keys.append(source.key.encode(row))
        except PhoenixKeyError:
            continue  # a row Phoenix would refuse too (a NULL where the layout cannot hold one)
    for key in keys:
        want = bytes([phoenix_salt(key[1:], buckets)]) + key[1:]
        assert new.encode(old.decode(key)) == want
    if keys:  # the copy's path: decoded one by one, encoded as columns
        records = [old.decode(k) for k in keys]
        batch = new.encode_many({f: [r[f] for r in records] for f in new.field_names})
        assert batch == [bytes([phoenix_salt(k[1:], buckets)]) + k[1:] for k in keys]


def test_the_general_phoenix_schema_would_move_a_timestamp_with_nanoseconds() -> None:
    source = parse_ddl("CREATE TABLE RS (K VARCHAR NOT NULL, AT TIMESTAMP NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (K, AT)) SALT_BUCKETS=8")
    target = parse_ddl(target_ddl(source, "RS2", 16))
    key = source.key.encode({"K": "a", "AT": PhoenixTimestamp(1_767_225_600_000, 17)})
    general = PhoenixKeySchema(target).encode(PhoenixKeySchema(source).decode(key))
    assert general[1:] != key[1:], "the general schema keeps nanoseconds now: ResaltSchema may no longer be needed"
    assert ResaltSchema(target).encode(ResaltSchema(source).decode(key))[1:] == key[1:]
