"""Schemas and data for the existing-table tests (diagnose, split-plan, migrate, dual reads).

One logical table in several designs: ``event_id`` (12-digit text, so any design decodes it the
same way) plus ``event_time``; a sequential design (no prefix) and ``mod`` salted ones. Rows get
several families, qualifiers and versions so a copy that drops any of them is caught.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from keyshape.schema import KeySchema

BASE_TIME = 1_767_225_600_000


def schema_text(
    name: str, prefix: str = "none", buckets: int = 16, regions: int | None = None, namespace: str = "mig", splits: list[str] | None = None
) -> str:
    key = 'separator = "_"\n'
    if prefix != "none":
        key += f'prefix = {{ strategy = "{prefix}", buckets = {buckets} }}\nhash_fields = ["event_id"]\n'
    split = ""
    if splits is not None:
        quoted = ", ".join(f'"{s}"' for s in splits)
        split = f'[splits]\nalgorithm = "explicit"\nkeys = [{quoted}]\n'
    elif prefix != "none":
        split = f'[splits]\nalgorithm = "prefix"\nregions = {regions or buckets}\n'
    return f'''[table]
name = "{name}"
namespace = "{namespace}"
[[table.families]]
name = "d"
versions = 3
[[table.families]]
name = "m"

[key]
{key}
[[key.fields]]
name = "event_id"
type = "int64"
encoding = "text"
width = 12
[[key.fields]]
name = "event_time"
type = "timestamp"
encoding = "text"

{split}
[workload]
rows = 1000
fields.event_id = {{ generator = "sequential", start = 1 }}
fields.event_time = {{ generator = "sequential-time", start = "2026-01-01T00:00:00Z", step_ms = 1000 }}
'''


def write_schema(tmp_path: Path, stem: str, **options: Any) -> tuple[Path, KeySchema]:
    name = f"{stem}_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.toml"
    path.write_text(schema_text(name, **options))
    return path, KeySchema.load(path)


def record(i: int) -> dict[str, Any]:
    return {"event_id": i, "event_time": BASE_TIME + 1000 * i}


def fill(store: Any, schema: KeySchema, rows: int, batch: int = 1000) -> list[bytes]:
    """Write ``rows`` rows in id order: d:v in up to three versions, d:q<n> and m:tag; every
    seventh row has a column deleted after it was written. Returns the keys in write order."""
    table = schema.table.full_name
    keys = [schema.encode(record(i)) for i in range(rows)]
    with store.writer(table, batch_size=batch) as w:
        for i, key in enumerate(keys):
            for version in range(1 + i % 3):
                w.put(key, {b"d:v": b"v%d.%d" % (i, version)}, timestamp=BASE_TIME + version)
            w.put(key, {b"d:q%d" % (i % 4): b"x" * (i % 50), b"m:tag": b"t%d" % i}, timestamp=BASE_TIME + 10 + i)
    for i in range(0, rows, 7):
        store.delete(table, keys[i], [b"d:q%d" % (i % 4)])
    return keys
