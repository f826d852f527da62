"""Random values through Phoenix 5.2.1 itself (a live connectionless Phoenix JVM,
tools/golden/phoenix/oracle.sh) must equal keyshape's keys, and keyshape's decode must invert them.
Marked ``phoenix``: needs a JDK and Maven (Phoenix's client jar comes from Maven Central)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phoenix_oracle import PhoenixOracle, PhoenixOracleError, to_param

from keyshape.phoenix import PhoenixKey, PhoenixKeyError, PhoenixTimestamp, parse_ddl

pytestmark = pytest.mark.phoenix

_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def oracle() -> Iterator[PhoenixOracle]:
    try:
        o = PhoenixOracle()
    except (RuntimeError, OSError) as exc:
        pytest.fail(f"the Phoenix oracle could not start: {exc}")
    yield o
    o.close()


_TYPES: dict[str, st.SearchStrategy[Any]] = {
    "TINYINT": st.integers(-128, 127),
    "SMALLINT": st.integers(-32768, 32767),
    "INTEGER": st.integers(-(2**31), 2**31 - 1),
    "BIGINT": st.integers(-(2**63), 2**63 - 1),
    "UNSIGNED_INT": st.integers(0, 2**31 - 1),
    "UNSIGNED_LONG": st.integers(0, 2**63 - 1),
    "FLOAT": st.floats(width=32),
    "DOUBLE": st.floats(),
    "DECIMAL": st.decimals(allow_nan=False, allow_infinity=False, places=None, min_value=Decimal("-1e30"),
                           max_value=Decimal("1e30")).map(lambda d: Decimal(str(d))),
    "DECIMAL(12,3)": st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=Decimal("-999999999"),
                                 max_value=Decimal("999999999")),
    "BOOLEAN": st.booleans(),
    "DATE": st.integers(-(2**45), 2**45),
    "TIMESTAMP": st.builds(PhoenixTimestamp, st.integers(-(2**45), 2**45), st.integers(0, 999_999)),
    "CHAR(4)": st.text(alphabet="abcxyz019 ", min_size=1, max_size=4).filter(lambda s: s.strip(" ") == s),
    "BINARY(3)": st.binary(min_size=1, max_size=3),
    "VARCHAR": st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                       min_size=1, max_size=8),
}


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[tuple[str, str, bool, bool]], int | None]:
    n = draw(st.integers(1, 4))
    cols = []
    for i in range(n):
        sql_type = draw(st.sampled_from(sorted(_TYPES)))
        desc = draw(st.booleans()) and sql_type != "BOOLEAN"
        fixed = sql_type not in ("VARCHAR", "DECIMAL", "DECIMAL(12,3)")
        nullable = not fixed and i > 0 and draw(st.booleans())
        cols.append((f"C{i}", sql_type, desc, nullable))
    salt = draw(st.sampled_from([None, None, 3, 16]))
    name = f"H{next(_COUNTER)}"
    return name, cols, salt


def _ddl(name: str, cols: list[tuple[str, str, bool, bool]], salt: int | None) -> str:
    defs = ", ".join(f"{c} {t}{'' if nullable else ' NOT NULL'}" for c, t, _, nullable in cols)
    pk = ", ".join(f"{c}{' DESC' if desc else ''}" for c, _, desc, _ in cols)
    return (f"CREATE TABLE {name} ({defs}, V VARCHAR CONSTRAINT PK PRIMARY KEY ({pk}))"
            + (f" SALT_BUCKETS={salt}" if salt else ""))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(table=tables(), data=st.data())
def test_random_rows_equal_phoenix_and_decode_back(oracle: PhoenixOracle, table: Any, data: st.DataObject) -> None:
    name, cols, salt = table
    ddl = _ddl(name, cols, salt)
    oracle.execute(ddl)
    parsed = parse_ddl(ddl)
    key: PhoenixKey = parsed.key
    types = {c[0]: c[1] for c in parsed.columns}
    for _ in range(3):
        row: dict[str, Any] = {}
        for c, sql_type, _, nullable in cols:
            if nullable and data.draw(st.booleans()):
                row[c] = None
            else:
                row[c] = data.draw(_TYPES[sql_type])
        names = list(row) + ["V"]
        params = [to_param(types[c], row[c]) for c in row] + ["str:78"]
        try:
            theirs = oracle.keys(f"UPSERT INTO {name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                                 *params)[name]
        except PhoenixOracleError as exc:
            # Phoenix refused the row (e.g. every PK column NULL): keyshape must refuse it too.
            with pytest.raises(PhoenixKeyError):
                key.encode(row)
            assert any(w in str(exc).lower() for w in ("null", "exceed", "numberformat")), exc
            continue
        ours = key.encode(row)
        assert ours == theirs, (ddl, row)
        back = key.decode(ours)
        for c, sql_type, _desc, _ in cols:
            value, wanted = back[c], row[c]
            if sql_type.startswith("DECIMAL") and wanted is not None:
                assert value == key.columns[[k.name for k in key.columns].index(c)].type.decode(
                    key.columns[[k.name for k in key.columns].index(c)].type.encode(wanted)), (c, value, wanted)
            elif sql_type.startswith("BINARY"):
                assert value == wanted.ljust(3, b"\x00")
            elif sql_type == "VARCHAR" and wanted == "":
                assert value is None
            else:
                assert value == wanted or (value != value and wanted != wanted), (c, value, wanted)
