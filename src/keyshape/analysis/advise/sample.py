"""The advisor's sample: real records of the entity (not keys), read once, typed, in write order.

Parquet, ORC and CSV files, a directory of them or a glob (``keyshape.workload.key_files``); pyarrow
infers the column types (CSV too), and ``[types]`` of the workload file overrides them. Timestamps
become int64 milliseconds, the form keyshape's timestamp fields encode. The records are sorted by
the event-time field when there is one: the order the table would have received them in.

Besides the cut, :class:`DataStats` keeps what only the whole data knows: its exact row count, its
event-time span, the distinct values of each field and the heaviest values of the fields a key
could lead with. The in-process route computes them over the records it read; the Spark route
(:func:`keyshape.spark.advise.spark_sample`) over a dataset too big to read here, and then draws the
sample itself (:func:`sample_from_table` types it the same way).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.analysis.advise.spec import AdviseError, AdviseSpec
from keyshape.workload import key_files

__all__ = ["DataStats", "Sample", "lead_fields", "read_sample", "sample_from_table", "top_values"]

DEFAULT_MAX_ROWS = 200_000  # enough for stable per-pattern counts; a bigger sample is cut evenly
HEAVY_VALUES = 10  # the heaviest values kept per lead field


@dataclass(frozen=True)
class DataStats:
    """The whole data's numbers, which a cut of it can only extrapolate."""

    rows: int
    span_seconds: float  # event time from the earliest record to the latest (0 without a time field)
    distinct: dict[str, int]  # field -> distinct values (HyperLogLog on the Spark route: within ~2 %)
    heavy: dict[str, list[tuple[Any, int]]]  # lead field -> its heaviest values and their rows, heaviest first (rows > 1)
    engine: str = "local"

    def top_share(self, name: str) -> float:
        """The share of all rows the heaviest value of ``name`` holds (0 when none repeats)."""
        values = self.heavy.get(name) or []
        return values[0][1] / self.rows if values and self.rows else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "rows": self.rows,
            "span_seconds": self.span_seconds,
            "distinct": dict(self.distinct),
            "heavy": {n: [[_plain(v), c] for v, c in vs] for n, vs in self.heavy.items()},
        }


def _plain(v: Any) -> Any:
    return v.decode("latin-1") if isinstance(v, bytes) else v


def lead_fields(spec: AdviseSpec) -> list[str]:
    """The fields a key could lead with: every field the workload names but the event time (a
    design leading with the time is a sequential-write design, whose skew is the time itself)."""
    return sorted(f for f in spec.fields_used() if f != spec.time_field)


@dataclass
class Sample:
    """Typed columns of the sample (field -> numpy array or list), in write order."""

    columns: dict[str, Any]
    types: dict[str, str]  # field -> keyshape field type
    rows: int
    value_bytes: int  # mean bytes of the columns that are not key fields (a row's cells besides the key)
    source: str
    span_seconds: float  # event time from the first record to the last (0 without a time field)
    cells: int = 1  # cells a row holds besides the key (the non-key columns; at least 1)
    stats: DataStats | None = None  # the whole data's numbers (None: the sample is all there is)

    @property
    def total_rows(self) -> int:
        """Rows of the whole data the sample was cut from."""
        return self.stats.rows if self.stats is not None else self.rows

    @property
    def thinning(self) -> float:
        """How many records of the whole data each sampled record stands for (1.0: no cut)."""
        return max(1.0, self.total_rows / self.rows) if self.rows else 1.0

    def take(self, index: np.ndarray) -> dict[str, Any]:
        """The columns of the rows at ``index`` (in that order)."""
        out: dict[str, Any] = {}
        for name, col in self.columns.items():
            out[name] = col[index] if isinstance(col, np.ndarray) else [col[i] for i in index.tolist()]
        return out


def _kind(arrow_type: Any) -> str | None:
    import pyarrow as pa

    if pa.types.is_timestamp(arrow_type) or pa.types.is_date(arrow_type):
        return "timestamp"
    if pa.types.is_integer(arrow_type):
        return "int64"
    if pa.types.is_floating(arrow_type):
        return "float64"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "string"
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return "bytes"
    return None


def _read_table(path: Path, declared: dict[str, str], encoding: str = "utf-8") -> Any:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            return pq.ParquetFile(path).read()  # not pq.read_table: its dataset layer imports pandas (1 s)
        if suffix == ".orc":
            import pyarrow.orc as porc

            return porc.read_table(path)
        # Columns declared string are read as text: "007" must keep its zeros (names the file
        # lacks are ignored by pyarrow; the missing-field check comes after).
        types = {c: pa.string() if t == "string" else pa.binary() for c, t in declared.items() if t in ("string", "bytes")}
        # Arrow reads UTF-8 itself; another encoding is transcoded to UTF-8 as the file is read.
        read = pcsv.ReadOptions() if codecs.lookup(encoding).name == "utf-8" else pcsv.ReadOptions(encoding=encoding)
        while True:
            try:
                return pcsv.read_csv(path, read_options=read, convert_options=pcsv.ConvertOptions(column_types=types))
            except pa.ArrowInvalid as exc:
                # A column of text that is not UTF-8: read it as bytes, so check_text names it.
                bad = re.search(r"column #(\d+): CSV conversion error to string: invalid UTF8", str(exc))
                if bad is None:
                    raise
                name = pcsv.open_csv(path, read_options=pcsv.ReadOptions(encoding="latin-1")).schema.names[int(bad.group(1))]
                if name in types:
                    raise
                types[name] = pa.binary()
    except (pa.ArrowInvalid, OSError) as exc:
        raise AdviseError(f"{path}: cannot read the sample ({str(exc).splitlines()[0]}); give Parquet, ORC or CSV with a header row") from None


def _column(col: Any, kind: str, declared: str, name: str, source: str) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if col.null_count:
        raise AdviseError(
            f"{source}: field {name!r} has {col.null_count} empty values; a key field needs a value in every record (fill or drop them)"
        )
    if kind == "timestamp":
        if pa.types.is_timestamp(col.type):
            return col.cast(pa.timestamp("ms", col.type.tz), safe=False).cast(pa.int64()).to_numpy()
        if pa.types.is_date(col.type):
            return col.cast(pa.timestamp("ms"), safe=False).cast(pa.int64()).to_numpy()
        if pa.types.is_integer(col.type):
            return col.cast(pa.int64()).to_numpy()
        try:
            return pc.cast(col, pa.timestamp("ms")).cast(pa.int64()).to_numpy()
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise AdviseError(f"{source}: field {name!r} is declared timestamp but holds {col.type} values that are not times; fix [types]") from None
    try:
        if kind in ("int64", "int32"):
            return col.cast(pa.int64()).to_numpy()
        if kind == "float64":
            return col.cast(pa.float64()).to_numpy()
        if kind == "string":
            return col.cast(pa.string()).to_pylist()
        return col.cast(pa.binary()).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        raise AdviseError(f"{source}: field {name!r} ({col.type}) cannot be read as {declared}; fix [types].{name}") from None


def read_sample(path: str | Path, spec: AdviseSpec, max_rows: int = DEFAULT_MAX_ROWS) -> Sample:
    """Read the records behind ``path`` with the fields ``spec`` uses, typed and in write order.

    At most ``max_rows`` rows are kept: a larger sample is thinned evenly (every k-th record), so
    the time span and the mix stay those of the whole sample; :attr:`Sample.stats` holds the whole
    data's row count, span, distinct and heaviest values.
    """
    import pyarrow as pa

    files = key_files(path)
    tables = [_read_table(f, spec.types, spec.encoding) for f in files]
    try:
        table = pa.concat_tables(tables, promote_options="default") if len(tables) > 1 else tables[0]
    except pa.ArrowInvalid as exc:
        raise AdviseError(f"{path}: the sample's files disagree on their columns ({exc}); give files of one layout") from None
    check_table(table, spec, str(path))
    check_text(table, spec, str(path))
    stats = _local_stats(table, spec, str(path))
    if table.num_rows > max_rows:
        step = table.num_rows / max_rows
        table = table.take(pa.array((np.arange(max_rows) * step).astype(np.int64)))
    return sample_from_table(table, spec, str(path), stats)


def check_table(table: Any, spec: AdviseSpec, source: str) -> None:
    """Refuse records that are empty or lack a field the workload names."""
    if table.num_rows == 0:
        raise AdviseError(f"{source}: the sample holds no records; give at least a few thousand")
    missing = [n for n in sorted(spec.fields_used()) if n not in table.column_names]
    if missing:
        raise AdviseError(f"{source}: the sample has no field {missing[0]!r} (the workload file names it); columns: {', '.join(table.column_names)}")


def check_text(table: Any, spec: AdviseSpec, source: str) -> None:
    """Refuse a field read as bytes because its text is not UTF-8 (a Latin-1 CSV): typed
    ``bytes`` silently, every proposed key would hold the file's bytes, where a Java writer's
    ``Bytes.toBytes(String)`` writes UTF-8 keys that differ. Declared ``bytes`` in ``[types]``, it
    is taken as bytes."""
    import pyarrow as pa

    for name in sorted(spec.fields_used()):
        if name not in table.column_names or spec.types.get(name) == "bytes":
            continue
        col = table.column(name)
        if not (pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type)):
            continue
        for value in col.to_pylist():
            if value is None:
                continue
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                guess = "cp1252" if any(0x80 <= b <= 0x9F for b in value) else "latin-1"
                shown = value.decode(guess, errors="replace")
                raise AdviseError(
                    f"{source}: field {name!r} is not UTF-8 text ({value[:24]!r} reads as {shown[:24]!r} in {guess}); "
                    f'declare it in the workload file, [data] encoding = "{guess}", or [types].{name} = "bytes" to key the raw bytes'
                ) from None


def time_millis(col: Any, spec: AdviseSpec, source: str) -> Any:
    """The event-time column as int64 milliseconds (as the sample holds it)."""
    assert spec.time_field is not None
    return _column(col, "timestamp", spec.types.get(spec.time_field, "timestamp"), spec.time_field, source)


def _local_stats(table: Any, spec: AdviseSpec, source: str) -> DataStats:
    """Exact statistics of every record read (the in-process route's :class:`DataStats`)."""

    span = 0.0
    if spec.time_field:
        t = time_millis(table.column(spec.time_field), spec, source)
        span = float(t.max() - t.min()) / 1000.0
    distinct = {n: _distinct(table.column(n)) for n in sorted(spec.fields_used()) if n != spec.time_field}
    # A field whose every value is distinct has no heavy value: skip counting them (a million ids'
    # counts cost ~100 MiB for nothing).
    heavy = {n: top_values(table.column(n)) if distinct[n] < table.num_rows else [] for n in lead_fields(spec)}
    return DataStats(rows=table.num_rows, span_seconds=span, distinct=distinct, heavy=heavy)


def _distinct(col: Any) -> int:
    """Distinct values of a column: numbers by sorting a copy (a tenth of the memory of
    ``count_distinct``'s hash table on a million ids), the rest by hashing."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)) and not col.null_count:
        return int(len(np.unique(col.to_numpy())))
    return int(pc.count_distinct(col).as_py())


def top_values(col: Any, k: int = HEAVY_VALUES) -> list[tuple[Any, int]]:
    """The ``k`` values of an Arrow column on the most rows, with their rows: heaviest first, ties
    by value (as Spark's ``orderBy(desc(count), asc(value))``), only values on more than one row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    counts = pc.value_counts(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col)
    table = pa.table({"v": counts.field("values"), "n": counts.field("counts")})
    table = table.filter(pc.greater(table.column("n"), 1))
    top = table.take(pc.sort_indices(table, sort_keys=[("n", "descending"), ("v", "ascending")])[:k])
    return [(v, int(n)) for v, n in zip(top.column("v").to_pylist(), top.column("n").to_pylist())]


def _value_bytes(table: Any, names: list[str]) -> int:
    """Mean bytes a row's ``names`` columns hold as cell values: text and bytes by their length,
    fixed-width types by their width (not Arrow's buffers, whose offsets and bitmaps differ between
    a file read here and the same records collected from Spark)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not names:
        return 0
    total = 0
    for name in names:
        col = table.column(name)
        t = col.type
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
            total += int(pc.sum(pc.binary_length(col)).as_py() or 0)
        else:
            try:
                total += max(1, t.bit_width // 8) * (len(col) - col.null_count)
            except ValueError:  # not fixed-width (lists, structs): Arrow's own buffers
                total += col.nbytes
    return int(round(total / table.num_rows))


def sample_from_table(table: Any, spec: AdviseSpec, source: str, stats: DataStats | None = None) -> Sample:
    """The :class:`Sample` of an Arrow table of records (already cut to its size): the fields
    ``spec`` uses, typed, sorted by the event time (stably: ties keep the table's order)."""
    check_table(table, spec, source)
    needed = sorted(spec.fields_used())
    types: dict[str, str] = {}
    columns: dict[str, Any] = {}
    for name in needed:
        col = table.column(name).combine_chunks()
        inferred = _kind(col.type)
        kind = spec.types.get(name, inferred)
        if kind is None:
            raise AdviseError(f"{source}: field {name!r} has type {col.type}, which a key field cannot hold; declare it in [types]")
        if spec.time_field == name and kind != "timestamp":
            kind = "timestamp"  # the event-time field is a time whatever the file stored it as
        types[name] = "int64" if kind == "int32" else kind
        columns[name] = _column(col, types[name], kind, name, source)
    others = [n for n in table.column_names if n not in spec.fields_used()]
    value_bytes = _value_bytes(table, others)
    span = 0.0
    if spec.time_field:
        t = columns[spec.time_field]
        order = np.argsort(t, kind="stable")
        columns = {n: (c[order] if isinstance(c, np.ndarray) else [c[i] for i in order.tolist()]) for n, c in columns.items()}
        span = float(t[order[-1]] - t[order[0]]) / 1000.0
    if stats is not None:
        span = stats.span_seconds  # the whole data's: a cut may miss the first and last records
    return Sample(
        columns=columns,
        types=types,
        rows=table.num_rows,
        value_bytes=value_bytes,
        source=source,
        span_seconds=span,
        cells=max(1, len(others)),
        stats=stats,
    )
