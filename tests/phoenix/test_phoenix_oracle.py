"""Random values through Phoenix 5.2.1 itself (a live connectionless Phoenix JVM,
tools/golden/phoenix/oracle.sh) must equal keyshape's keys, and keyshape's decode must invert them.
Marked ``phoenix``: needs a JDK and Maven (Phoenix's client jar comes from Maven Central)."""

from __future__ import annotations

import itertools
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phoenix_oracle import PhoenixOracle, PhoenixOracleError, clipped, phoenix_ranges, to_param

from keyshape.phoenix import PhoenixKey, PhoenixKeyError, PhoenixTimestamp, parse_ddl
from keyshape.phoenix.ddl import PhoenixDDLError

pytestmark = pytest.mark.phoenix

_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def oracle(connectionless_oracle: PhoenixOracle) -> PhoenixOracle:
    """The session's connectionless Phoenix JVM (tests/phoenix_fixture.py), shared with the other
    Phoenix modules: tables here are named apart from theirs."""
    return connectionless_oracle


_TYPES: dict[str, st.SearchStrategy[Any]] = {
    "TINYINT": st.integers(-128, 127),
    "SMALLINT": st.integers(-32768, 32767),
    "INTEGER": st.integers(-(2**31), 2**31 - 1),
    "BIGINT": st.integers(-(2**63), 2**63 - 1),
    "UNSIGNED_INT": st.integers(0, 2**31 - 1),
    "UNSIGNED_LONG": st.integers(0, 2**63 - 1),
    "FLOAT": st.floats(width=32),
    "DOUBLE": st.floats(),
    "DECIMAL": st.decimals(allow_nan=False, allow_infinity=False, places=None, min_value=Decimal("-1e30"), max_value=Decimal("1e30")).map(
        lambda d: Decimal(str(d))
    ),
    "DECIMAL(12,3)": st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=Decimal("-999999999"), max_value=Decimal("999999999")),
    "BOOLEAN": st.booleans(),
    "DATE": st.integers(-(2**45), 2**45),
    "TIMESTAMP": st.builds(PhoenixTimestamp, st.integers(-(2**45), 2**45), st.integers(0, 999_999)),
    "CHAR(4)": st.text(alphabet="abcxyz019 ", min_size=1, max_size=4).filter(lambda s: s.strip(" ") == s),
    "BINARY(3)": st.binary(min_size=1, max_size=3),
    "VARCHAR": st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=8),
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
    return f"CREATE TABLE {name} ({defs}, V VARCHAR CONSTRAINT PK PRIMARY KEY ({pk}))" + (f" SALT_BUCKETS={salt}" if salt else "")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
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
            theirs = oracle.keys(f"UPSERT INTO {name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", *params)[name]
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
                    key.columns[[k.name for k in key.columns].index(c)].type.encode(wanted)
                ), (c, value, wanted)
            elif sql_type.startswith("BINARY"):
                assert value == wanted.ljust(3, b"\x00")
            elif sql_type == "VARCHAR" and wanted == "":
                assert value is None
            else:
                assert value == wanted or (value != value and wanted != wanted), (c, value, wanted)


# --- issue 28 item 7: the edges outside the differential above ----------------------------------
# DECIMAL(p) (scale 0, values too big, DESC values cut to the scale), VARCHAR(n) in UTF-16 units,
# SPLIT ON literals of every kind (duplicates once padded included), nullable trailing PK columns
# with Phoenix's own scans for leading columns, MULTI_TENANT, and global indexes on nullable
# fixed-width columns (stored as DECIMAL).

_EDGE_PK_TYPES: dict[str, st.SearchStrategy[Any]] = {
    **{t: _TYPES[t] for t in ("INTEGER", "BIGINT", "DOUBLE", "CHAR(4)", "VARCHAR", "TIMESTAMP", "BINARY(3)")},
    "DECIMAL(5)": st.one_of(*(st.decimals(allow_nan=False, allow_infinity=False, places=p, min_value=-200000, max_value=200000) for p in (0, 1, 2))),
    "DECIMAL(4,2)": st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-150, max_value=150),
    "VARCHAR(3)": st.text(alphabet="ab\u00e9\U0001f600", min_size=1, max_size=4),
}
_FINITE = st.floats(min_value=-1e100, max_value=1e100).filter(lambda f: f == 0 or abs(f) > 1e-100)
_INDEXABLE: dict[str, st.SearchStrategy[Any]] = {
    "TIMESTAMP": _TYPES["TIMESTAMP"],
    "DOUBLE": _FINITE,
    "FLOAT": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "BOOLEAN": st.booleans(),
    "INTEGER": _TYPES["INTEGER"],
    "TIME": _TYPES["DATE"],
    "CHAR(3)": st.text(alphabet="abz", min_size=1, max_size=3),
    "VARCHAR": _TYPES["VARCHAR"],
    "UNSIGNED_DOUBLE": st.floats(min_value=0, max_value=1e100),
}


@st.composite
def _split_literal(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["str", "int", "neg", "exp", "dec", "hex"]))
    if kind == "str":
        return "'" + draw(st.text(alphabet="abgz01", min_size=1, max_size=3)) + "'"
    if kind == "int":
        return str(draw(st.integers(0, 3000)))
    if kind == "neg":
        return str(-draw(st.integers(1, 3000)))
    if kind == "exp":
        return f"{draw(st.integers(-9, 9))}e{draw(st.integers(-3, 4))}"
    if kind == "dec":
        return f"{draw(st.integers(-99, 99))}.{draw(st.integers(0, 99))}"
    return "X'" + draw(st.binary(min_size=1, max_size=3)).hex().upper() + "'"


@st.composite
def _edge_tables(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 4))
    multi = n >= 2 and draw(st.booleans())
    cols = []
    for i in range(n):
        sql_type = "VARCHAR" if multi and i == 0 else draw(st.sampled_from(sorted(_EDGE_PK_TYPES)))
        desc = draw(st.booleans()) and not (multi and i == 0)
        fixed = not (sql_type.startswith("VARCHAR") or sql_type.startswith("DECIMAL"))
        nullable = not fixed and i > 0 and draw(st.booleans())
        cols.append((f"C{i}", sql_type, desc, nullable))
    extra = [] if multi else [(f"X{i}", t) for i, t in enumerate(draw(st.lists(st.sampled_from(sorted(_INDEXABLE)), min_size=0, max_size=2)))]
    indexes = []
    for name, _ in extra:
        with_pk = draw(st.booleans())
        indexed = [(name, draw(st.booleans()))] + ([(cols[-1][0], draw(st.booleans()))] if with_pk else [])
        indexes.append(indexed)
    salt = None if multi else draw(st.sampled_from([None, None, 3]))
    splits = [] if salt else draw(st.lists(_split_literal(), max_size=3))
    return {"name": f"E{next(_COUNTER)}", "cols": cols, "extra": extra, "indexes": indexes, "salt": salt, "splits": splits, "multi": multi}


def _edge_ddl(t: dict[str, Any]) -> list[str]:
    defs = [f"{c} {ty}{'' if nullable else ' NOT NULL'}" for c, ty, _, nullable in t["cols"]]
    defs += [f"{c} {ty}" for c, ty in t["extra"]]
    pk = ", ".join(f"{c}{' DESC' if desc else ''}" for c, _, desc, _ in t["cols"])
    options = [f"SALT_BUCKETS={t['salt']}"] * bool(t["salt"]) + ["MULTI_TENANT=true"] * t["multi"]
    ddl = (
        f"CREATE TABLE {t['name']} ({', '.join(defs)}, V VARCHAR CONSTRAINT PK PRIMARY KEY ({pk}))"
        + (" " + ", ".join(options) if options else "")
        + (f" SPLIT ON ({', '.join(t['splits'])})" if t["splits"] else "")
    )
    out = [ddl]
    for i, indexed in enumerate(t["indexes"]):
        cols = ", ".join(f"{c}{' DESC' if d else ''}" for c, d in indexed)
        out.append(f"CREATE INDEX {t['name']}_I{i} ON {t['name']} ({cols})")
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(t=_edge_tables(), data=st.data())
def test_random_edge_tables_equal_phoenix(oracle: PhoenixOracle, t: dict[str, Any], data: st.DataObject) -> None:
    ddls = _edge_ddl(t)
    name = t["name"]
    oracle.execute(ddls[0])
    phoenix_bounds = sorted(end for _, end in oracle.regions(name)[:-1])
    if len(set(phoenix_bounds)) < len(phoenix_bounds):
        # HBase would refuse the table ("All split keys must be unique"); so does keyshape
        with pytest.raises(PhoenixDDLError, match="unique"):
            parse_ddl(ddls[0])
        return
    tables = {name: parse_ddl(ddls[0])}
    assert tables[name].region_boundaries() == phoenix_bounds, ddls[0]
    for ddl in ddls[1:]:
        try:
            oracle.execute(ddl)
        except PhoenixOracleError as exc:
            # connectionless Phoenix now and then fails to build an index ("Timestamp cannot be
            # negative": a scan time range of its fake clock), whatever the DDL: no index then
            assert "Timestamp cannot be negative" in str(exc), exc
            continue
        index = parse_ddl(ddl, tables)
        tables[index.name] = index
    types = {c[0]: c[1] for c in tables[name].columns}
    strategies = {**{c: _EDGE_PK_TYPES[ty] for c, ty, _, _ in t["cols"]}, **{c: _INDEXABLE[ty] for c, ty in t["extra"]}}
    nullable = {c for c, _, _, n in t["cols"] if n} | {c for c, _ in t["extra"]}
    for _ in range(3):
        row = {c: None if c in nullable and data.draw(st.booleans()) else data.draw(s) for c, s in strategies.items()}
        names = list(row) + ["V"]
        params = [to_param(types[c], row[c]) for c in row] + ["str:78"]
        try:
            theirs = oracle.keys(f"UPSERT INTO {name} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", *params)
        except PhoenixOracleError as exc:
            with pytest.raises(PhoenixKeyError):
                tables[name].key.encode({c: row[c] for c, _, _, _ in t["cols"]})
            assert any(w in str(exc).lower() for w in ("null", "exceed", "outofbounds", "numberformat")), exc
            continue
        for table_name, key_bytes in theirs.items():
            if table_name not in tables:
                continue  # an index whose CREATE INDEX the oracle failed (see above)
            key = tables[table_name].key
            try:
                ours = key.encode({c.name: row[c.name] for c in key.columns})
            except PhoenixKeyError as exc:
                # a whole double >= 2**53 in an index: Phoenix's DECIMAL depends on its JVM's
                # Double.toString, which keyshape refuses to guess
                assert "Double.toString" in str(exc) and table_name != name, exc
                continue
            assert ours == key_bytes, (ddls, table_name, row)
            if not any((c.desc or c.data_desc) and c.type.name == "DECIMAL" and c.type.scale is not None for c in key.columns):
                # (a DESC DECIMAL cut to its scale is written ASC and reads back as another number)
                assert key.encode(key.decode(ours)) == ours, (table_name, row)
        # Phoenix's own scan for the leading PK columns equal to the row's (stored) values
        key = tables[name].key
        stored = key.decode(theirs[name])
        k = data.draw(st.integers(1, len(t["cols"])))
        leading = {c: stored[c] for c, _, _, _ in t["cols"][:k]}
        if any(v is None for v in leading.values()) or any(c.type.name == "DECIMAL" and c.desc for c in key.columns[:k]):
            continue  # (a DESC DECIMAL cut to its scale reads back as another number: lint explains it)
        where = " AND ".join(f"{c} = ?" for c in leading)
        scans = oracle.ask("SCAN", f"SELECT /*+ NO_INDEX */ * FROM {name} WHERE {where}", *(to_param(types[c], v) for c, v in leading.items()))
        regions = oracle.regions(name)
        ranges = sorted(key.scan_ranges(**leading))
        assert clipped(ranges, regions) == clipped(phoenix_ranges(scans), regions), (ddls[0], leading)
        assert any(lo <= theirs[name] < (hi or b"\xff" * 64) for lo, hi in ranges), (ddls[0], leading)
