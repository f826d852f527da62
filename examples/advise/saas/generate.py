"""A multi-tenant SaaS table: 500 tenants with a Zipf 1.1 mix (the largest writes ~15 %), 30 days.

Usage: python generate.py [OUT.parquet] [ROWS]   (default: saas.parquet beside this file, 100,000 rows)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import START_MS, rows, write, zipf_ids  # noqa: E402

n = rows(100_000)
rng = np.random.default_rng(19)
t = START_MS + np.sort(rng.integers(0, 30 * 86_400_000, n))
out = write(
    {
        "tenant_id": [f"t{x:04d}" for x in zipf_ids(rng, n, 500, 1.1)],
        "doc_id": [f"{i * 2654435761 % 4294967296:010d}" for i in range(n)],
        "updated_at": pa.array(t, type=pa.timestamp("ms")),
        "title": [f"document {i}" for i in range(n)],
    },
    "saas.parquet",
)
print(out)
