"""Workloads: the synthetic workload of a schema, and streaming readers for real keys.

The synthetic part -- a schema's ``[workload]`` section (:class:`WorkloadSpec`, :func:`parse_workload`)
and the key-field values it generates in write order (:func:`generate`, :func:`generate_sample`) --
lives in :mod:`keyshape.schema.synthetic` (the generators and their options are listed there) and is
re-exported here. This module adds what a load writes per row (:func:`row_values`) and the readers
of real keys and records from Parquet, ORC and CSV files (:func:`read_keys`, :func:`read_key_arrays`,
:func:`read_records`).
"""

from __future__ import annotations

import csv
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.core.arrowkeys import KEY_FORMATS, from_arrow
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.synthetic import (  # the synthetic workload, re-exported (it lives in schema/)
    DEFAULT_ROWS,
    GENERATORS,
    GeneratorSpec,
    WorkloadSpec,
    generate,
    generate_sample,
    parse_workload,
)

__all__ = [
    "DEFAULT_ROWS",
    "GENERATORS",
    "LOAD_QUALIFIER",
    "LOAD_VALUE_BYTES",
    "GeneratorSpec",
    "WorkloadSpec",
    "count_key_rows",
    "generate",
    "generate_sample",
    "key_file_parts",
    "key_files",
    "record_columns",
    "parse_workload",
    "read_key_arrays",
    "read_keys",
    "read_records",
    "row_value_bytes",
    "row_values",
]

# What one generated row stores, for every writer and model of it: ``keyshape load`` writes one
# cell ``<first family>:v`` per row, and the split simulation sizes HBase's memstores and store
# files from the same cell, so its predictions describe what a load does.
LOAD_QUALIFIER = b"v"
LOAD_VALUE_BYTES = 8  # the write index as a big-endian long, when [workload] sets no value_bytes
_WRITE_INDEX = struct.Struct(">q")


def row_value_bytes(workload: WorkloadSpec | None) -> int:
    """The value bytes of each row ``load`` writes: the ``workload``'s ``value_bytes`` when the
    schema sets it, else ``LOAD_VALUE_BYTES`` (the row's write index alone)."""
    given = None if workload is None else workload.value_bytes
    return LOAD_VALUE_BYTES if given is None else int(given)


def row_values(first: int, count: int, size: int = LOAD_VALUE_BYTES) -> list[bytes]:
    """The values of the ``count`` rows ``first .. first+count-1``, ``size`` bytes each: the write index as a
    big-endian long (so a reader can tell which write a cell came from; its low ``size`` bytes
    when ``size`` < 8), then filler that a block compressor cannot shrink (a 64-bit mix of the
    index and the position), so a store file holds what the split simulation counts."""
    if size < 0:
        raise KeyshapeError(f"value size must be >= 0 bytes, got {size}")
    if size <= LOAD_VALUE_BYTES:
        return [_WRITE_INDEX.pack(i)[LOAD_VALUE_BYTES - size :] for i in range(first, first + count)]
    words = -(-(size - LOAD_VALUE_BYTES) // 8)
    index = np.arange(first, first + count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        # splitmix64 of (index, word): different for every row and word, fixed for a row
        x = index[:, None] * np.uint64(0x9E3779B97F4A7C15) + (np.arange(1, words + 1, dtype=np.uint64)[None, :] * np.uint64(0xBF58476D1CE4E5B9))
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    head = index.astype(">i8").view(np.uint8).reshape(count, 8)
    body = np.concatenate([head, x.astype("<u8").view(np.uint8).reshape(count, 8 * words)], axis=1)
    return [row.tobytes() for row in body[:, :size]]


# ------------------------------------------------------------------------------------- readers


_KEY_FILE_SUFFIXES = (".parquet", ".pq", ".csv", ".orc", ".txt")


def _is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def _is_orc(path: Path) -> bool:
    return path.suffix.lower() == ".orc"


def key_files(path: str | Path) -> list[Path]:
    """The files behind ``path``: the file itself, the data files of a directory (what Spark and
    Hive write: ``part-*`` files; ``_SUCCESS``, ``.crc`` and hidden files skipped), or the
    matches of a glob; sorted by path, which is the order their rows are read in."""
    import glob

    p = Path(path)
    if p.is_file():
        return [p]
    if p.is_dir():
        found = sorted(
            f
            for f in p.rglob("*")
            if f.is_file()
            and not any(part.startswith((".", "_")) for part in f.relative_to(p).parts)
            and (f.suffix.lower() in _KEY_FILE_SUFFIXES or not f.suffix)
        )
        if not found:
            raise KeyshapeError(f"{p}: the directory holds no Parquet, ORC or CSV files")
        return found
    matches = sorted(Path(m) for m in glob.glob(str(path), recursive=True) if Path(m).is_file())
    if not matches:
        raise KeyshapeError(f"{p}: does not exist (no such file or directory, and no file matches it as a glob)")
    return matches


def _open_columnar(p: Path) -> tuple[str, Any, list[str]]:
    """("Parquet" | "ORC", the pyarrow file reader, column names) of a Parquet or ORC file."""
    import pyarrow as pa

    if not p.exists():
        raise KeyshapeError(f"{p}: no such file")
    kind = "Parquet" if _is_parquet(p) else "ORC"
    try:
        if kind == "Parquet":
            import pyarrow.parquet as pq

            f = pq.ParquetFile(p)
        else:  # pyarrow.orc imports pyarrow.fs and ssl (30 ms): only for ORC files
            import pyarrow.orc as porc

            f = porc.ORCFile(p)
        names = f.schema_arrow.names if kind == "Parquet" else f.schema.names
    except (pa.ArrowException, OSError) as exc:
        raise KeyshapeError(
            f"{p}: not a readable {kind} file ({exc}); give a {kind} file, "
            "or a CSV file with a name that does not end in "
            f"{'.parquet/.pq' if kind == 'Parquet' else '.orc'}"
        ) from None
    return kind, f, names


def key_file_parts(path: str | Path) -> list[tuple[Path, str, int, int]] | None:
    """``(file, "Parquet" | "ORC", part index, rows)`` for every Parquet row group (every ORC
    file) behind ``path``, in read order, from the footers alone; None when any file is CSV."""
    out: list[tuple[Path, str, int, int]] = []
    for f in key_files(path):
        if not (_is_parquet(f) or _is_orc(f)):
            return None
        kind, reader, _ = _open_columnar(f)
        if kind == "Parquet":
            meta = reader.metadata
            out += [(f, kind, i, meta.row_group(i).num_rows) for i in range(meta.num_row_groups)]
        else:
            out.append((f, kind, 0, reader.nrows))
    return out


def count_key_rows(path: str | Path) -> int | None:
    """Rows in the key files behind ``path`` when their footers say so without reading them
    (Parquet, ORC); None when any file is CSV."""
    parts = key_file_parts(path)
    return None if parts is None else sum(p[3] for p in parts)


def _batches(path: str | Path, columns: list[str] | None, chunk_rows: int, first_only: bool = False) -> Iterator[Any]:
    """pyarrow RecordBatches of at most ``chunk_rows`` rows, read incrementally, file by file;
    ``columns`` None reads every column, or only the first with ``first_only``."""
    for f in key_files(path):
        yield from _file_batches(f, columns, chunk_rows, first_only)


def _file_batches(p: Path, columns: list[str] | None, chunk_rows: int, first_only: bool) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    if not p.exists():
        raise KeyshapeError(f"{p}: no such file")
    if _is_parquet(p) or _is_orc(p):
        kind, f, names = _open_columnar(p)
        missing = [c for c in columns or [] if c not in names]
        if missing:
            raise KeyshapeError(f"{p}: no column {missing[0]!r}; columns: {', '.join(names)}")
        columns = columns or (names[:1] if first_only else None)
        if kind == "Parquet":
            yield from f.iter_batches(batch_size=chunk_rows, columns=columns)
            return
        for i in range(f.nstripes):
            batch = f.read_stripe(i, columns=columns)
            for start in range(0, batch.num_rows, chunk_rows):
                yield batch.slice(start, chunk_rows)
        return
    from keyshape.core.files import check_text_input

    # A Parquet file named .csv, UTF-16 or binary data: named here, not as a decode error (issue 40).
    check_text_input(p, "a CSV of keys (a header line, then one key per line; or name a Parquet/ORC file .parquet/.orc)")
    with p.open("r", encoding="utf-8", errors="replace", newline="") as fh:
        # The csv module reads the header as pyarrow reads the data: quoted names may hold commas.
        names = [h.strip() for h in next(csv.reader(fh), [])]
    if not names:
        # pyarrow's own word for it is a traceback ("Empty CSV file").
        raise KeyshapeError(f"{p}: empty file: a key CSV starts with a header line naming its columns, then one key per line")
    missing = [c for c in columns or [] if c not in names]
    if missing:
        shown = ", ".join(names)
        if len(shown) > 200 or not shown.isprintable():
            # Not a header row (binary data, or a file without one): do not echo it back.
            raise KeyshapeError(
                f"{p}: no column {missing[0]!r}; the first line is not a CSV header row: give a CSV whose first line names the columns, or Parquet"
            )
        raise KeyshapeError(f"{p}: no column {missing[0]!r}; columns: {shown}")
    # Read every column as text: keys like "007" must keep their zeros.
    convert = pcsv.ConvertOptions(column_types={n: pa.string() for n in names}, include_columns=columns, strings_can_be_null=False)
    try:
        reader = pcsv.open_csv(p, read_options=pcsv.ReadOptions(block_size=1 << 22), convert_options=convert)
        for batch in reader:
            for start in range(0, batch.num_rows, chunk_rows):
                yield batch.slice(start, chunk_rows)
    except pa.ArrowInvalid as exc:
        # A TOML given as --keys, a broken quote, a ragged row: pyarrow's words, with the file's name.
        detail = str(exc).split("\n")[0][:160]
        raise KeyshapeError(f"{p}: not a CSV of keys ({detail}); give a CSV with a header line and one key per line, or Parquet/ORC") from None


def read_key_arrays(path: str | Path, column: str | None = None, chunk_rows: int = 100_000, key_format: str = "binary") -> Iterator[KeyArray]:
    """Stream row keys from Parquet, ORC or CSV files as KeyArrays: no Python object per key.

    ``path`` is a file, a directory of data files or a glob (see :func:`key_files`). ``column``
    defaults to the first column. Binary columns are taken as is; text is read per
    ``key_format`` (see :func:`keyshape.core.arrowkeys.from_arrow`). Batch by batch, never whole:
    ``chunk_rows`` keys at most per array.
    """
    if key_format not in KEY_FORMATS:
        raise KeyshapeError(f"unknown key_format {key_format!r}; use binary, raw or hex")
    for batch in _batches(path, [column] if column else None, chunk_rows, first_only=True):
        try:
            yield from_arrow(batch.column(0), key_format)
        except ValueError as exc:
            raise KeyshapeError(f"{path}: {exc}") from None


def read_keys(path: str | Path, column: str | None = None, chunk_rows: int = 100_000, key_format: str = "binary") -> Iterator[list[bytes]]:
    """Stream row keys from a CSV, Parquet (``.parquet``/``.pq``) or ORC file, a directory of
    them or a glob, in chunks of bytes.

    ``path`` is a file, a directory or a glob (:func:`key_files`); ``column`` defaults to the first
    column; each chunk holds at most ``chunk_rows`` keys. Binary Parquet columns are taken as is; text is read
    per ``key_format``: ``"binary"`` (HBase ``toStringBinary`` form, ``\\xNN`` escapes, what the
    HBase shell prints), ``"raw"`` (the UTF-8 bytes of the text) or ``"hex"``. The file is read
    batch by batch, never whole. :func:`read_key_arrays` is the same without ``bytes`` per key.
    """
    for keys in read_key_arrays(path, column, chunk_rows, key_format):
        yield keys.tolist()


def read_records(path: str | Path, columns: list[str] | None = None, chunk_rows: int = 100_000) -> Iterator[dict[str, np.ndarray | list]]:
    """Stream records from CSV or Parquet as column chunks (name -> numpy array or list).

    Parquet numeric columns become numpy arrays; everything else (all CSV columns, read as text so
    leading zeros survive) becomes a list, which :meth:`KeySchema.encode_many` parses per field.
    ``path`` is a file, a directory or a glob (:func:`key_files`); ``columns`` the columns to read
    (None: all); each chunk holds at most ``chunk_rows`` records.
    """
    for batch in _batches(path, columns, chunk_rows):
        yield record_columns(batch)


def record_columns(batch: Any, names: Sequence[str] | None = None) -> dict[str, np.ndarray | list]:
    """The columns of a pyarrow RecordBatch as :meth:`KeySchema.encode_many` takes them: numeric
    columns without nulls as numpy arrays, Arrow timestamps as int64 milliseconds since the epoch
    (what timestamp fields hold), everything else as a list. ``batch`` is the RecordBatch;
    ``names`` the columns to take, in that order (None: all of them)."""
    import pyarrow as pa

    out: dict[str, np.ndarray | list] = {}
    for name in names if names is not None else batch.schema.names:
        col = batch.column(batch.schema.get_field_index(name))
        kind = str(col.type)
        if pa.types.is_timestamp(col.type) and col.null_count == 0:
            out[name] = col.cast(pa.timestamp("ms", col.type.tz), safe=False).cast(pa.int64()).to_numpy()
        elif kind.startswith(("int", "uint", "double", "float")) and col.null_count == 0:
            out[name] = col.to_numpy(zero_copy_only=False)
        else:
            out[name] = col.to_pylist()
    return out
