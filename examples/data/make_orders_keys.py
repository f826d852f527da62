"""Writes orders-keys.parquet: 20,000 row keys of examples/orders.toml, as a table's export of its
row keys would hold them (one binary column `rowkey`, in write order). The README's
`keyshape analyze examples/orders.toml --keys examples/data/orders-keys.parquet --column rowkey`
reads it. Run from the repository root: .venv/bin/python examples/data/make_orders_keys.py
"""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from keyshape import KeySchema
from keyshape.workload import generate

HERE = Path(__file__).resolve().parent

schema = KeySchema.load(HERE.parent / "orders.toml")
columns = next(generate(schema, rows=20_000, seed=7, chunk_rows=20_000))
keys = schema.encode_many(columns)
pq.write_table(pa.table({"rowkey": pa.array(keys, type=pa.binary())}), HERE / "orders-keys.parquet", row_group_size=5_000, compression="zstd")
print(f"wrote {len(keys):,} keys to {HERE / 'orders-keys.parquet'}")
