"""``analyze``: the hotspot analyzer over a Spark DataFrame (or files) of row keys, as mergeable
partials.

Write order is the order the local engine reads the same data in: files sorted by path, rows in
file order (Parquet's ``_metadata.row_index``; for CSV / ORC, file blocks by offset, rows in the
order their task reads them); for other DataFrames it is partition order and row order within
each partition (``monotonically_increasing_id``), which must then be deterministic. The rows of
each file (block, partition) are counted first, so every row knows its position in the whole
stream: from the footers for local Parquet files, else by a counting job; the second runs one :class:`~keyshape.analysis.Analyzer` per
partition over Arrow batches and returns it pickled; the driver merges them and finishes. The
result is the local analyzer's, number for number.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import numpy as np

from keyshape.analysis.analyze import Analysis, Analyzer
from keyshape.analysis.designs import (
    finish_schema,
    refuse_foreign_keys,
    schema_analyzer,
    with_key_check,
    with_regions,
)
from keyshape.core.arrowkeys import from_arrow
from keyshape.errors import BadInput, KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.keycheck import KeyCheck
from keyshape.spark.encode import encode_keys
from keyshape.spark.session import as_schema, pyspark, session
from keyshape.spark.splits import key_column, sample_splits

_KEY, _GROUP, _INDEX = "__ks_key", "__ks_group", "__ks_index"
_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".orc": "orc", ".csv": "csv", ".txt": "csv"}


def _is_remote(path: str | Path) -> bool:
    scheme = urlparse(str(path)).scheme
    return len(scheme) > 1 and scheme != "file"  # "C:" is a drive, not a scheme


def file_key(uri: str) -> str:
    """A data file's name as both engines spell it: the local path for ``file:`` URIs (what
    ``_metadata.file_path`` holds), the URI itself on other file systems."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme in ("", "file") else uri


def read_keys_df(spark: Any, path: str | Path) -> tuple[Any, str, dict[str, int] | None]:
    """A DataFrame over the key files behind ``path``, their format and, for local Parquet files,
    the rows of each file (``file_key`` -> rows) from the footers.

    A local path (file, directory or glob) is resolved to the same files the local engine reads
    (``keyshape.workload.key_files``) and those are passed to Spark explicitly, so both see the
    same rows. A URI on another file system (``hdfs://``, ``s3a://`` ...) goes to Spark as it is,
    its format taken from its suffix (Parquet when it has none)."""
    from keyshape.workload import key_file_parts, key_files

    counts: dict[str, int] | None
    if _is_remote(path):
        suffix = Path(urlparse(str(path)).path.rstrip("/*")).suffix.lower()
        fmt, paths, counts = _FORMATS.get(suffix, "parquet"), [str(path)], None
    else:
        files = key_files(path)
        formats = {_FORMATS.get(f.suffix.lower(), "csv") for f in files}
        if len(formats) != 1:
            raise BadInput(f"{path}: mixes {', '.join(sorted(formats))} files; give one format")
        fmt = formats.pop()
        paths = [str(f.resolve()) for f in files]
        counts = None
        if fmt == "parquet":
            counts = {}
            for f, _, _, rows in key_file_parts(path) or []:
                key = str(f.resolve())
                counts[key] = counts.get(key, 0) + rows
    reader = spark.read.format(fmt)
    if fmt == "csv":
        # As the local engine: a header row, every column text (keys like "007" keep zeros).
        reader = reader.option("header", "true").option("inferSchema", "false")
    return reader.load(paths), fmt, counts


def _positions_df(df: Any, column: str, order: str) -> Any:
    """(key, group, index): rows of one group are contiguous in write order and numbered in it.

    ``order`` is ``"row_index"`` (Parquet: a group is a file, numbered by its row index),
    ``"block"`` (other files: a group is the block of a file one task reads, numbered in
    partition order) or ``"partition"`` (a DataFrame: a group is a partition)."""
    from pyspark.sql import functions as F

    if order == "row_index":
        return df.select(F.col(column).alias(_KEY), F.col("_metadata.file_path").alias(_GROUP), F.col("_metadata.row_index").alias(_INDEX))
    pid = F.spark_partition_id()
    # monotonically_increasing_id is (partition id << 33) + row number within the partition.
    index = F.monotonically_increasing_id() - F.shiftleft(pid.cast("long"), 33)
    if order == "block":
        # One string per block: the path and the zero-padded offset, split again to sort.
        group = F.concat_ws("\x00", F.col("_metadata.file_path"), F.lpad(F.col("_metadata.file_block_start").cast("string"), 20, "0"))
    else:
        group = F.lpad(pid.cast("string"), 10, "0")
    return df.select(F.col(column).alias(_KEY), group.alias(_GROUP), index.alias(_INDEX))


def _group_sort_key(group: str, order: str) -> tuple[Any, ...]:
    if order == "partition":
        return (int(group),)
    if order == "block":
        uri, _, offset = group.partition("\x00")
        return (Path(file_key(uri)).parts, int(offset))
    return (Path(group).parts,)


def _group_offsets(pos_df: Any, order: str, counts: dict[str, int] | None) -> tuple[dict[str, int], int]:
    """For each group, what to add to a row's index to get its position in the whole stream:
    from ``counts`` (rows per file, read from local footers) or from a counting job."""
    from pyspark.sql import functions as F

    if counts is not None:
        sizes = [(g, n, 0) for g, n in counts.items()]
    else:
        rows = pos_df.groupBy(_GROUP).agg(F.count(F.lit(1)).alias("n"), F.min(_INDEX).alias("base")).collect()
        sizes = [(r[_GROUP] if order != "row_index" else file_key(r[_GROUP]), int(r["n"]), int(r["base"])) for r in rows]
    offsets: dict[str, int] = {}
    start = 0
    for group, n, base in sorted(sizes, key=lambda g: _group_sort_key(g[0], order)):
        offsets[group] = start - base
        start += n
    return offsets, start


def partial_batches(
    template: Analyzer, offsets: dict[str, int], key_format: str, batches: Iterator[Any], by_file: bool = False, check: KeyCheck | None = None
) -> Iterator[Any]:
    """One record batch holding this partition's Analyzer, pickled (the mergeable partial); with
    ``check``, the pair (Analyzer, this partition's KeyCheck of the keys against its schema).
    With ``by_file`` the groups are file URIs, looked up by :func:`file_key`."""
    import pyarrow as pa

    part = template.empty_like()
    checked = check.empty_like() if check is not None else None
    for batch in batches:
        if batch.num_rows == 0:
            continue
        keys = from_arrow(batch.column(0), key_format)
        groups = batch.column(1).dictionary_encode()
        names = groups.dictionary.to_pylist()
        starts = np.array([offsets[file_key(g) if by_file else g] for g in names], dtype=np.int64)
        index = batch.column(2).to_numpy(zero_copy_only=False).astype(np.int64)
        positions = starts[groups.indices.to_numpy(zero_copy_only=False)] + index
        part.update(keys, positions=positions)
        if checked is not None:
            checked.check(keys, positions)
    blob = pickle.dumps(part if checked is None else (part, checked))
    yield pa.RecordBatch.from_arrays([pa.array([blob], pa.binary())], ["partial"])


def analyze(
    df_or_path: Any,
    schema: KeySchema | str | Path,
    column: str | None = None,
    *,
    split_keys: Sequence[bytes] | None = None,
    regions: int | None = None,
    sample_regions: int | None = None,
    table: str | None = None,
    url: str | None = None,
    servers: int | None = None,
    windows: int = 50,
    value_bytes: int | None = None,
    cells_per_row: int | None = None,
    key_format: str = "binary",
    spark: Any = None,
    allow_foreign_keys: bool = False,
) -> Analysis:
    """The analyzer's statistics over the row keys of a DataFrame or of key files, on Spark.

    ``df_or_path`` is a DataFrame or a Parquet / ORC / CSV file, directory or glob. ``column``
    holds the keys (binary, or text per ``key_format``); when the DataFrame has no such column
    but has the schema's fields, the keys are encoded first (:func:`encode_keys`). The regions
    are, in order of preference: ``split_keys``; the live regions of ``table`` on the HBase at
    ``url``; ``sample_regions`` regions from :func:`sample_splits`; else the schema's splits
    (re-cut to ``regions`` when given). The result equals ``analyze_schema(schema,
    keys_file=path)`` (and ``Analyzer`` over the same keys) number for number, the keys
    checked against ``schema`` as there (``KeysDoNotFit`` past the limits unless
    ``allow_foreign_keys``). ``servers``, ``windows``, ``value_bytes`` and ``cells_per_row`` are
    :func:`keyshape.analysis.designs.analyze_schema`'s; ``spark``: the SparkSession (None:
    :func:`session`'s, the active one or a new local one).
    """
    pyspark()
    schema = as_schema(schema)
    if regions is not None:
        schema = with_regions(schema, regions)
    order, counts = "partition", None
    source = "Spark DataFrame"
    if isinstance(df_or_path, (str, Path)):
        spark = spark or session()
        df, fmt, counts = read_keys_df(spark, df_or_path)
        order = "row_index" if fmt == "parquet" else "block"
        source = f"keys from {df_or_path}"
    else:
        df = df_or_path
    if column is not None and column not in df.columns and all(f in df.columns for f in schema.field_names):
        df = encode_keys(df, schema, column)
    named = column
    column = key_column(df, column)
    if split_keys is None and table is not None:
        split_keys = _live_splits(table, url)
    elif split_keys is None and sample_regions is not None:
        split_keys = sample_splits(df, sample_regions, column, key_format=key_format)
    pos_df = _positions_df(df, column, order)
    offsets, total = _group_offsets(pos_df, order, counts if order == "row_index" else None)
    if total == 0:
        raise BadInput("no keys to analyze: the DataFrame or key files have zero rows")
    acc = schema_analyzer(
        schema, total, split_keys=split_keys, servers=servers, windows=windows, value_bytes=value_bytes, cells_per_row=cells_per_row
    )
    template = acc.empty_like()
    check = KeyCheck.of(schema)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        return partial_batches(template, offsets, key_format, batches, order == "row_index", check)

    from pyspark.sql.types import BinaryType, StructField, StructType

    out = StructType([StructField("partial", BinaryType(), False)])
    # collect, not toLocalIterator: that runs the partitions one job at a time, on one core.
    # A partial is O(regions x windows), so all of them fit the driver.
    for blob in _collect_with_batch_rows(spark_of(pos_df), pos_df.mapInArrow(run, out)):
        part, checked = pickle.loads(blob)
        acc.merge(part)
        check.merge(checked)
    refuse_foreign_keys(check, allow_foreign_keys)
    if named:
        source += f" column {named}"
    return with_key_check(finish_schema(acc, schema, source=source, real_keys=True), check)


_BATCH_CONF = "spark.sql.execution.arrow.maxRecordsPerBatch"
_BATCH_ROWS = "131072"  # Spark's default 10,000 makes the per-batch numpy calls dominate


def spark_of(df: Any) -> Any:
    return df.sparkSession


def _collect_with_batch_rows(spark: Any, df: Any) -> list[bytes]:
    """The ``partial`` column of ``df``, collected with larger Arrow batches for the job."""
    before = spark.conf.get(_BATCH_CONF, None)
    spark.conf.set(_BATCH_CONF, _BATCH_ROWS)
    try:
        return [row["partial"] for row in df.collect()]
    finally:
        if before is None:
            spark.conf.unset(_BATCH_CONF)
        else:
            spark.conf.set(_BATCH_CONF, before)


def _live_splits(table: str, url: str | None) -> list[bytes]:
    if url is None:
        raise BadInput("split keys from a live table need its HBase url (url='host:2181')")
    from keyshape.spark.write import live_regions

    return list(live_regions(url, table).split_keys)


def analyze_path(
    path: str | Path,
    schema: KeySchema | str | Path,
    column: str | None = None,
    master: str | None = None,
    regions: int | None = None,
    auto_split_rows: int | None = None,
    servers: int | None = None,
    windows: int = 50,
    allow_foreign_keys: bool = False,
) -> Analysis:
    """What ``keyshape analyze SCHEMA --keys PATH --engine spark [--master URL]`` runs: :func:`analyze`
    of the keys in ``path`` (``column``) against ``schema`` on a session at ``master``, with
    ``regions``, ``servers``, ``windows`` and ``allow_foreign_keys`` as there; Spark's own errors
    become one-line BadInput. ``auto_split_rows`` is refused (the split replay is one pass).
    """
    if auto_split_rows is not None:
        raise BadInput("--auto-split replays the writes in one pass and cannot run on Spark; drop --auto-split or use --engine local")
    spark = session(master)
    try:
        return analyze(
            str(path), schema, column, regions=regions, servers=servers, windows=windows, spark=spark, allow_foreign_keys=allow_foreign_keys
        )
    except KeyshapeError:
        raise
    except Exception as exc:  # noqa: BLE001 - Py4J / PySpark errors: one line for the CLI
        if not type(exc).__module__.startswith(("pyspark", "py4j")):
            raise
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        reason = next((ln for ln in reversed(lines) if "Error" in ln or "Exception" in ln), lines[0] if lines else type(exc).__name__)
        raise BadInput(f"the Spark job failed: {reason[:300]}") from None


__all__ = ["analyze", "analyze_path", "partial_batches", "read_keys_df"]
