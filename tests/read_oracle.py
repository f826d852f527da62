"""Shared helpers for the read-path tests: random salted schemas, a loaded table, and the
brute-force oracle (every stored row sorted by (original key, stored key))."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from keyshape.schema import KeySchema
from keyshape.store import ensure_table

USERS = ["a", "b", "c", "d"]


def make_schema(
    strategy: str, buckets: int, separator: str, hash_user_only: bool, seed: int = 0, name: str = "t", namespace: str = "default"
) -> KeySchema:
    prefix: dict[str, Any] = {"strategy": strategy}
    if strategy in ("mod", "phoenix", "random"):
        prefix["buckets"] = buckets
    if strategy == "random":
        prefix["seed"] = seed
    if strategy == "md5":
        prefix["length"] = 4
    key: dict[str, Any] = {
        "separator": separator,
        "prefix": prefix,
        "fields": [{"name": "u", "type": "string", "width": 2}, {"name": "n", "type": "int32"}],
    }
    if strategy != "none" and (hash_user_only or strategy == "md5"):  # hash_fields need a prefix to feed
        # md5 has 65536 buckets: tests pin one with u (a full fan-out is ~1 s per query)
        key["hash_fields"] = ["u"]
    splits = {"algorithm": "prefix"} if strategy != "none" else None
    d: dict[str, Any] = {"table": {"name": name, "namespace": namespace}, "key": key}
    if splits and strategy != "md5":
        d["splits"] = splits
    return KeySchema.from_dict(d)


schemas = st.builds(
    make_schema,
    strategy=st.sampled_from(["none", "mod", "md5", "phoenix", "random"]),
    buckets=st.integers(2, 6),
    separator=st.sampled_from(["", "_"]),
    hash_user_only=st.booleans(),
    seed=st.integers(0, 1000),
)
records = st.lists(st.tuples(st.sampled_from(USERS), st.integers(-3, 12)), max_size=40)


def load(store: Any, schema: KeySchema, recs: list[tuple[str, int]], create: bool = True) -> set[bytes]:
    """Create the table (pre-split per the schema) and write every record; the stored keys."""
    if create:
        ensure_table(store, schema.table, schema.split_keys())
    keys = set()
    table = schema.table.full_name
    with store.writer(table, batch_size=7) as w:
        for u, n in recs:
            k = schema.encode({"u": u, "n": n})
            w.put(k, {b"d:v": b"%s:%d" % (u.encode(), n)})
            keys.add(k)
    return keys


def oracle(
    schema: KeySchema,
    keys: set[bytes],
    *,
    u: str | None = None,
    n: tuple[int | None, int | None] | None = None,
    start: bytes | None = None,
    stop: bytes | None = None,
    reverse: bool = False,
    after: bytes | None = None,
    limit: int | None = None,
) -> list[bytes]:
    """The stored keys a merged scan must yield, by brute force."""

    def orig(k: bytes) -> bytes:
        return schema.prefix.strip(k)

    out = []
    for k in keys:
        f = schema.decode(k)
        if u is not None and f["u"] != u:
            continue
        if n is not None and ((n[0] is not None and f["n"] < n[0]) or (n[1] is not None and f["n"] >= n[1])):
            continue
        o = orig(k)
        if start is not None and o < start or stop and o >= stop:
            continue
        out.append(k)
    out.sort(key=lambda k: (orig(k), k), reverse=reverse)
    if after is not None:
        pos = (orig(after), after)
        out = [k for k in out if ((orig(k), k) < pos if reverse else (orig(k), k) > pos)]
    return out if limit is None else out[:limit]
