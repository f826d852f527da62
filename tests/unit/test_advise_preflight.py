"""Preflight (issue 31): the source's real keys, read from the OLD table region by region, placed
by the target's split points; a target that piles them into one region is warned about, one that
spreads them as planned is not. On keyshape's embedded store (a real in-process store)."""

from __future__ import annotations

import tomllib

from keyshape.ops.preflight import busiest_share, preflight
from keyshape.schema.keyschema import KeySchema
from keyshape.store import EmbeddedStore

FIELDS = """
[[key.fields]]
name = "user_id"
type = "string"
[[key.fields]]
name = "order_id"
type = "int64"
encoding = "hbase"
"""


def _schema(name: str, key: str, splits: str) -> KeySchema:
    text = f'[table]\nname = "{name}"\n[[table.families]]\nname = "d"\n[key]\nseparator = "_"\n{key}\n{FIELDS}\n{splits}'
    return KeySchema.from_dict(tomllib.loads(text), source=name)


def test_busiest_share_counts_keys_between_split_points() -> None:
    assert busiest_share([b"a", b"b", b"c", b"d"], [b"c"]) == 0.5
    assert busiest_share([b"a", b"b", b"c", b"d"], [b"z"]) == 1.0


def test_preflight_warns_when_the_target_piles_the_rows_up() -> None:
    store = EmbeddedStore(servers=3)
    old = _schema("ksa_pf_old", "", '[splits]\nalgorithm = "explicit"\nkeys = ["u3", "u6"]')
    store.create_table(old.table, old.split_keys())
    with store.writer("ksa_pf_old") as w:
        for i in range(3000):
            w.put(old.encode({"user_id": f"u{i % 900:03d}", "order_id": i}), {b"d:v": b"x"})
    salted = _schema(
        "ksa_pf_salted", 'prefix = { strategy = "mod", buckets = 6 }\nhash_fields = ["user_id"]', '[splits]\nalgorithm = "prefix"\nregions = 6'
    )
    good = preflight(store, "ksa_pf_old", old, salted, sample=3000)
    assert 2000 < good.keys <= 3000 and good.target_regions == 6  # 1,000 a region at most: every region is seen
    assert good.target_share < 0.3 and not good.warnings
    bad_target = _schema("ksa_pf_bad", "", '[splits]\nalgorithm = "explicit"\nkeys = ["a1", "a2", "a3"]')  # every user_id sorts after "a3"
    bad = preflight(store, "ksa_pf_old", old, bad_target, sample=3000)
    assert bad.target_share == 1.0 and len(bad.warnings) == 2
    assert any("worse than the source" in w for w in bad.warnings) and bad.lines()[0].startswith("preflight on 2,800 of the source's keys")
