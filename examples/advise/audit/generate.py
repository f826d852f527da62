"""An audit log: 20,000 actors (Zipf 1.0) doing one of six actions, events over 30 days.

Usage: python generate.py [OUT.parquet] [ROWS]   (default: audit.parquet beside this file, 100,000 rows)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import START_MS, rows, write, zipf_ids  # noqa: E402

n = rows(100_000)
rng = np.random.default_rng(13)
t = START_MS + np.sort(rng.integers(0, 30 * 86_400_000, n))
out = write(
    {
        "event_time": pa.array(t, type=pa.timestamp("ms")),
        "event_id": np.arange(n, dtype=np.int64) * 7919 % 1_000_003 + 5_000_000_000,
        "actor": [f"actor{a:05d}" for a in zipf_ids(rng, n, 20_000, 1.0)],
        "action": rng.choice(["login", "logout", "read", "write", "grant", "delete"], n).tolist(),
        "resource": [f"/projects/{i % 997}/files/{i % 10007}" for i in range(n)],
    },
    "audit.parquet",
)
print(out)
