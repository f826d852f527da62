"""Distribution statistics over per-region counts, and key-length bookkeeping.

Everything here works on plain numpy arrays of counts (one entry per region, in key order), so the
same numbers can be computed for a simulated workload, a file of real keys or a live table.
"""

from __future__ import annotations

import decimal
import functools
from dataclasses import dataclass

import numpy as np

from keyshape.errors import BadInput

# Fixed bytes of one HBase KeyValue besides row, family, qualifier and value: key length (4),
# value length (4), row length (2), family length (1), timestamp (8), type (1).
KEYVALUE_FIXED_BYTES = 20


def percent(x: float) -> str:
    """A share as people read it: 12.5% stays 12.5% (not 12%), a share of a few thousand regions
    keeps enough digits not to read 0.0%, and whole numbers drop their ".0"."""
    pct = 100 * x
    if pct == 0 or pct >= 99.95:
        return f"{pct:.0f}%"
    digits = 1 if pct >= 0.1 else 2 if pct >= 0.01 else 3
    return _half_up(pct, digits).rstrip("0").rstrip(".") + "%"


def percent_cell(x: float) -> str:
    """A share in a table column: always one decimal, rounded half up like the HTML report's hover
    (JavaScript's toFixed), so 6.25% reads 6.3% in the table and on the heat map alike."""
    return _half_up(100 * x, 1) + "%"


def _half_up(value: float, digits: int) -> str:
    # The float's exact binary value, rounded half up: what JavaScript's toFixed does (Python's
    # format rounds ties to even: 6.25 -> "6.2" where the browser shows "6.3").
    return str(decimal.Decimal(value).quantize(decimal.Decimal(1).scaleb(-digits), rounding=decimal.ROUND_HALF_UP))


def _as_counts(counts: np.ndarray | list[int]) -> np.ndarray:
    arr = np.asarray(counts, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise BadInput("counts must be a non-empty one-dimensional array (one entry per region)")
    if np.any(arr < 0):
        raise BadInput("counts must not be negative")
    return arr


def coefficient_of_variation(counts: np.ndarray | list[int]) -> float:
    """Population standard deviation over mean of ``counts`` (0.0 when all are zero or equal)."""
    arr = _as_counts(counts)
    mean = arr.mean()
    return float(arr.std() / mean) if mean > 0 else 0.0


def gini(counts: np.ndarray | list[int]) -> float:
    """Gini coefficient of ``counts``: 0 = perfectly even, (n-1)/n = everything in one region.

    Uses the sorted-rank form ``sum((2i - n - 1) * x_i) / (n * sum(x))`` (i = 1..n, ascending),
    which equals the mean absolute difference over twice the mean, in O(n log n).
    """
    arr = np.sort(_as_counts(counts))
    n = arr.size
    total = arr.sum()
    if total == 0:
        return 0.0
    ranks = np.arange(1, n + 1, dtype=np.float64)
    return float(np.sum((2 * ranks - n - 1) * arr) / (n * total))


def deviation_rate(counts: np.ndarray | list[int]) -> float:
    """The usual load-balance measure ``(max - min) / mean`` of ``counts`` (0.0 when all are zero)."""
    arr = _as_counts(counts)
    mean = arr.mean()
    return float((arr.max() - arr.min()) / mean) if mean > 0 else 0.0


@dataclass(frozen=True)
class Distribution:
    """How a total spreads over buckets (regions or servers).

    - ``total``: the sum of the counts; ``buckets``: how many; ``min`` / ``max`` / ``mean``: the
      smallest, largest and mean count; ``max_over_mean``: ``max / mean``; ``top_share``: the
      largest count's share of ``total``; ``empty``: buckets with nothing.
    - ``excess`` places the largest share between a fair share (0.0) and everything in one bucket
      (1.0); it lets one threshold serve any number of regions.
    - ``cv``, ``gini``, ``deviation_rate``: :func:`coefficient_of_variation`, :func:`gini`,
      :func:`deviation_rate` of the counts.
    - ``max_over_mean_upper``: for a chance baseline (:func:`uniform_baseline`), the largest
      max/mean any of its trials showed. The mean of the trials is a typical value, not a bound:
      with a few rows per region, half of all random spreads show a larger maximum than it.
    """

    total: int
    buckets: int
    min: int
    max: int
    mean: float
    max_over_mean: float
    top_share: float
    excess: float
    cv: float
    gini: float
    deviation_rate: float
    empty: int
    max_over_mean_upper: float = 0.0


def distribution(counts: np.ndarray | list[int]) -> Distribution:
    """Summarize the per-bucket ``counts``: max/mean, top share, CV, Gini, deviation rate, empty
    buckets."""
    arr = _as_counts(counts)
    n = arr.size
    total = float(arr.sum())
    mean = total / n
    top = float(arr.max())
    top_share = top / total if total > 0 else 0.0
    fair = 1.0 / n
    excess = (top_share - fair) / (1.0 - fair) if n > 1 and total > 0 else (1.0 if total > 0 else 0.0)
    return Distribution(
        total=int(total),
        buckets=n,
        min=int(arr.min()),
        max=int(top),
        mean=mean,
        max_over_mean=top / mean if mean > 0 else 0.0,
        top_share=top_share,
        excess=max(0.0, excess),
        cv=coefficient_of_variation(arr),
        gini=gini(arr),
        deviation_rate=deviation_rate(arr),
        empty=int(np.count_nonzero(arr == 0)),
    )


def uniform_baseline(rows: int, buckets: int, *, trials: int = 64, seed: int = 12345) -> Distribution:
    """The distribution a perfectly random spread of ``rows`` over ``buckets`` would show.

    Few rows over many regions look uneven by chance alone; the verdict compares against this so
    that noise is not called a hotspot. Deterministic (fixed seed); returns the mean of ``trials``.
    """
    if rows <= 0 or buckets <= 0:
        return distribution(np.zeros(max(buckets, 1)))
    stats = [distribution(d) for d in _uniform_draws(rows, buckets, trials, seed)]
    avg = lambda name: float(np.mean([getattr(s, name) for s in stats]))  # noqa: E731
    return Distribution(
        total=rows,
        buckets=buckets,
        min=int(avg("min")),
        max=int(avg("max")),
        mean=rows / buckets,
        max_over_mean=avg("max_over_mean"),
        top_share=avg("top_share"),
        excess=avg("excess"),
        cv=avg("cv"),
        gini=avg("gini"),
        deviation_rate=avg("deviation_rate"),
        empty=int(round(avg("empty"))),
        max_over_mean_upper=max(s.max_over_mean for s in stats),
    )


@functools.lru_cache(maxsize=4096)
def chance_top_share(rows: int, buckets: int, *, trials: int = 64, seed: int = 12345) -> float:
    """``uniform_baseline(rows, buckets).top_share`` (same draws), without the other statistics:
    cheap enough to ask for every interval of a live watch."""
    if rows <= 0 or buckets <= 0:
        return 0.0
    return float(np.mean(_uniform_draws(rows, buckets, trials, seed).max(axis=1))) / rows


def _uniform_draws(rows: int, buckets: int, trials: int, seed: int) -> np.ndarray:
    """``trials`` counts of ``rows`` spread at random over ``buckets`` (deterministic: ``seed``)."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(rows, np.full(buckets, 1.0 / buckets), size=trials)


class KeyLengths:
    """Running min / mean / max of key lengths and the total key bytes, fed chunk by chunk."""

    def __init__(self) -> None:
        self.count = 0
        self.total = 0
        self.min: int | None = None
        self.max: int | None = None

    def update(self, lengths: np.ndarray) -> None:
        """Add the lengths (in bytes) of one chunk of keys."""
        if lengths.size == 0:
            return
        self.count += int(lengths.size)
        self.total += int(lengths.sum())
        lo, hi = int(lengths.min()), int(lengths.max())
        self.min = lo if self.min is None else min(self.min, lo)
        self.max = hi if self.max is None else max(self.max, hi)

    def merge(self, other: KeyLengths) -> None:
        """Add the lengths another KeyLengths has seen."""
        self.count += other.count
        self.total += other.total
        for name, pick in (("min", min), ("max", max)):
            a, b = getattr(self, name), getattr(other, name)
            setattr(self, name, b if a is None else a if b is None else pick(a, b))

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else 0.0


def key_overhead_bytes(key_bytes_total: int, cells_per_row: int) -> int:
    """Bytes the row key costs on disk and in the block cache: HBase repeats it in every cell.

    This is the memory argument for short keys: a 100-byte key on a row of 10 cells costs
    1,000 bytes per row before any value is stored (uncompressed, no data block encoding).
    """
    if cells_per_row < 1:
        raise BadInput("cells_per_row must be at least 1 (each row stores at least one cell)")
    return int(key_bytes_total) * int(cells_per_row)


def estimated_row_bytes(key_bytes: np.ndarray, rows: np.ndarray, cells_per_row: int, value_bytes: int) -> np.ndarray:
    """Estimated uncompressed store bytes per region.

    Per row: ``cells_per_row`` KeyValues, each carrying the row key plus
    ``KEYVALUE_FIXED_BYTES`` (lengths, timestamp, type; family and qualifier names are ignored),
    plus ``value_bytes`` of values for the whole row.
    """
    return np.asarray(key_bytes, dtype=np.float64) * cells_per_row + np.asarray(rows, dtype=np.float64) * (
        cells_per_row * KEYVALUE_FIXED_BYTES + value_bytes
    )
