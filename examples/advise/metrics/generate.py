"""IoT metrics: 5,000 devices (Zipf 0.8), four metrics each, readings over 7 days.

Usage: python generate.py [OUT.parquet] [ROWS]   (default: metrics.parquet beside this file, 100,000 rows)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import START_MS, rows, write, zipf_ids  # noqa: E402

n = rows(100_000)
rng = np.random.default_rng(11)
devices = zipf_ids(rng, n, 5_000, 0.8)
t = START_MS + np.sort(rng.integers(0, 7 * 86_400_000, n))
out = write(
    {
        "device_id": [f"dev{d:06d}" for d in devices],
        "metric": rng.choice(["temp", "humidity", "pressure", "battery"], n, p=[0.4, 0.3, 0.2, 0.1]).tolist(),
        "ts": pa.array(t, type=pa.timestamp("ms")),
        "value": rng.normal(20.0, 5.0, n),
    },
    "metrics.parquet",
)
print(out)
