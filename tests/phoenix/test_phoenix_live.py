"""Phoenix 5.2.1 on the project's HBase 2.6.4 (tools/hbase/phoenix_server.py): rows written through
Phoenix's JDBC driver are read back by keyshape over HBase's own RPC and decoded equal, SYSTEM.CATALOG
gives the same schema as the DDL, the real regions equal keyshape's, and a re-salt 4 -> 8 keeps
every row (checked by keyshape and by Phoenix itself).

KEYSHAPE_PHOENIX_URL=host:port uses a running Phoenix-enabled HBase instead of starting one."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from phoenix_oracle import PhoenixOracle, from_param, to_param

from keyshape.phoenix import PhoenixTable, PhoenixTimestamp, parse_ddl
from keyshape.phoenix.catalog import catalog_table
from keyshape.phoenix.resalt import resalt, target_ddl
from keyshape.store.hbase import HBaseStore

pytestmark = [pytest.mark.phoenix, pytest.mark.hbase]


@pytest.fixture(scope="module")
def jdbc(phoenix_url: str) -> Iterator[PhoenixOracle]:
    o = PhoenixOracle(f"jdbc:phoenix:{phoenix_url}")
    yield o
    o.close()


@pytest.fixture(scope="module")
def store(phoenix_url: str) -> Iterator[HBaseStore]:
    s = HBaseStore.from_url(phoenix_url)
    yield s
    s.close()


def _create(jdbc: PhoenixOracle, ddl: str, tables: dict[str, PhoenixTable] | None = None) -> PhoenixTable:
    jdbc.execute(ddl)
    return parse_ddl(ddl, tables)


def _upsert(jdbc: PhoenixOracle, table: PhoenixTable, row: dict[str, Any]) -> None:
    types = {c[0]: c[1] for c in table.columns}
    cols = list(row)
    params = [to_param(types[c], row[c]) for c in cols]
    jdbc.ask("GENERATE", f"UPSERT INTO {table.name} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", "1", *params)


MIXED = (
    "CREATE TABLE LIVE_MIXED (T VARCHAR NOT NULL, ID BIGINT NOT NULL, AT TIMESTAMP NOT NULL, "
    "PRICE DECIMAL(12,2), CODE CHAR(3) NOT NULL, FLAG BOOLEAN NOT NULL, NOTE VARCHAR, "
    "CONSTRAINT PK PRIMARY KEY (T, ID DESC, AT, PRICE DESC, CODE, FLAG, NOTE DESC)) SALT_BUCKETS=6"
)


def _mixed_rows(n: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    rows = []
    for _ in range(n):
        row: dict[str, Any] = {
            "T": rng.choice(["acme", "zeta", "ü-corp"]),
            "ID": rng.randint(-(10**12), 10**12),
            "AT": PhoenixTimestamp(rng.randint(0, 2**41), rng.randint(0, 999_999)),
            "CODE": rng.choice(["ab", "xyz", "q"]),
            "FLAG": rng.random() < 0.5,
        }
        if rng.random() < 0.7:
            row["PRICE"] = Decimal(rng.randint(-(10**8), 10**8)) / 100
        if rng.random() < 0.5:
            row["NOTE"] = rng.choice(["n", "note", "zz"])
        rows.append(row)
    return rows


def test_rows_written_by_phoenix_decode_equal(jdbc: PhoenixOracle, store: HBaseStore) -> None:
    table = _create(jdbc, MIXED)
    rows = _mixed_rows(60)
    for row in rows:
        _upsert(jdbc, table, row)
    seen = []
    for key, _ in store.scan(table.hbase_table):
        assert table.key.encode({k: v for k, v in table.key.decode(key).items() if v is not None}) == key
        seen.append(table.key.decode(key))

    def norm(r: dict[str, Any]) -> tuple:
        return tuple((c.name, r.get(c.name).rstrip(" ") if isinstance(r.get(c.name), str) else r.get(c.name)) for c in table.key.columns)

    assert sorted(map(norm, seen), key=repr) == sorted(map(norm, rows), key=repr)
    # Phoenix reads the same values back through SQL.
    count = from_param(jdbc.ask("QUERY", f"SELECT COUNT(*) FROM {table.name}")[0])
    assert count == len(seen) == len({norm(r) for r in rows})


@pytest.mark.parametrize(
    "ddl",
    [
        MIXED.replace("LIVE_MIXED", "CAT_MIXED"),
        "CREATE TABLE CAT_UNS (A UNSIGNED_INT NOT NULL, B UNSIGNED_LONG NOT NULL, C UNSIGNED_TIMESTAMP NOT NULL, "
        "D UNSIGNED_DOUBLE, V VARCHAR(20) CONSTRAINT PK PRIMARY KEY (A DESC, B, C))",
        "CREATE TABLE CAT_MT (TENANT_ID VARCHAR NOT NULL, K BINARY(4) NOT NULL, V VARCHAR "
        "CONSTRAINT PK PRIMARY KEY (TENANT_ID, K DESC)) MULTI_TENANT=true",
        "CREATE TABLE S.CAT_SCHEMA (D DATE NOT NULL PRIMARY KEY, F FLOAT, X TINYINT)",
        "CREATE TABLE CAT_MT_INT (TID INTEGER NOT NULL, K VARCHAR NOT NULL, V VARCHAR "
        "CONSTRAINT PK PRIMARY KEY (TID DESC, K)) MULTI_TENANT=true, SALT_BUCKETS=3",
        "CREATE TABLE CAT_MT_SMALL (TID SMALLINT NOT NULL, K BIGINT NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (TID, K)) MULTI_TENANT=true",
    ],
)
def test_catalog_import_equals_ddl_import(jdbc: PhoenixOracle, store: HBaseStore, ddl: str) -> None:
    from_ddl = _create(jdbc, ddl)
    from_catalog = catalog_table(store, from_ddl.name)
    assert from_catalog.key == from_ddl.key
    assert from_catalog.columns == from_ddl.columns
    assert from_catalog.options.get("SALT_BUCKETS") == from_ddl.options.get("SALT_BUCKETS")


@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE TABLE REG_SALT (A VARCHAR NOT NULL, N BIGINT NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (A, N)) SALT_BUCKETS=8",
        "CREATE TABLE REG_SPLIT (K BIGINT NOT NULL PRIMARY KEY, V VARCHAR) SPLIT ON (100, CAST(200 AS BIGINT), -5)",
        "CREATE TABLE REG_RAW (K VARCHAR NOT NULL PRIMARY KEY, V VARCHAR) SALT_BUCKETS=4 SPLIT ON ('m')",
        "CREATE TABLE REG_PAD (A CHAR(3) NOT NULL, B VARCHAR NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (A, B)) SALT_BUCKETS=5",
    ],
)
def test_real_region_boundaries_equal_keyshape(jdbc: PhoenixOracle, store: HBaseStore, ddl: str) -> None:
    table = _create(jdbc, ddl)
    live = [r.start for r in store.regions(table.hbase_table)][1:]
    assert live == table.region_boundaries()


def test_resalt_4_to_8_keeps_every_row(jdbc: PhoenixOracle, store: HBaseStore) -> None:
    src, dst = f"RS_SRC_{os.getpid()}", f"RS_DST_{os.getpid()}"
    source = _create(
        jdbc,
        f"CREATE TABLE {src} (U VARCHAR NOT NULL, ID BIGINT NOT NULL, AMOUNT DECIMAL(10,2), "
        "NAME VARCHAR CONSTRAINT PK PRIMARY KEY (U, ID DESC)) SALT_BUCKETS=4",
    )
    jdbc.ask(
        "GENERATE", f"UPSERT INTO {src} (U, ID, AMOUNT, NAME) VALUES (?, ?, ?, ?)", "50000", "txt:user{i}", "i8:{i}", "dec:{i}.25", "txt:name-{i}"
    )
    ddl = target_ddl(source, dst, 8)
    target = _create(jdbc, ddl)
    assert target.key.salt_buckets == 8 and target.key.columns == source.key.columns
    report = resalt(store, source, target)
    assert report.copied == 50_000
    assert report.verified, (report.source, report.target)
    assert report.source.rows == 50_000
    # Phoenix itself reads the copy: same count, same rows.
    for sql_table in (src, dst):
        assert from_param(jdbc.ask("QUERY", f"SELECT COUNT(*) FROM {sql_table}")[0]) == 50_000
    rng = random.Random(3)
    for i in rng.sample(range(50_000), 25):
        q = "SELECT U, ID, AMOUNT, NAME FROM {} WHERE U = ? AND ID = ?"
        params = (to_param(source.columns[0][1], f"user{i}"), f"i8:{i}")
        assert jdbc.ask("QUERY", q.format(dst), *params) == jdbc.ask("QUERY", q.format(src), *params) != []
    # every bucket of the new table holds rows, and every key carries its new salt
    buckets = {key[0] for key, _ in store.scan(dst)}
    assert buckets == set(range(8))


def test_resalt_of_an_integer_tenant_table_written_through_both_connections(jdbc: PhoenixOracle, store: HBaseStore) -> None:
    # issue 44: a DESC INTEGER tenant column; tenant 7 writes through its own connection (the
    # tenant id's ascending bytes), tenant 9 through the global one (inverted): both re-salt
    src, dst = f"MT_SRC_{os.getpid()}", f"MT_DST_{os.getpid()}"
    ddl = f"CREATE TABLE {src} (TID INTEGER NOT NULL, ID BIGINT NOT NULL, NAME VARCHAR CONSTRAINT PK PRIMARY KEY (TID DESC, ID))"
    source = _create(jdbc, ddl + " MULTI_TENANT=true, SALT_BUCKETS=3")
    jdbc.ask("TENANT", "7", "GENERATE", f"UPSERT INTO {src} (ID, NAME) VALUES (?, ?)", "300", "i8:{i}", "txt:t7-{i}")
    jdbc.ask("GENERATE", f"UPSERT INTO {src} (TID, ID, NAME) VALUES (?, ?, ?)", "200", "i4:9", "i8:{i}", "txt:g9-{i}")
    keys = [key for key, _ in store.scan(source.hbase_table)]
    assert len(keys) == 500
    tenant_written = {source.key.encode({"TID": 7, "ID": i}, tenant_connection=True) for i in range(300)}
    global_written = {source.key.encode({"TID": 9, "ID": i}) for i in range(200)}
    assert set(keys) == tenant_written | global_written
    target = _create(jdbc, target_ddl(source, dst, 6))
    report = resalt(store, source, target)
    assert report.copied == 500 and report.verified, (report.source, report.target)
    # Phoenix reads the copy as it read the source, through both kinds of connection
    for sql_table in (src, dst):
        assert jdbc.ask("TENANT", "7", "QUERY", f"SELECT COUNT(*) FROM {sql_table}") == ["i8:300"]
        assert jdbc.ask("QUERY", f"SELECT COUNT(*) FROM {sql_table} WHERE TID = 9") == ["i8:200"]
    assert {key[0] for key, _ in store.scan(dst)} == set(range(6))


def _analyze(ddl_path: Path, url: str, table: str, *extra: str) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "keyshape.cli", "analyze", str(ddl_path), "--hbase", url, "--table", table, *extra],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_live_analysis_flags_regions_that_hold_several_salt_buckets(jdbc: PhoenixOracle, phoenix_url: str, tmp_path: Path) -> None:
    name = f"LA_RAW_{os.getpid()}"
    ddl = f"CREATE TABLE {name} (K VARCHAR NOT NULL PRIMARY KEY, V VARCHAR) SALT_BUCKETS=4 SPLIT ON ('m')"
    _create(jdbc, ddl)
    jdbc.ask("GENERATE", f"UPSERT INTO {name} (K, V) VALUES (?, ?)", "2000", "txt:key{i}", "txt:v")
    path = tmp_path / "raw.sql"
    path.write_text(ddl + ";\n")
    out = _analyze(path, phoenix_url, name)
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "holds salt buckets 00..03" in text  # the first region [, 'm') holds every bucket
    assert "Salt buckets: the busiest" in text


def test_live_analysis_finds_the_hot_spot_of_an_unsalted_index_on_a_monotonic_column(
    jdbc: PhoenixOracle, store: HBaseStore, phoenix_url: str, tmp_path: Path
) -> None:
    data_table, index_table = f"LA_DATA_{os.getpid()}", f"LA_BY_CREATED_{os.getpid()}"
    data_ddl = f"CREATE TABLE {data_table} (ID BIGINT NOT NULL PRIMARY KEY, CREATED DATE, V VARCHAR) SALT_BUCKETS=4"
    tables = {data_table: _create(jdbc, data_ddl)}
    # An unsalted index pre-split in four at CREATED = 2000, 4000, 6000 s (binary split points from
    # keyshape: a nullable DATE is a DECIMAL in the index, so integer literals would split wrongly).
    plain = parse_ddl(f"CREATE INDEX {index_table} ON {data_table} (CREATED) SALT_BUCKETS=0", tables)
    points = plain.key.split_points([{"CREATED": Decimal(ms)} for ms in (2_000_000, 4_000_000, 6_000_000)])
    index_ddl = f"CREATE INDEX {index_table} ON {data_table} (CREATED) SALT_BUCKETS=0 SPLIT ON (" + ", ".join(f"X'{p.hex()}'" for p in points) + ")"
    index = _create(jdbc, index_ddl, tables)
    ddls = [data_ddl, index_ddl]
    jdbc.ask("GENERATE", f"UPSERT INTO {data_table} (ID, CREATED, V) VALUES (?, ?, ?)", "8000", "i8:{i}", "date:{i}000", "txt:v")
    regions = store.regions(index.hbase_table)
    assert [r.start for r in regions][1:] == index.region_boundaries()
    counts = [sum(1 for _ in store.scan(index.hbase_table, r.start, r.end)) for r in regions]
    assert counts == [2000, 2000, 2000, 2000]
    path = tmp_path / "tables.sql"
    path.write_text(";\n".join(ddls) + ";\n")
    # The data table itself is salted: its writes spread.
    data = _analyze(path, phoenix_url, data_table)
    assert data.returncode == 0, data.stderr
    assert "HOTSPOT" not in data.stdout
    # The index's rows sit evenly in its regions, but in CREATED order every write went to one region.
    out = _analyze(path, phoenix_url, index_table, "--time-field", "CREATED")
    assert out.returncode == 0, out.stderr
    assert "HOTSPOT" in out.stdout, out.stdout
