"""``encode_keys``: the row key column of a DataFrame, built with ``KeySchema.encode_many`` on Arrow
record batches (``mapInArrow``), byte for byte what ``encode_many`` gives locally."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from keyshape.core.arrowkeys import to_arrow
from keyshape.errors import BadInput
from keyshape.schema import KeySchema
from keyshape.spark.session import as_schema, pyspark
from keyshape.workload import record_columns


def encode_batches(schema: KeySchema, batches: Iterator[Any], out_col: str) -> Iterator[Any]:
    """Each record batch with the encoded row keys appended as binary column ``out_col``."""
    names = schema.field_names
    for batch in batches:
        keys = schema.encode_many(record_columns(batch, names), as_array=True)
        yield batch.append_column(out_col, to_arrow(keys))


def encode_keys(df: Any, schema: KeySchema | str | Path, out_col: str = "rowkey") -> Any:
    """``df`` with a binary column ``out_col`` holding each row's key under ``schema``.

    The DataFrame needs one column per key field, named like the field (numbers as integer or
    double columns, timestamps as Spark timestamps or epoch milliseconds, strings and bytes as
    string / binary columns). Rows are encoded per Arrow batch with keyshape's vectorized
    encoders: the result equals ``schema.encode_many`` on the same values. Lazy, like any
    transformation.
    """
    pyspark()
    from pyspark.sql.types import BinaryType, StructField, StructType

    schema = as_schema(schema)
    missing = [n for n in schema.field_names if n not in df.columns]
    if missing:
        raise BadInput(f"encode_keys: the DataFrame has no column for key field(s) {', '.join(missing)}; columns: {', '.join(df.columns)}")
    if out_col in df.columns:
        raise BadInput(f"encode_keys: the DataFrame already has a column {out_col!r}; choose another out_col")
    out_schema = StructType([*df.schema.fields, StructField(out_col, BinaryType(), True)])

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        return encode_batches(schema, batches, out_col)

    return df.mapInArrow(run, out_schema)
