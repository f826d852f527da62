"""advise's Spark route (local[2], one SparkSession for the module): on data the sample cut takes
whole it gives the in-process route's sample, statistics and ranking; on data far bigger than the
cut it knows the whole data's count, span and heaviest tenant, keeps that tenant at its exact share
where an even cut loses it, and scales an entity's rows by what the sample stands for."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pyspark", reason="PySpark is not installed: pip install -e '.[spark]'")

import pyarrow as pa  # noqa: E402
import pyarrow.csv as pcsv  # noqa: E402
import pyarrow.orc as porc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from click.testing import CliRunner  # noqa: E402

from keyshape.analysis.advise import advise, parse_spec  # noqa: E402
from keyshape.analysis.advise.sample import read_sample  # noqa: E402
from keyshape.cli.main import main as cli  # noqa: E402

pytestmark = pytest.mark.spark

START_MS = 1_767_225_600_000
WORKLOAD = {
    "entity": {"id": ["tenant_id", "doc_id"], "time": "updated_at"},
    "write": {"rows_per_second": 3000, "growth": 1.0, "updates": 0.2},
    "horizon": {"days": 365},
    "cluster": {"servers": 3, "region_size": "10GiB"},
    "pattern": [
        {"name": "latest 50 of a tenant", "kind": "latest", "fields": ["tenant_id"], "limit": 50, "rate": 200, "goal_ms": 30},
        {"name": "document by tenant and id", "kind": "get", "fields": ["tenant_id", "doc_id"], "rate": 1000, "goal_ms": 5},
        {"name": "all documents of a tenant", "kind": "prefix", "fields": ["tenant_id"], "rate": 1, "goal_ms": 1000},
    ],
}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    from keyshape.spark import session

    s = session("local[2]", config={"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"})
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


def _records(n: int, seed: int = 5) -> pa.Table:
    """SaaS-like records: a Zipf tenant mix, times to the minute (many ties: the order among equal
    times must be the file order on both routes), a value column."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, 201) ** 1.1
    tenants = rng.choice(200, size=n, p=weights / weights.sum())
    t = START_MS + np.sort(rng.integers(0, 3 * 86_400_000, n)) // 60_000 * 60_000
    return pa.table(
        {
            "tenant_id": [f"t{x:04d}" for x in tenants],
            "doc_id": [f"{i * 2654435761 % 4294967296:010d}" for i in range(n)],
            "updated_at": pa.array(t, type=pa.timestamp("ms")),
            "title": [f"document {i}" for i in range(n)],
        }
    )


def _parts(folder: Path, table: pa.Table, fmt: str) -> Path:
    """Two part files of unequal size (Spark packs splits by size: the order must not follow it)."""
    folder.mkdir()
    cut = table.num_rows // 3
    for i, part in enumerate((table.slice(0, cut), table.slice(cut))):
        if fmt == "parquet":
            pq.write_table(part, folder / f"part-{i:05d}.parquet", row_group_size=2_000)
        elif fmt == "orc":
            porc.write_table(part, folder / f"part-{i:05d}.orc")
        else:
            pcsv.write_csv(part, folder / f"part-{i:05d}.csv")
    return folder


def _same_sample(a: Any, b: Any) -> None:
    assert (a.rows, a.types, a.span_seconds, a.value_bytes, a.cells) == (b.rows, b.types, b.span_seconds, b.value_bytes, b.cells)
    for name, col in a.columns.items():
        assert list(col) == list(b.columns[name]), name
    sa, sb = a.stats, b.stats
    assert (sa.rows, sa.span_seconds, sa.heavy) == (sb.rows, sb.span_seconds, sb.heavy)
    for name, exact in sa.distinct.items():
        assert abs(sb.distinct[name] - exact) <= 0.06 * exact, (name, exact, sb.distinct[name])  # HyperLogLog, rsd 2 %


@pytest.mark.parametrize("fmt", ["parquet", "orc", "csv"])
def test_spark_route_gives_the_in_process_sample_and_statistics(spark: Any, tmp_path: Path, fmt: str) -> None:
    from keyshape.spark.advise import spark_sample

    spec = parse_spec(WORKLOAD)
    data = _parts(tmp_path / "data", _records(4_000), fmt)
    local = read_sample(data, spec)
    remote = spark_sample(data, spec, spark=spark)
    assert local.stats is not None and remote.stats is not None and remote.stats.engine == "spark"
    assert local.rows == 4_000 and local.types["updated_at"] == "timestamp" and local.types["doc_id"] == ("int64" if fmt == "csv" else "string")
    assert len(set(local.columns["updated_at"].tolist())) < 4_000  # ties in the event time exist
    heavy = local.stats.heavy["tenant_id"]
    assert heavy[0][1] > heavy[-1][1] > 1 and local.stats.heavy["doc_id"] == []  # a Zipf head; no document repeats
    _same_sample(local, remote)


def test_spark_route_ranks_the_designs_as_the_in_process_route(spark: Any, tmp_path: Path) -> None:
    data = _parts(tmp_path / "data", _records(3_000), "parquet")
    workload = tmp_path / "WORKLOAD.json.toml"
    workload.write_text(_toml(WORKLOAD))
    local = advise(data, workload)
    res = CliRunner().invoke(
        cli,
        ["advise", "--data", str(data), "--queries", str(workload), "--spark", "--master", "local[2]", "--top", "100", "--json", "-"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    remote = json.loads(res.stdout[res.stdout.index("{") :])
    assert remote["sample"]["data"]["engine"] == "spark" and remote["sample"]["data"]["rows"] == 3_000
    assert remote["designs_scored"] == len(local.ranked) >= 20
    want = [(s.design.label, round(s.weighted_cost, 3), round(s.concentration, 4)) for s in local.ranked]
    got = [(d["design"], d["weighted_cost_ms_per_s"], d["write_concentration"]) for d in remote["designs"]]
    assert got == want


def test_a_dataset_far_bigger_than_the_cut_keeps_its_heavy_tenant(spark: Any, tmp_path: Path) -> None:
    """60,000 records written by a round-robin writer: tenant t-heavy holds slots 1-6 of every 60
    (10 % of the rows). An even cut to 1,000 (every 60th record) never sees it; Spark's sample holds
    it at exactly 10 %, and knows the whole data's count and span."""
    from keyshape.analysis.advise.score import Scorer
    from keyshape.spark.advise import spark_sample

    n, cut = 60_000, 1_000
    rng = np.random.default_rng(11)
    slot = np.arange(n) % 60
    tenants = np.where((slot >= 1) & (slot <= 6), "t-heavy", np.char.add("t", rng.integers(0, 3_000, n).astype(str)))
    table = pa.table(
        {
            "tenant_id": tenants.tolist(),
            "doc_id": [f"d{i:07d}" for i in range(n)],
            "updated_at": pa.array(START_MS + np.arange(n, dtype=np.int64) * 4_000, type=pa.timestamp("ms")),
            "title": ["x" * 20] * n,
        }
    )
    data = tmp_path / "big.parquet"
    pq.write_table(table, data, row_group_size=10_000)
    spec = parse_spec(WORKLOAD)
    even = read_sample(data, spec, max_rows=cut)
    drawn = spark_sample(data, spec, max_rows=cut, spark=spark, seed=3)
    assert even.columns["tenant_id"].count("t-heavy") == 0  # the even cut lost it
    stats = drawn.stats
    assert stats is not None and stats.rows == n and drawn.rows == cut and drawn.thinning == n / cut
    assert stats.span_seconds == (n - 1) * 4.0 and stats.heavy["tenant_id"][0] == ("t-heavy", 6_000)
    assert drawn.columns["tenant_id"].count("t-heavy") == 100  # its exact share of the whole data
    assert list(drawn.columns["updated_at"]) == sorted(drawn.columns["updated_at"])  # write order
    # A tenant's rows at the horizon: the sample of 1,000 scaled by what each record stands for comes
    # near the whole data's answer; a file of 1,000 records that does not know it was cut is far off.
    everything = read_sample(data, spec, max_rows=n)
    assert everything.stats is not None and stats.heavy == everything.stats.heavy  # Spark's group-by = the exact counts, ties by value
    whole = Scorer(spec, everything)
    scaled = Scorer(spec, drawn)
    small = tmp_path / "cut.parquet"
    pq.write_table(table.take(np.sort(rng.choice(n, cut, replace=False))), small)
    blind = Scorer(spec, read_sample(small, spec))
    assert scaled.entity_scale == pytest.approx(whole.entity_scale * n / cut, rel=0.01)
    assert blind.entity_scale == pytest.approx(whole.entity_scale, rel=0.01)  # per record: 60x too few rows
    from keyshape.spark.advise import advise as advise_spark

    advice = advise_spark(data, spec, spark=spark, max_rows=cut)
    assert any("t-heavy" in note and "10.0%" in note for note in advice.notes)
    assert any("1,000 of 60,000 records" in note for note in advice.notes)


def test_spark_route_names_a_missing_field_in_one_line(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "d.parquet"
    pq.write_table(_records(200).drop_columns(["doc_id"]), data)
    res = CliRunner().invoke(cli, ["advise", "--data", str(data), "--queries", str(_workload(tmp_path)), "--spark"])
    assert res.exit_code != 0 and "no field 'doc_id'" in res.output and "Traceback" not in res.output
    res = CliRunner().invoke(cli, ["advise", "--data", str(data), "--queries", str(_workload(tmp_path)), "--master", "local[2]"])
    assert res.exit_code == 2 and "--master is for --spark" in res.output and "Traceback" not in res.output


def _workload(tmp_path: Path) -> Path:
    path = tmp_path / "W.toml"
    path.write_text(_toml(WORKLOAD))
    return path


def _toml(spec: dict[str, Any]) -> str:
    """The workload dict as a TOML file (strings, numbers and lists of strings are all it holds)."""

    def value(v: Any) -> str:
        return json.dumps(v)

    lines = []
    for section in ("entity", "write", "horizon", "cluster"):
        lines.append(f"[{section}]")
        lines += [f"{k} = {value(v)}" for k, v in spec[section].items()]
    for p in spec["pattern"]:
        lines.append("[[pattern]]")
        lines += [f"{k} = {value(v)}" for k, v in p.items()]
    return "\n".join(lines) + "\n"
