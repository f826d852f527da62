"""``keyshape get``, ``keyshape index lookup|repair``, ``keyshape ids take|show`` and ``create``
with index and counter tables: results on a real HBase, one error line for each bad input."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from keyshape.cli import main
from keyshape.read import IndexedWriter
from keyshape.schema import KeySchema
from keyshape.store import open_store

RECORDS = Path(__file__).resolve().parents[1] / "data" / "records.toml"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r.exit_code, r.stdout, r.stderr


def one_error(*args: str) -> str:
    code, out, err = invoke(*args)
    assert code != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def unique_schema(tmp_path: Path) -> Path:
    tag = uuid.uuid4().hex[:8]
    text = RECORDS.read_text().replace('"rec_', f'"rec{tag}_')
    path = tmp_path / "records.toml"
    path.write_text(text)
    return path


def test_dry_run_prints_every_table() -> None:
    code, out, _ = invoke("create", RECORDS, "--dry-run")
    assert code == 0
    assert [line.split(",")[0] for line in out.splitlines()] == ["create 'rec_orders'", "create 'rec_orders_by_product'", "create 'rec_ids'"]
    assert "{NAME => 'i'" in out and "{NAME => 'c'" in out  # the index's and the counter's families
    assert out.splitlines()[1].endswith("{SPLITS => ['01']}")  # one region per bucket of the index's mod 2


@pytest.mark.parametrize(
    "args,expected",
    [
        (["get", RECORDS, "user_id=u1"], "no value for key field 'order_id'"),
        (["get", RECORDS, "user_id=", "order_id=1"], "no value for key field 'user_id'"),
        (["get", RECORDS, "user_id=u1", "order_id=x"], "field 'order_id' is int64; cannot use 'x'"),
        (["get", RECORDS, "bogus=1"], "no field 'bogus' in the key"),
        (["get", RECORDS, "user_id=u1", "user_id=u2", "order_id=1"], "field 'user_id' given twice"),
        (["index", "lookup", RECORDS, "nope"], "no index 'nope'"),
        (["index", "lookup", RECORDS, "by_product", "product_id="], "no value in 'product_id='"),
        (["index", "lookup", RECORDS, "by_product", "user_id=u1"], "no field 'user_id'"),
        (["index", "repair", RECORDS, "nope"], "no index 'nope'"),
        (["ids", "take", RECORDS, "nope"], "no counter 'nope'"),
        (["ids", "take", RECORDS, "order_id", "-n", "2.5"], "'2.5' is not a valid integer"),
        (["get", RECORDS, "user_id=u1", "order_id=1", "--hbase", "nosuchscheme://x"], "unknown store"),
    ],
)
def test_bad_input_gives_one_line(args: list[Any], expected: str) -> None:
    assert expected in one_error(*args)


def test_csv_with_a_missing_value_names_the_line(tmp_path: Path) -> None:
    f = tmp_path / "keys.csv"
    f.write_text("user_id,order_id\nu1,1\nu2,\n")
    assert "line 3: no value for key field 'order_id'" in one_error("get", RECORDS, "--csv", f)
    f.write_text("user,order_id\nu1,1\n")
    assert "header lacks key field(s) user_id" in one_error("get", RECORDS, "--csv", f)


@pytest.mark.hbase
def test_commands_on_hbase(hbase: Any, tmp_path: Path) -> None:
    path = unique_schema(tmp_path)
    schema = KeySchema.load(path)
    code, out, err = invoke("create", path, "--hbase", hbase.url)
    assert code == 0, err
    assert "index by_product table" in out and "counter order_id table" in out
    store = open_store(hbase.url)
    try:
        with IndexedWriter(store, schema) as w:
            for i in range(12):
                w.put({"user_id": f"u{i % 3}", "order_id": i, "product_id": f"p{i % 2}"}, {b"d:v": b"%d" % i})
        csv = tmp_path / "keys.csv"
        csv.write_text("user_id,order_id,note\nu0,0,a\nu1,4,b\nu2,99,gone\n")
        code, out, err = invoke("get", path, "--csv", csv, "--hbase", hbase.url)
        assert code == 0, err
        assert "2 rows for 3 record(s)" in out and "not found: user_id=u2 order_id=99" in err
        code, out, err = invoke("get", path, "user_id=u1", "order_id=4", "--hbase", hbase.url)
        assert "1 rows for 1 record(s)" in out and "d:v=4" in out

        code, out, _ = invoke("index", "lookup", path, "by_product", "product_id=p1", "--hbase", hbase.url)
        assert code == 0 and "by by_product: 6 rows" in out
        code, out, _ = invoke("index", "repair", path, "by_product", "--check", "--hbase", hbase.url)
        assert code == 0 and out.strip().endswith("consistent")
        victim = next(iter(store.scan(schema.table.full_name)))[0]
        store.delete(schema.table.full_name, victim)  # behind the index's back: one dangling row
        code, out, _ = invoke("index", "repair", path, "by_product", "--check", "--hbase", hbase.url)
        assert code == 1 and "dangling: 1" in out and out.strip().endswith("inconsistent")
        code, out, _ = invoke("index", "repair", path, "by_product", "--hbase", hbase.url)
        assert code == 0 and "dangling: 1 (deleted)" in out
        code, out, _ = invoke("index", "repair", path, "by_product", "--check", "--hbase", hbase.url)
        assert code == 0

        code, out, _ = invoke("ids", "take", path, "order_id", "-n", "3", "--hbase", hbase.url)
        assert code == 0 and out.split() == ["1", "2", "3"]
        code, out, _ = invoke("ids", "take", path, "order_id", "-n", "2", "--hbase", hbase.url)
        assert out.split() == ["4", "5"]
        code, out, _ = invoke("ids", "show", path, "order_id", "--hbase", hbase.url)
        assert out.strip() == "5"
        line = one_error("ids", "take", path, "order_id", "--floor", "10", "--hbase", hbase.url)
        assert "went back" in line
    finally:
        from keyshape.schema.ddl import schema_tables

        for _, spec, _ in schema_tables(schema):
            if store.table_exists(spec.full_name):
                store.delete_table(spec.full_name)
        store.close()
