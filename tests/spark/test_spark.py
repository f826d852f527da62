"""keyshape inside Spark (local[2], one SparkSession for the module): encode_keys is encode_many,
--engine spark gives --engine local's numbers, sample_splits orders bytes as HBase does, and
write_to_hbase stores exactly N rows in a real HBase."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed: pip install -e '.[spark]'")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from keyshape.analysis import analyze as analyze_keys  # noqa: E402
from keyshape.cli.main import main as cli  # noqa: E402
from keyshape.core import splits as core_splits  # noqa: E402
from keyshape.schema import KeySchema  # noqa: E402
from keyshape.workload import generate  # noqa: E402

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
ORDERS = ROOT / "examples" / "orders.toml"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from keyshape.spark import session

    s = session("local[2]", config={"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"})
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _records(schema: KeySchema, rows: int) -> tuple[pa.Table, dict[str, Any]]:
    columns = next(generate(schema, rows, chunk_rows=rows))
    table = pa.table({"row_id": np.arange(rows, dtype=np.int64), **{name: pa.array(values) for name, values in columns.items()}})
    return table, columns


def test_encode_keys_equals_encode_many_on_every_example(spark: Any) -> None:
    from keyshape.spark import encode_keys

    assert len(EXAMPLES) >= 6
    for path in EXAMPLES:
        schema = KeySchema.load(path)
        table, columns = _records(schema, 100_000)
        df = spark.createDataFrame(table)  # sliced over the 2 cores: keys built in 2 tasks
        got = encode_keys(df, schema).select("row_id", "rowkey").toArrow()
        order = np.argsort(got.column("row_id").to_numpy())
        keys = got.column("rowkey").to_pylist()
        assert [keys[i] for i in order] == schema.encode_many(columns), path.name


def _keys_dir(tmp_path: Path, schema: KeySchema, rows: int) -> Path:
    out = tmp_path / "keys"
    out.mkdir()
    keys = schema.encode_many(next(generate(schema, rows, chunk_rows=rows)))
    # Two part files of unequal size (Spark orders its splits by size: write order must not
    # follow that), several row groups each.
    cut = rows // 3
    for i, part in enumerate((keys[:cut], keys[cut:])):
        pq.write_table(pa.table({"rowkey": pa.array(part, pa.binary())}), out / f"part-{i:05d}.parquet", row_group_size=25_000)
    return out


def _numbers(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "source"}


def test_engine_spark_gives_the_local_numbers(spark: Any, tmp_path: Path) -> None:
    schema = KeySchema.load(ROOT / "examples" / "timestamp-leading.toml")
    keys = _keys_dir(tmp_path, schema, 120_000)
    runner = CliRunner()
    results = {}
    for engine in ("local", "spark"):
        extra = ["--master", "local[2]"] if engine == "spark" else []
        res = runner.invoke(
            cli,
            ["analyze", str(schema.source), "--keys", str(keys), "--engine", engine, *extra, "--json", "-"],
            standalone_mode=False,
            catch_exceptions=False,
        )
        assert res.exit_code == 0, res.output
        results[engine] = json.loads(res.stdout[res.stdout.index("{") :])
    local, remote = results["local"], results["spark"]
    assert local["rows"] == 120_000
    assert local["verdict"] == "hotspot"  # a leading timestamp: the time view must survive
    for name in ("regions", "heat", "max_over_mean", "hot_window_share", "verdict", "increasing_fraction", "key_length", "servers"):
        assert remote[name] == local[name], name
    assert _numbers(remote) == _numbers(local)
    # Files cut into many splits (row groups spread over tasks, packed by size): same numbers.
    from keyshape.spark import analyze

    spark.conf.set("spark.sql.files.maxPartitionBytes", "300000")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    try:
        df = spark.read.parquet(str(keys))
        assert df.rdd.getNumPartitions() >= 4
        cut = analyze(str(keys), schema).to_dict()
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
        spark.conf.unset("spark.sql.files.openCostInBytes")
    assert _numbers(cut) == _numbers(local)


def test_analyze_dataframe_in_partition_order_and_sampled_splits(spark: Any) -> None:
    from keyshape.spark import analyze, sample_splits

    schema = KeySchema.load(ORDERS)
    keys = schema.encode_many(next(generate(schema, 30_000, chunk_rows=30_000)))
    df = spark.createDataFrame(pa.table({"k": pa.array(keys, pa.binary())}))
    splits = sample_splits(df, 8, "k", sample_rows=50_000)  # whole set: the exact quantiles
    assert splits == core_splits.sample_splits(keys, 8)
    got = analyze(df, schema, "k", split_keys=splits, windows=10)
    want = analyze_keys(keys, splits, windows=10, total_rows=len(keys), value_bytes=100, cells_per_row=len(schema.fields))
    for name in ("rows", "max_over_mean", "hot_window_share", "increasing_fraction", "verdict"):
        assert getattr(got, name) == getattr(want, name), name
    assert got.heat.tolist() == want.heat.tolist()


def test_csv_files_are_analyzed_in_file_order(spark: Any, tmp_path: Path) -> None:
    """Spark packs files into partitions by size; the write order stays path, then row."""
    from keyshape.spark import analyze

    schema = KeySchema.load(ORDERS)  # text keys: nothing a CSV parser could take apart
    keys = schema.encode_many(next(generate(schema, 9_000, chunk_rows=9_000)))
    out = tmp_path / "csv"
    out.mkdir()
    from keyshape.core.hbytes import to_string_binary

    for i, part in enumerate((keys[:2_000], keys[2_000:])):  # the small file comes first
        (out / f"part-{i}.csv").write_text("rowkey\n" + "".join(to_string_binary(k) + "\n" for k in part))
    splits = schema.split_keys()
    got = analyze(str(out), schema, windows=12)
    want = analyze_keys(keys, splits, windows=12, total_rows=len(keys), value_bytes=got.value_bytes, cells_per_row=len(schema.fields))
    assert got.rows == 9_000 and got.increasing_fraction == want.increasing_fraction
    assert got.heat.tolist() == want.heat.tolist()
    assert got.distribution == want.distribution
    assert got.verdict == want.verdict


def test_sample_splits_order_bytes_unsigned(spark: Any) -> None:
    from keyshape.spark import sample_splits

    rng = np.random.default_rng(7)
    # Keys across the whole byte range: a signed comparison would put 0x80..0xFF first.
    keys = [bytes(row) for row in rng.integers(0, 256, size=(40_000, 6), dtype=np.uint8)]
    df = spark.createDataFrame(pa.table({"k": pa.array(keys, pa.binary())})).repartition(4)
    splits = sample_splits(df, 16, sample_rows=8_000, seed=3)
    assert splits == sorted(splits) and len(splits) == 15
    ordered = sorted(keys)
    for i, split in enumerate(splits, start=1):
        rank = np.searchsorted(np.array(ordered, dtype=object), split) / len(keys)
        assert abs(rank - i / 16) < 0.03, (i, rank)


@pytest.mark.hbase
def test_write_to_hbase_stores_exactly_n_rows(spark: Any, hbase: Any) -> None:
    from keyshape.schema.specs import TableSpec
    from keyshape.spark import write_to_hbase
    from keyshape.store import ensure_table, open_store

    schema = KeySchema.load(ORDERS)
    rows = 10_000
    table, columns = _records(schema, rows)
    spec = TableSpec(f"ks_spark_{uuid.uuid4().hex[:10]}", namespace="default", families=list(schema.table.families))
    store = open_store(hbase.url)
    ensure_table(store, spec, schema.split_keys())
    try:
        df = spark.createDataFrame(table).repartition(2)
        written = write_to_hbase(df, schema, hbase.url, table=spec.full_name)
        assert written == rows
        stored = [r for r, _ in store.scan(spec.full_name)]
        assert len(stored) == rows
        assert sorted(stored) == sorted(schema.encode_many(columns))
        row = store.get(spec.full_name, stored[0])
        assert set(row) >= {b"d:row_id", b"d:user_id"}
        # Regions of the live table: the analysis counts exactly what each region now holds.
        from keyshape.spark import analyze, encode_keys

        live = analyze(encode_keys(df, schema), schema, "rowkey", table=spec.full_name, url=hbase.url)
        for region in live.regions:
            held = len(list(store.scan(spec.full_name, region.start, region.end)))
            assert region.rows == held, region.label
    finally:
        store.delete_table(spec.full_name)
        store.close()


def test_engine_spark_checks_the_keys_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    """Issue 28 item 3 on Spark: a key set salted 00 throughout is refused with the local
    engine's counts, and with allow_foreign_keys analysed with the same key_check."""
    from keyshape.analysis.designs import analyze_schema
    from keyshape.errors import KeysDoNotFit
    from keyshape.spark import analyze

    schema = KeySchema.load(Path(__file__).resolve().parents[2] / "examples" / "orders.toml")
    keys = schema.encode_many(next(generate(schema, 60_000, chunk_rows=60_000)))
    keys[10] = b"evt-1"
    out = tmp_path / "salt00"
    out.mkdir()
    for i, part in enumerate((keys[:20_000], keys[20_000:])):
        pq.write_table(
            pa.table({"rowkey": pa.array([b"00" + k[2:] if k[:1] != b"e" else k for k in part], pa.binary())}),
            out / f"part-{i:05d}.parquet",
            row_group_size=25_000,
        )
    with pytest.raises(KeysDoNotFit) as local:
        analyze_schema(schema, keys_file=out)
    with pytest.raises(KeysDoNotFit) as remote:
        analyze(str(out), schema, spark=spark)
    assert str(remote.value) == str(local.value) and "wrong salt" in str(remote.value)
    a = analyze(str(out), schema, spark=spark, allow_foreign_keys=True)
    b = analyze_schema(schema, keys_file=out, allow_foreign_keys=True)
    assert a.key_check is not None and b.key_check is not None
    assert a.key_check.to_dict() == b.key_check.to_dict() and a.key_check.foreign == 1
