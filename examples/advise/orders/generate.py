"""Orders by user: 1M users, mildly skewed (Zipf 0.8), the sample spanning 90 days.

Usage: python generate.py [OUT.parquet] [ROWS]   (default: orders.parquet beside this file, 100,000 rows)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import START_MS, rows, write, zipf_ids  # noqa: E402

n = rows(100_000)
rng = np.random.default_rng(7)
users = zipf_ids(rng, n, 200_000, 0.8)
t = START_MS + np.cumsum(rng.exponential(90 * 86_400_000 / n, n)).astype(np.int64)  # 90 days
out = write(
    {
        "user_id": [f"u{u:07d}" for u in users],
        "order_id": np.arange(10_000_000, 10_000_000 + n, dtype=np.int64),
        "order_time": pa.array(t, type=pa.timestamp("ms")),
        "amount_cents": rng.integers(100, 50_000, n),
        "status": rng.choice(["new", "paid", "shipped", "returned"], n, p=[0.1, 0.3, 0.55, 0.05]).tolist(),
        "address": [f"{i % 9999} Main Street, Springfield" for i in range(n)],
    },
    "orders.parquet",
)
print(out)
