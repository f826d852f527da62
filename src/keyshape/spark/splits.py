"""``sample_splits``: split keys from a distributed sample of row keys, in HBase's byte order.

Spark's ``approxQuantile`` works on numbers only; binary keys must be ordered as HBase orders them
(unsigned bytes, lexicographically, a prefix first). A uniform sample of about ``sample_rows``
keys is drawn on the executors and only the sample travels to the driver, as Arrow buffers; it
is ordered there with Python's ``bytes`` order, which is HBase's, and cut into equal-count
quantiles by :func:`keyshape.core.splits.sample_splits` (HBase's ``TotalOrderPartitioner`` input
sampling does the same for bulk loads).
"""

from __future__ import annotations

from typing import Any

from keyshape.core import splits as core_splits
from keyshape.core.arrowkeys import from_arrow
from keyshape.errors import BadInput
from keyshape.spark.session import pyspark


def collect_keys(df: Any, column: str, key_format: str = "binary") -> list[bytes]:
    """The keys of one column of a (small) DataFrame, collected as Arrow, as ``bytes``."""
    table = df.select(column).toArrow()
    return from_arrow(table.column(0), key_format).tolist()


def key_column(df: Any, column: str | None) -> str:
    """``column``, or the DataFrame's first column; a KeyshapeError naming the columns if absent."""
    if column is None:
        return str(df.columns[0])
    if column not in df.columns:
        raise BadInput(f"no column {column!r}; columns: {', '.join(df.columns)}")
    return column


def sample_splits(
    df_keys: Any, regions: int, column: str | None = None, *, sample_rows: int = 100_000, seed: int = 0, key_format: str = "binary"
) -> list[bytes]:
    """``regions - 1`` split keys (fewer when the keys repeat) at equal-count quantiles of a
    uniform sample of about ``sample_rows`` keys of ``column`` (default: the first column) of the
    DataFrame ``df_keys``.

    Binary columns are the keys; string columns are read per ``key_format`` (toStringBinary
    text by default). Deterministic for the same data, partitioning and ``seed``.
    """
    pyspark()
    if regions < 2:
        raise BadInput(f"sample_splits needs at least 2 regions, got {regions}")
    column = key_column(df_keys, column)
    total = df_keys.count()
    if total == 0:
        raise BadInput("sample_splits: the DataFrame has no rows to sample")
    fraction = min(1.0, sample_rows / total)
    sample = df_keys.select(column) if fraction >= 1.0 else df_keys.select(column).sample(withReplacement=False, fraction=fraction, seed=seed)
    keys = collect_keys(sample, column, key_format)
    if not keys:
        keys = collect_keys(df_keys.select(column).limit(sample_rows), column, key_format)
    return core_splits.sample_splits(keys, regions)
