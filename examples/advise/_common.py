"""Shared by the scenario generators: a seeded Zipf draw and a Parquet writer (pyarrow only)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def zipf_ids(rng: np.random.Generator, n: int, cardinality: int, skew: float) -> np.ndarray:
    """``n`` draws of 0..cardinality-1, the k-th most popular with weight 1/(k+1)**skew, shuffled ranks."""
    weights = 1.0 / np.arange(1, cardinality + 1) ** skew
    ranks = rng.choice(cardinality, size=n, p=weights / weights.sum())
    return rng.permutation(cardinality)[ranks]


def write(columns: dict[str, object], default_name: str) -> Path:
    """Write the columns as Parquet to argv[1] (default: ``default_name`` beside the script)."""
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / default_name
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), out)
    return out


def rows(default: int) -> int:
    """Row count from argv[2], else ``default``."""
    return int(sys.argv[2]) if len(sys.argv) > 2 else default
