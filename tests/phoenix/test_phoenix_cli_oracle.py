"""The Phoenix CLI points of issue 30, each pinned against Phoenix 5.2.1 itself (the connectionless
oracle, tools/golden/phoenix/oracle.sh) and run through ``keyshape phoenix ...`` in-process:

- a global index on a MULTI_TENANT table (the tenant column leads its key) byte for byte, and a
  statement keyshape cannot read no longer breaks the other tables of its file;
- ARRAY and DEFAULT on non-key columns are accepted (Phoenix accepts them; the CREATE TABLE printed
  back is one Phoenix runs to the same columns); DEFAULT on a key column is refused in one line
  (Phoenix writes the default into the key);
- ``resalt`` of an unsalted table keeps its SPLIT ON in every bucket (the regions Phoenix makes);
- DECIMAL(p,s): Phoenix cuts extra fraction digits without an error; lint and ``key encode`` say so
  exactly when Phoenix stores another number;
- TIMESTAMP/DATE print as Phoenix's UTC date-time, which Phoenix's own literal and ``key encode``
  read back to the same key.
Marked ``phoenix``: needs a JDK and Maven."""

from __future__ import annotations

import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phoenix_oracle import PhoenixOracle, PhoenixOracleError, to_param

from keyshape.cli import main
from keyshape.phoenix import PhoenixTimestamp, create_table_sql, parse_ddl
from keyshape.phoenix.ddl import PhoenixDDLError, read_ddl_script
from keyshape.phoenix.lint import lint_phoenix, lint_values
from keyshape.phoenix.resalt import target_ddl
from keyshape.phoenix.schema import load_phoenix_schema

pytestmark = pytest.mark.phoenix

_COUNTER = itertools.count()
_SETTINGS = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def oracle(connectionless_oracle: PhoenixOracle) -> PhoenixOracle:
    """The session's connectionless Phoenix JVM (tests/phoenix_fixture.py), shared with the other
    Phoenix modules: tables here are named apart from theirs."""
    return connectionless_oracle


def cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["phoenix", *args])
    return r.exit_code, r.stdout, r.stderr


def _name(prefix: str) -> str:
    return f"KSX{prefix}{next(_COUNTER)}"


# --- 1. global indexes on MULTI_TENANT tables ----------------------------------------------------

_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "VARCHAR": st.text(alphabet="abz\u00e9", min_size=1, max_size=4),
    "INTEGER": st.integers(-(2**31), 2**31 - 1),
    "BIGINT": st.integers(-(2**63), 2**63 - 1),
    "CHAR(2)": st.text(alphabet="xy", min_size=2, max_size=2),
    "DECIMAL(6,2)": st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=-9999, max_value=9999),
    "TIMESTAMP": st.builds(PhoenixTimestamp, st.integers(0, 2**42), st.integers(0, 999_999)),
}


# (4 examples: connectionless Phoenix takes ~5 s to build each index)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_multi_tenant_global_index_keys_equal_phoenix(oracle: PhoenixOracle, data: st.DataObject) -> None:
    name = _name("MT")
    tenant_type = data.draw(st.sampled_from(["VARCHAR", "CHAR(2)"]))
    pk_types = data.draw(st.lists(st.sampled_from(["VARCHAR", "INTEGER", "BIGINT", "DECIMAL(6,2)"]), min_size=1, max_size=2))
    extra = data.draw(st.lists(st.sampled_from(["VARCHAR", "INTEGER", "BIGINT", "TIMESTAMP"]), min_size=1, max_size=2))
    salt = data.draw(st.sampled_from([None, 3]))
    pk = [("TID", tenant_type)] + [(f"K{i}", t) for i, t in enumerate(pk_types)]
    descs = [False] + [data.draw(st.booleans()) for _ in pk_types]
    defs = [f"{c} {t} NOT NULL" for c, t in pk] + [f"X{i} {t}" for i, t in enumerate(extra)]
    order = ", ".join(f"{c}{' DESC' if d else ''}" for (c, _), d in zip(pk, descs))
    options = "MULTI_TENANT=true" + (f", SALT_BUCKETS={salt}" if salt else "")
    ddl = f"CREATE TABLE {name} ({', '.join(defs)}, V VARCHAR CONSTRAINT PK PRIMARY KEY ({order})) {options}"
    candidates = [f"X{i}" for i in range(len(extra))] + [c for c, _ in pk[1:]]
    indexed = data.draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=2, unique=True))
    index_cols = ", ".join(c + (" DESC" if data.draw(st.booleans()) else "") for c in indexed)
    index_ddl = f"CREATE INDEX {name}_I ON {name} ({index_cols})"
    oracle.execute(ddl)
    script = read_ddl_script(f"{ddl};\n{index_ddl};")
    try:
        oracle.execute(index_ddl)
    except PhoenixOracleError as exc:
        # connectionless Phoenix now and then fails to build an index (its fake clock): the index
        # exists all the same when it says only this
        assert "Timestamp cannot be negative" in str(exc), exc
    assert not script.skipped, script.skipped
    types = {c: t for c, t in pk} | {f"X{i}": t for i, t in enumerate(extra)}
    tables = script.tables
    for _ in range(3):
        row = {c: data.draw(_VALUES[t]) for c, t in types.items()}
        row.update({c: None for c in types if c.startswith("X") and data.draw(st.booleans())})
        params = [to_param(_type(types[c]), row[c]) for c in types]
        theirs = oracle.keys(f"UPSERT INTO {name} ({', '.join(types)}) VALUES ({', '.join('?' * len(types))})", *params)
        assert set(theirs) == {name, f"{name}_I"}, theirs
        for table_name, key_bytes in theirs.items():
            key = tables[table_name].key
            assert key.encode({c.name: row[c.name] for c in key.columns}) == key_bytes, (ddl, index_ddl, table_name, row)
    # Phoenix refuses the tenant column in the index (it leads already); so does keyshape, in one line
    with pytest.raises(PhoenixOracleError, match="duplicate column"):
        oracle.execute(f"CREATE INDEX {name}_T ON {name} (TID, X0)")
    with pytest.raises(PhoenixDDLError, match="tenant column"):
        read_ddl_script(f"{ddl};\nCREATE INDEX {name}_T ON {name} (TID, X0);").pick(f"{name}_T")


def _type(sql: str) -> Any:
    return parse_ddl(f"CREATE TABLE T (K {sql} NOT NULL PRIMARY KEY)").key.columns[0].type


def test_an_unreadable_statement_leaves_the_other_tables_of_the_file_working(tmp_path: Path) -> None:
    ddl = tmp_path / "t.sql"
    ddl.write_text(
        "CREATE TABLE MT (TID VARCHAR NOT NULL, K INTEGER NOT NULL, X VARCHAR CONSTRAINT PK PRIMARY KEY (TID, K)) MULTI_TENANT=true;\n"
        "CREATE INDEX MTI ON MT (X);\n"
        "CREATE LOCAL INDEX LX ON MT (X);\n"
        "CREATE TABLE O (ID BIGINT NOT NULL PRIMARY KEY, V VARCHAR);\n"
        "CREATE VIEW OV (W INTEGER) AS SELECT * FROM O;\n"
        "CREATE INDEX OVI ON OV (W);\n"
    )
    # bytes from Phoenix 5.2.1 (the oracle): MT's index row for TID='acme', K=7, X='hi'
    assert cli("key", "encode", str(ddl), "--table", "MTI", "TID=acme", "K=7", "X=hi", "--hex") == (0, "61636d650068690080000007\n", "")
    code, out, err = cli("key", "encode", str(ddl), "--table", "O", "ID=1", "--hex")
    assert (code, out, err) == (0, "8000000000000001\n", "")
    for table in ("MT", "O"):
        assert cli("lint", str(ddl), "--table", table)[0] == 0
    code, out, err = cli("ddl", str(ddl), "--table", "LX")
    assert code != 0 and err.strip().splitlines() == [
        f"error: {ddl}: LX: local indexes are not supported (their keys start with the region's start key)"
    ]
    code, out, err = cli("key", "encode", str(ddl), "--table", "OVI", "W=1")
    assert code != 0 and out == ""
    assert err.strip().splitlines() == [
        f"error: {ddl}: OVI: index on view OV: a view index (its keys lead with a view-index id, "
        "in the physical table's _IDX_ table) is not supported"
    ]


# --- 2. ARRAY and DEFAULT on non-key columns -------------------------------------------------------


def test_array_and_default_on_non_key_columns_are_accepted_as_phoenix_accepts_them(oracle: PhoenixOracle, tmp_path: Path) -> None:
    name = _name("DF")
    ddl = (
        f"CREATE TABLE {name} (K INTEGER NOT NULL, J VARCHAR NOT NULL, V VARCHAR DEFAULT 'a', A INTEGER ARRAY, B VARCHAR[], "
        "C CHAR(3)[5], D INTEGER ARRAY[3] DEFAULT ARRAY[1,2], E BIGINT DEFAULT 1+2 CONSTRAINT PK PRIMARY KEY (K, J DESC))"
    )
    oracle.execute(ddl)
    table = parse_ddl(ddl)
    theirs = oracle.keys(f"UPSERT INTO {name} (K, J, A, D) VALUES (?, ?, ARRAY[5], ARRAY[7])", "i4:-3", "str:" + b"xy".hex())[name]
    assert table.key.encode({"K": -3, "J": "xy"}) == theirs
    # the CREATE TABLE printed back is one Phoenix runs to the same columns (types, arrays, nullability)
    again = create_table_sql(table).replace(f"CREATE TABLE {name} ", f"CREATE TABLE {name}_2 ", 1)
    oracle.execute(again)
    assert [c.split(":", 1)[1] for c in oracle.ask("COLUMNS", f"{name}_2")] == [c.split(":", 1)[1] for c in oracle.ask("COLUMNS", name)]
    assert "D INTEGER ARRAY[3] DEFAULT ARRAY[1,2]" in again and "E BIGINT DEFAULT 1+2" in again
    path = tmp_path / "df.sql"
    path.write_text(ddl + ";\n")
    assert cli("key", "encode", str(path), "K=-3", "J=xy", "--hex") == (0, theirs.hex() + "\n", "")


def test_default_on_a_key_column_is_refused_in_one_line_because_phoenix_writes_it_into_the_key(oracle: PhoenixOracle, tmp_path: Path) -> None:
    name = _name("DK")
    ddl = f"CREATE TABLE {name} (K INTEGER NOT NULL, J VARCHAR DEFAULT 'zz', V VARCHAR CONSTRAINT PK PRIMARY KEY (K, J))"
    oracle.execute(ddl)
    # what keyshape would have to model: J left out of the UPSERT is 'zz' in the key, an explicit NULL is not
    assert oracle.keys(f"UPSERT INTO {name} (K, V) VALUES (1, 'b')")[name] == b"\x80\x00\x00\x01zz"
    assert oracle.keys(f"UPSERT INTO {name} (K, J, V) VALUES (1, NULL, 'b')")[name] == b"\x80\x00\x00\x01"
    path = tmp_path / "dk.sql"
    path.write_text(ddl + ";\n")
    code, out, err = cli("key", "encode", str(path), "K=1")
    assert code != 0 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "PRIMARY KEY column J has DEFAULT 'zz'" in lines[0], err
    with pytest.raises(PhoenixDDLError, match="ARRAY"):
        parse_ddl("CREATE TABLE X (K INTEGER NOT NULL, A INTEGER ARRAY CONSTRAINT PK PRIMARY KEY (K, A))")


# --- 3. resalt keeps SPLIT ON --------------------------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(
    points=st.lists(st.integers(-1000, 1000), min_size=1, max_size=3, unique=True),
    texts=st.lists(st.text(alphabet="abz", min_size=1, max_size=2), max_size=2, unique=True),
    buckets=st.integers(1, 5),
    rows=st.lists(st.tuples(st.integers(-2000, 2000), st.text(alphabet="abz", min_size=1, max_size=3)), min_size=1, max_size=4),
)
def test_resalt_of_an_unsalted_table_keeps_its_split_on_in_every_bucket(
    oracle: PhoenixOracle, points: list[int], texts: list[str], buckets: int, rows: list[tuple[int, str]]
) -> None:
    name = _name("RS")
    literals = [f"CAST({p} AS BIGINT)" for p in points] + [f"'{t}'" for t in texts]
    ddl = (
        f"CREATE TABLE {name} (ID BIGINT NOT NULL, N VARCHAR NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (ID, N)) SPLIT ON ({', '.join(literals)})"
    )
    oracle.execute(ddl)
    source = parse_ddl(ddl)
    target_sql = target_ddl(source, f"{name}_R", buckets)
    assert "SPLIT ON" in target_sql
    oracle.execute(target_sql)
    target = parse_ddl(target_sql)
    regions = oracle.regions(f"{name}_R")
    assert target.region_boundaries() == sorted(end for _, end in regions[:-1])  # Phoenix makes these regions
    assert len(regions) == buckets * (len(source.region_boundaries()) + 1)
    source_bounds = source.region_boundaries()
    for ident, n in rows:
        theirs = oracle.keys(f"UPSERT INTO {name}_R (ID, N, V) VALUES (?, ?, 'v')", f"i8:{ident}", "str:" + n.encode().hex())[f"{name}_R"]
        rest = source.key.encode({"ID": ident, "N": n})
        assert theirs[1:] == rest
        # the row's region within its bucket is the one it had in the source table
        bucket_starts = set(target.key.salt_boundaries())
        in_bucket = [b for b in target.region_boundaries() if b[:1] == theirs[:1] and b not in bucket_starts]
        assert sum(b <= theirs for b in in_bucket) == sum(b <= rest for b in source_bounds), (ddl, ident, n)


def test_resalt_cli_prints_the_split_points_and_says_what_became_of_them(tmp_path: Path) -> None:
    path = tmp_path / "seq.sql"
    path.write_text("CREATE TABLE SEQ (ID BIGINT NOT NULL PRIMARY KEY, V VARCHAR) SPLIT ON (CAST(100 AS BIGINT));\n")
    code, out, err = cli("resalt", str(path), "--buckets", "2", "--target", "SEQ2")
    assert code == 0, err
    assert "-- SEQ's SPLIT ON (1 point) is kept in every bucket" in out
    # 100 after each salt byte, and bucket 1's start padded to the key's fixed width (as Phoenix pads it)
    assert out.rstrip().endswith("SALT_BUCKETS=2 SPLIT ON (X'008000000000000064', X'010000000000000000', X'018000000000000064');")


# --- 4. DECIMAL(p,s) cut to its scale ----------------------------------------------------------------


@_SETTINGS
@given(value=st.decimals(allow_nan=False, allow_infinity=False, places=4, min_value=-99, max_value=99))
def test_decimal_values_phoenix_cuts_are_warned_about_exactly_when_phoenix_stores_another_number(
    oracle: PhoenixOracle, tmp_path_factory: pytest.TempPathFactory, value: Decimal
) -> None:
    table = "KSXDEC"
    ddl = f"CREATE TABLE {table} (K DECIMAL(4,2) NOT NULL PRIMARY KEY, V VARCHAR)"
    oracle.execute(ddl.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
    parsed = parse_ddl(ddl)
    theirs = oracle.keys(f"UPSERT INTO {table} (K, V) VALUES (?, 'x')", f"dec:{value}")[table]  # no error: Phoenix cuts
    assert parsed.key.encode({"K": value}) == theirs
    (stored,) = oracle.decode(table, theirs)
    warned = lint_values(parsed.key, {"K": value})
    assert bool(warned) == (stored != value), (value, stored)
    if warned:
        assert f"is stored as {stored}" in warned[0].message
    path = tmp_path_factory.mktemp("dec") / "d.sql"
    path.write_text(ddl + ";\n")
    code, out, err = cli("key", "encode", str(path), f"K={value}", "--hex")
    assert (code, out) == (0, theirs.hex() + "\n")
    assert ("phoenix" not in err.lower()) == (stored == value) and (not err or err.startswith("warning: K=")), err


def test_lint_warns_that_a_decimal_key_column_cuts_extra_fraction_digits(tmp_path: Path) -> None:
    findings = lint_phoenix(parse_ddl("CREATE TABLE D (K DECIMAL(4,2) NOT NULL PRIMARY KEY, V VARCHAR)"))
    assert [f.code for f in findings] == ["phoenix-decimal-scale-cut"]
    assert "1.239 stores 1.23" in findings[0].message
    assert not lint_phoenix(parse_ddl("CREATE TABLE D (K DECIMAL NOT NULL PRIMARY KEY, V DECIMAL(4,2))"))
    path = tmp_path / "d.sql"
    path.write_text("CREATE TABLE D (K DECIMAL(4,2) NOT NULL PRIMARY KEY);\n")
    code, out, _ = cli("lint", str(path))
    assert code == 0 and "phoenix-decimal-scale-cut" in out and "0 error(s), 1 warning(s)" in out
    code, out, err = cli("key", "ranges", str(path), "K=-1.239")
    assert code == 0 and out.count("\t") == 1
    assert err.startswith("warning: K=-1.239 is stored as -1.23: Phoenix cuts DECIMAL(4,2) values to 2 fraction digits"), err


# --- 5. TIMESTAMP and DATE printed as Phoenix's UTC date-time and read back -------------------------


@_SETTINGS
@given(
    millis=st.integers(-(2**40), 2**43),
    nanos=st.integers(0, 999_999),
    j=st.text(alphabet="ab", min_size=1, max_size=2),
)
def test_timestamps_print_as_phoenix_datetime_text_that_phoenix_and_keyshape_read_back(
    oracle: PhoenixOracle, tmp_path_factory: pytest.TempPathFactory, millis: int, nanos: int, j: str
) -> None:
    table = "KSXTS"
    ddl = f"CREATE TABLE {table} (T TIMESTAMP NOT NULL, D DATE NOT NULL, J VARCHAR NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (T DESC, D, J))"
    oracle.execute(ddl.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
    path = tmp_path_factory.mktemp("ts") / "ts.sql"
    path.write_text(ddl + ";\n")
    key = oracle.keys(
        f"UPSERT INTO {table} (T, D, J, V) VALUES (?, ?, ?, 'x')",
        f"ts:{millis}:{(millis % 1000) * 1_000_000 + nanos}",
        f"date:{millis}",
        "str:" + j.encode().hex(),
    )[table]
    code, out, err = cli("key", "decode", str(path), key.hex(), "--hex")
    assert code == 0, err
    printed = dict(line.split("=", 1) for line in out.splitlines())
    assert printed["T"].endswith(f"{(millis % 1000) * 1_000_000 + nanos:09d}") and " " in printed["T"], printed
    assert printed["D"].endswith(f".{millis % 1000:03d}") and len(printed["D"]) == 23, printed
    # Phoenix's own literals read the printed text (UTC) back to the same key ...
    again = oracle.keys(
        f"UPSERT INTO {table} (T, D, J, V) VALUES (TIMESTAMP '{printed['T']}', DATE '{printed['D']}', ?, 'x')", "str:" + j.encode().hex()
    )
    assert again[table] == key, printed
    # ... and so does keyshape, COLUMN=VALUE as printed
    assert cli("key", "encode", str(path), *(f"{c}={v}" for c, v in printed.items()), "--hex") == (0, key.hex() + "\n", "")
    # ... and so does the table as a key schema (records from a CSV or a JSON line hold such text)
    assert load_phoenix_schema(path).encode(printed) == key
