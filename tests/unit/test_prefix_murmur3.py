"""The ``murmur3`` prefix strategy (schema/prefixes/murmur3.py, the one source file that adds it)
against HBase's own ``org.apache.hadoop.hbase.util.MurmurHash3`` (tests/data/murmur3_golden.json,
from hbase-common by tools/golden/Murmur3Keys.java), and through every use of a schema: encode
(compiled and batch), decode, scans over every bucket, prefix splits, labels, lint, index tables.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core import native
from keyshape.core.hashing import murmur3_32
from keyshape.errors import SchemaError
from keyshape.schema import KeySchema
from keyshape.schema.labels import key_label, label_legend
from keyshape.schema.prefixes import STRATEGIES, make_prefix

GOLDEN = Path(__file__).parents[1] / "data" / "murmur3_golden.json"


@cache
def golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def functions() -> list[dict]:
    return golden()["functions"]


def fn_id(fn: dict) -> str:
    return f"n{fn['buckets']}-seed{fn['seed']}"


def test_golden_vectors_come_from_hbase_murmurhash3() -> None:
    g = golden()
    assert g["jar"].startswith("hbase-common-") and "MurmurHash3" in g["call"]


@pytest.mark.parametrize("fn", functions(), ids=fn_id)
def test_prefix_of_each_key_equals_hbase(fn: dict) -> None:
    """Per key (every length 0..40: each tail length and block count): the hash HBase returns and
    the prefix, from prefix_for and from the vectorized prefix_many alike."""
    p = make_prefix("murmur3", buckets=fn["buckets"], seed=fn["seed"]).bound(b"_")
    js = [bytes.fromhex(c["j"]) for c in fn["cases"]]
    assert [murmur3_32(j, fn["seed"]) for j in js] == [c["hash"] for c in fn["cases"]]
    want = [c["prefix"].encode("ascii") for c in fn["cases"]]
    assert [p.prefix_for(j) for j in js] == want
    assert p.prefix_many(js) == want


@pytest.mark.parametrize("fn", functions(), ids=fn_id)
def test_bucket_list_equals_the_prefixes_hbase_produced(fn: dict) -> None:
    """A scan or a ``prefix`` split built from a list missing one of the real prefixes misses rows."""
    buckets = make_prefix("murmur3", buckets=fn["buckets"], seed=fn["seed"]).bound(b"_").buckets()
    assert buckets is not None and buckets == sorted(set(buckets))
    digest = hashlib.sha256(",".join(b.hex() for b in buckets).encode("ascii")).hexdigest()
    assert (len(buckets), digest) == (fn["count"], fn["sha256"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=37), min_size=1, max_size=40), st.integers(2, 5000), st.integers(-(2**31), 2**31 - 1))
def test_batch_prefixes_equal_one_by_one(js: list[bytes], buckets: int, seed: int) -> None:
    p = make_prefix("murmur3", buckets=buckets, seed=seed)
    assert p.prefix_many(js) == [p.prefix_for(j) for j in js]


def schema(**prefix: int) -> KeySchema:
    return KeySchema.from_dict(
        {
            "table": {"name": "ksa_murmur3"},
            "key": {
                "separator": "_",
                "prefix": {"strategy": "murmur3", **prefix},
                "hash_fields": ["user"],
                "fields": [{"name": "user", "type": "string"}, {"name": "n", "type": "int64", "encoding": "text", "width": 6}],
            },
            "splits": {"algorithm": "prefix"},
        }
    )


def test_a_schema_encodes_decodes_and_scans_with_murmur3() -> None:
    s = schema(buckets=8, seed=42)
    records = [{"user": f"user{i}", "n": i} for i in range(50)]
    keys = [s.encode(r) for r in records]
    # The layout: "%02d" % ((murmur3(J, seed) & 0x7FFFFFFF) % buckets) + sep + K, J = the user field.
    want = [b"%02d_%s_%06d" % ((murmur3_32(r["user"].encode(), 42) & 0x7FFFFFFF) % 8, r["user"].encode(), r["n"]) for r in records]
    assert keys == want
    assert s.encode_many({"user": [r["user"] for r in records], "n": [r["n"] for r in records]}) == want
    assert [s.decode(k) for k in keys] == records
    # A deterministic prefix: a point read is one range; by the leading field alone, still one bucket.
    assert s.scan_ranges(user="user3") == [(keys[3][: 3 + 6], keys[3][: 3 + 5] + b"`")]
    assert s.split_keys() == [b"%02d" % i for i in range(1, 8)]


def test_what_the_rest_of_keyshape_asks_the_strategy() -> None:
    s = schema()
    assert STRATEGIES["murmur3"].deterministic and STRATEGIES["murmur3"].index_ok
    assert label_legend(s) == "bucket · user · n"
    assert key_label(s, s.encode({"user": "u1", "n": 7})).startswith("bucket ")
    assert not [f for f in s.lint() if f.level == "error"]


def test_bad_options_are_one_schema_error() -> None:
    with pytest.raises(SchemaError, match="buckets"):
        schema(buckets=1)
    with pytest.raises(SchemaError, match="length"):
        schema(length=4)


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
@pytest.mark.parametrize("seed", [0, 1, -(2**31), 2**31 - 1])
def test_the_c_reader_checks_a_murmur3_salt(seed: int) -> None:
    """murmur3 had no C check: a verified decode left every key to Python (issue 43). The reader
    now re-derives the bucket (HBase's MurmurHash3 x86_32 with the seed) and leaves to Python only
    keys whose salt is not theirs, which the generic decoder refuses with its one line."""
    from keyshape.errors import KeyshapeError
    from keyshape.schema.compiled_decode import native_reader

    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": "_",
                "prefix": {"strategy": "murmur3", "buckets": 1000, "seed": seed},
                "hash_fields": ["user"],
                "fields": [{"name": "user", "type": "string"}, {"name": "n", "type": "int64", "encoding": "hbase"}],
            },
        }
    )
    reader = native_reader(s.layout, True)
    assert reader is not None
    recs = [{"user": f"user{i:05d}" + "x" * (i % 5), "n": i} for i in range(2000)]
    keys = [s.encode(r) for r in recs]
    assert [reader.read(k) for k in keys] == recs
    assert reader.columns(keys) is not None and s.decode_many(keys)["n"].tolist() == list(range(2000))
    for k in keys[:300]:
        forged = b"%03d" % ((int(k[:3]) + 1) % 1000) + k[3:]
        assert reader.read(forged) is None
        with pytest.raises(KeyshapeError, match="prefix does not match"):
            s.decode(forged)
