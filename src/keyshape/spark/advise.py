"""The advisor's sample drawn by Spark from records too many to read in one process.

Spark reads the whole dataset (Parquet, ORC or CSV; a file, a directory, a glob or a URI Spark
reads, as :func:`keyshape.spark.analyze.read_keys_df` resolves it) and computes what an even cut of
a sample cannot know (:class:`~keyshape.analysis.advise.sample.DataStats`): the exact row count,
the event-time span, each field's distinct values (HyperLogLog, ``approx_count_distinct``) and the
heaviest values of the fields a key could lead with (exact counts). Then it draws the sample:

1. a Bernoulli sample a tenth (and ten standard deviations) larger than ``max_rows`` is collected
   to the driver as Arrow;
2. it is cut to ``max_rows`` at random, except that the values of the most skewed lead field (a
   Zipf tenant mix) keep their exact share of the whole data: its heaviest values get
   ``rows x max_rows / N`` records each (as many as were drawn when fewer), the rest share what is
   left. The write concentration the advisor replays then sees the hottest tenant at its true
   weight, not at a draw's;
3. the records are put back in the order the in-process route reads them (files by path, rows in
   file order) and typed and sorted by the event time by the same code
   (:func:`~keyshape.analysis.advise.sample.sample_from_table`).

A dataset no bigger than ``max_rows`` is taken whole: the sample then equals the in-process
route's, record for record. :func:`advise` is :func:`keyshape.analysis.advise.advise` with this
sample (``keyshape advise --spark``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.analysis.advise.advise import Advice
from keyshape.analysis.advise.advise import advise as advise_local
from keyshape.analysis.advise.sample import (
    DEFAULT_MAX_ROWS,
    HEAVY_VALUES,
    DataStats,
    Sample,
    check_table,
    lead_fields,
    sample_from_table,
    time_millis,
    top_values,
)
from keyshape.analysis.advise.spec import AdviseError, AdviseSpec
from keyshape.spark.analyze import file_key, read_keys_df
from keyshape.spark.session import session

__all__ = ["advise", "spark_sample", "EXACT_HEAVY_DISTINCT", "OVERSAMPLE"]

RSD = 0.02  # approx_count_distinct's relative standard deviation
EXACT_HEAVY_DISTINCT = 200_000  # a field with fewer distinct values is counted whole (one small group-by)
OVERSAMPLE = 1.1  # the Bernoulli draw's size over max_rows, so the cut rarely runs short
_FILE, _BLOCK, _ROW = "__ks_file", "__ks_block", "__ks_row"


def advise(data: str | Path, workload: Any, *, spark: Any = None, master: str | None = None, seed: int = 0, **options: Any) -> Advice:
    """:func:`keyshape.analysis.advise.advise` on a sample Spark draws from all of ``data`` (any
    size, any path Spark reads); ``spark`` a SparkSession (default: the active one, else a new one
    on ``master``); ``options`` as the in-process route's (``compare``, ``max_rows``, ``servers`` ...)."""

    def sampler(path: str | Path, spec: AdviseSpec, max_rows: int) -> Sample:
        return spark_sample(path, spec, max_rows, spark=spark, master=master, seed=seed)

    return advise_local(data, workload, sampler=sampler, **options)


def spark_sample(
    path: str | Path,
    spec: AdviseSpec,
    max_rows: int = DEFAULT_MAX_ROWS,
    *,
    spark: Any = None,
    master: str | None = None,
    seed: int = 0,
) -> Sample:
    """The advisor's sample of the records behind ``path``, drawn by Spark (see the module doc).

    ``spark``: a SparkSession (default: the active one, else a new one on ``master``)."""
    from pyspark.sql import functions as F

    spark = spark if spark is not None else session(master, app_name="keyshape advise")
    source = str(path)
    df, fmt, _ = read_keys_df(spark, path)
    check_table(_EmptyTable(df.columns), spec, source)
    time = spec.time_field
    others = [f for f in sorted(spec.fields_used()) if f != time]
    # Pass 1: the whole data's count, span and distinct values, in one job.
    aggs = [F.count(F.lit(1)).alias("__n")] + [F.approx_count_distinct(f, RSD).alias(f"__d{i}") for i, f in enumerate(others)]
    if time:
        aggs += [F.min(time).alias("__tmin"), F.max(time).alias("__tmax")]
    head = df.agg(*aggs).toArrow()
    total = int(head.column("__n")[0].as_py())
    if total == 0:
        raise AdviseError(f"{source}: the sample holds no records; give at least a few thousand")
    distinct = {f: int(head.column(f"__d{i}")[0].as_py()) for i, f in enumerate(others)}
    span = 0.0
    if time:
        import pyarrow as pa

        bounds = pa.table({time: pa.concat_arrays([head.column("__tmin").combine_chunks(), head.column("__tmax").combine_chunks()])})
        if fmt == "csv":
            bounds = _csv_typed(bounds, spec)  # text in Spark; read as pyarrow reads the CSV
        t = time_millis(bounds.column(time), spec, source)
        span = float(t[1] - t[0]) / 1000.0
    # Pass 2: the records, with where each came from (to restore the file order after the draw).
    pos = [F.col("_metadata.file_path").alias(_FILE), F.col("_metadata.file_block_start").alias(_BLOCK)]
    pos.append(F.col("_metadata.row_index").alias(_ROW) if fmt == "parquet" else F.monotonically_increasing_id().alias(_ROW))
    drawn = df.select("*", *pos)
    if total > max_rows:
        drawn = drawn.sample(withReplacement=False, fraction=min(1.0, (OVERSAMPLE * max_rows + 10 * max_rows**0.5 + 50) / total), seed=seed)
    table = drawn.toArrow()
    # Pass 3: the heaviest values of the lead fields, counted over the whole data.
    if table.num_rows == total:  # every record is here: count them here, not in two more jobs
        heavy = {name: top_values(table.column(name)) for name in lead_fields(spec)}
    else:
        heavy = {name: _heavy(df, name, distinct.get(name, 0), table) for name in lead_fields(spec)}
    if table.num_rows > max_rows:
        table = table.take(_cut(table, heavy, total, max_rows, seed))
    table = _file_order(table).drop_columns([_FILE, _BLOCK, _ROW])
    if fmt == "csv":
        table = _csv_typed(table, spec)
        heavy = {n: [(_like(v, table.column(n).type), c) for v, c in vs] for n, vs in heavy.items()}
    stats = DataStats(rows=total, span_seconds=span, distinct=distinct, heavy=heavy, engine="spark")
    return sample_from_table(table, spec, source, stats)


class _EmptyTable:
    """Just enough of a table for :func:`check_table` to name a missing field before any job runs."""

    num_rows = 1

    def __init__(self, names: list[str]) -> None:
        self.column_names = names


def _heavy(df: Any, name: str, distinct: int, drawn: Any) -> list[tuple[Any, int]]:
    """The heaviest values of ``name`` with their exact rows (heaviest first, ties by value; only
    values on more than one row). A field of few values is counted whole; for one of many, the
    values drawn more than once are the candidates (a value holding 1/max_rows of the data is drawn
    about once, so any value heavy enough to matter is among them) and only those are counted."""
    from pyspark.sql import functions as F

    if distinct <= EXACT_HEAVY_DISTINCT:
        rows = df.groupBy(name).count().where(F.col("count") > 1).orderBy(F.desc("count"), F.asc(name)).limit(HEAVY_VALUES).collect()
    else:
        candidates = [v for v, _ in top_values(drawn.column(name))]
        if not candidates:
            return []
        rows = df.where(F.col(name).isin(candidates)).groupBy(name).count().collect()
    found = [(r[name], int(r["count"])) for r in rows if int(r["count"]) > 1]
    return sorted(found, key=lambda vc: (-vc[1], vc[0]))[:HEAVY_VALUES]


def _cut(table: Any, heavy: dict[str, list[tuple[Any, int]]], total: int, max_rows: int, seed: int) -> Any:
    """The indices of ``max_rows`` drawn records (ascending): at random, the heaviest values of the
    most skewed lead field at their exact share of the whole data."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(seed)
    rank = rng.permutation(table.num_rows)  # a random priority: lower is kept first
    skewed = max(heavy, key=lambda n: heavy[n][0][1] if heavy[n] else 0, default=None)
    keep: list[np.ndarray] = []
    free = np.ones(table.num_rows, dtype=bool)
    if skewed is not None and heavy[skewed] and heavy[skewed][0][1] * max_rows / total >= 1:
        col = table.column(skewed).combine_chunks()
        for value, count in heavy[skewed]:
            quota = int(round(count * max_rows / total))
            where = np.flatnonzero(pc.equal(col, pa.scalar(value, col.type)).to_numpy(zero_copy_only=False))
            free[where] = False
            keep.append(where[np.argsort(rank[where])[:quota]])
    taken = sum(len(k) for k in keep)
    rest = np.flatnonzero(free)
    keep.append(rest[np.argsort(rank[rest])[: max(0, max_rows - taken)]])
    return pa.array(np.sort(np.concatenate(keep)))


def _file_order(table: Any) -> Any:
    """The records in the order the in-process route reads them: files by path (as
    ``keyshape.workload.key_files`` sorts them), then by block and row within a file."""
    import pyarrow as pa
    import pyarrow.compute as pc

    files = pc.unique(table.column(_FILE)).to_pylist()
    by_path = sorted(files, key=lambda f: Path(file_key(f)).parts)
    order = pc.index_in(table.column(_FILE), value_set=pa.array(by_path, pa.string()))
    ranked = table.append_column("__ks_file_rank", order)
    idx = pc.sort_indices(ranked, sort_keys=[("__ks_file_rank", "ascending"), (_BLOCK, "ascending"), (_ROW, "ascending")])
    return table.take(idx)


def _csv_typed(table: Any, spec: AdviseSpec) -> Any:
    """Text columns (Spark reads CSV as text, as the local engine does) typed as pyarrow types a
    CSV file: written out as CSV and read back with the in-process route's options."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    buf = io.BytesIO()
    pcsv.write_csv(table, buf)
    text = {n: pa.string() for n, t in spec.types.items() if t in ("string", "bytes")}
    return pcsv.read_csv(io.BytesIO(buf.getvalue()), convert_options=pcsv.ConvertOptions(column_types=text))


def _like(value: Any, arrow_type: Any) -> Any:
    """A value Spark read as CSV text, as the typed column holds it."""
    import pyarrow as pa

    if value is None or pa.types.is_string(arrow_type):
        return value
    try:
        return pa.array([value]).cast(arrow_type)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return value
