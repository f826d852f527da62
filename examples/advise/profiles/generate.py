"""User profiles: sign-ups with sequential ids and e-mail addresses, over 180 days.

Usage: python generate.py [OUT.parquet] [ROWS]   (default: profiles.parquet beside this file, 100,000 rows)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from _common import START_MS, rows, write  # noqa: E402

n = rows(100_000)
rng = np.random.default_rng(17)
t = START_MS + np.sort(rng.integers(0, 180 * 86_400_000, n))
ids = np.arange(1_000_000, 1_000_000 + n, dtype=np.int64)
out = write(
    {
        "user_id": ids,
        "email": [f"user{int(i) * 2654435761 % 4294967296:010d}@example.com" for i in ids],
        "signed_up": pa.array(t, type=pa.timestamp("ms")),
        "country": rng.choice(["de", "fr", "us", "br", "in", "jp"], n).tolist(),
        "bio": ["x" * int(k) for k in rng.integers(20, 400, n)],
    },
    "profiles.parquet",
)
print(out)
