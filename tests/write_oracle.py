"""Random put / update / delete runs through IndexedWriter, checked against a plain dict.

Shared by the embedded-store and real-HBase tests (tests/hbase/test_writes.py). The oracle knows
nothing of keyshape: per (user, order) it holds the product and the cells the record should have.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from keyshape.read import IndexedWriter, read_by_index, repair_index
from keyshape.read.index import index_key
from keyshape.schema import KeySchema
from keyshape.store import create_table_from_schema

# Every prefix strategy keyshape knows (opentsdb needs a metric-like first field: an int32 here).
STRATEGIES: list[tuple[str, dict[str, int]]] = [
    ("none", {}),
    ("md5", {"length": 4}),
    ("md5-full", {}),
    ("java-hash-short", {}),
    ("crc32", {}),
    ("mod", {"buckets": 4}),
    ("random", {"buckets": 4}),
    ("phoenix", {"buckets": 4}),
    ("opentsdb", {"buckets": 4, "width": 1}),
]
USERS, ORDERS, PRODUCTS = 12, 6, 4


def schema_for(strategy: str, options: dict[str, int], suffix: str | None = None) -> KeySchema:
    """Orders keyed (user, order) under ``strategy``, with an index on a value column (product)
    and one on a key field only (order), in tables of their own."""
    name = f"w_{strategy.replace('-', '_')}_{suffix or uuid.uuid4().hex[:8]}"
    return KeySchema.from_dict(
        {
            "table": {"name": name, "families": [{"name": "d"}]},
            "key": {
                "separator": "_" if strategy != "opentsdb" else "",
                "prefix": {"strategy": strategy, **options},
                **({"hash_fields": ["user", "order"]} if strategy != "none" else {}),  # a prefix to feed
                "fields": [{"name": "user", "type": "int32"}, {"name": "order", "type": "int32"}],
            },
            "index": [
                {
                    "name": "by_product",
                    "table": f"{name}_p",
                    "fields": ["product", "order"],
                    "prefix": {"strategy": "mod", "buckets": 2},
                    "columns": [{"name": "product", "type": "string", "width": 3, "column": "d:product"}],
                },
                {"name": "by_order", "table": f"{name}_o", "fields": ["order"]},
            ],
        }
    )


def drop_tables(store: Any, schema: KeySchema) -> None:
    for t in [schema.table.full_name, *(i.table.full_name for i in schema.indexes)]:
        if store.table_exists(t):
            store.delete_table(t)


def run(store: Any, schema: KeySchema, ops: int, seed: int) -> dict[tuple[int, int], dict[str, Any]]:
    """``ops`` random writes (flushed at random points); returns the oracle."""
    create_table_from_schema(store, schema, verify=False)
    rng = random.Random(seed)
    oracle: dict[tuple[int, int], dict[str, Any]] = {}
    w = IndexedWriter(store, schema, batch_size=10_000)
    since_flush, flush_at = 0, rng.randint(1, 60)
    for n in range(ops):
        rec = (rng.randrange(USERS), rng.randrange(ORDERS))
        record = {"user": rec[0], "order": rec[1], "product": f"p{rng.randrange(PRODUCTS)}"}
        r = rng.random()
        if r < 0.55:  # put: a new record or an update (new product, one more cell)
            cell = {b"d:c%d" % rng.randrange(3): b"v%d" % n}
            w.put(record, cell)
            old = oracle.get(rec, {"cells": {}})
            oracle[rec] = {"product": record["product"], "cells": {**old["cells"], **cell}}
        elif r < 0.85:  # delete (often of a record that is not there)
            w.delete({"user": rec[0], "order": rec[1]})
            oracle.pop(rec, None)
        else:  # replace: delete then put again at once (the same millisecond, usually)
            cell = {b"d:c0": b"r%d" % n}
            w.delete(record)
            w.put(record, cell)
            oracle[rec] = {"product": record["product"], "cells": dict(cell)}
        since_flush += 1
        if since_flush >= flush_at:
            w.flush()
            since_flush, flush_at = 0, rng.randint(1, 60)
    w.flush()
    return oracle


def check(store: Any, schema: KeySchema, oracle: dict[tuple[int, int], dict[str, Any]]) -> None:
    """The main table holds each oracle record exactly once with exactly its cells, nothing else;
    each index holds exactly the rows of the oracle's records, pointing at them; reads by index
    and repair agree."""
    universe = {schema.encode({"user": u, "order": o}): (u, o) for u in range(USERS) for o in range(ORDERS)}
    random_salt = schema.prefix.name == "random"
    seen: dict[tuple[int, int], list[bytes]] = {}
    for key, cells in store.scan(schema.table.full_name):
        if random_salt:
            f = schema.decode(key)
            rec = (f["user"], f["order"])
        else:
            rec = universe[key]  # md5-full keys do not decode; the others are the one key
        seen.setdefault(rec, []).append(key)
        want = oracle.get(rec)
        assert want is not None, f"record {rec} is stored but was deleted (key {key!r})"
        expected = {**want["cells"], b"d:product": want["product"].encode()}  # as given, unpadded
        assert cells == expected, f"record {rec}: cells {cells} != {expected}"
    dupes = {r: k for r, k in seen.items() if len(k) > 1}
    assert not dupes, f"records stored more than once: {dupes}"
    assert set(seen) == set(oracle), f"missing records: {sorted(set(oracle) - set(seen))[:5]}"
    for spec in schema.indexes:
        want_rows = {index_key(spec, {"user": r[0], "order": r[1], "product": v["product"]}, seen[r][0]): seen[r][0] for r, v in oracle.items()}
        got_rows = {k: c[spec.pointer_column] for k, c in store.scan(spec.table.full_name)}
        assert got_rows == want_rows, (
            f"{spec.name}: {len(set(got_rows) - set(want_rows))} index rows too many, {len(set(want_rows) - set(got_rows))} missing"
        )
        if schema.prefix.name != "md5-full":  # repair decodes main keys
            report = repair_index(store, schema, spec, fix=False)
            assert report.consistent and not report.counts["unindexable"], (spec.name, report.counts)
    for p in range(PRODUCTS):
        got = sorted(
            universe[r.key] if not random_salt else (r.fields["user"], r.fields["order"])
            for r in read_by_index(store, schema, "by_product", product=f"p{p}")
        )
        assert got == sorted(k for k, v in oracle.items() if v["product"] == f"p{p}")
