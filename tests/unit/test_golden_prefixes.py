"""Prefix strategies against the REAL functions they claim to reproduce (tools/golden):

- the bucket list of every salted strategy equals the set of salts the real function produced
  (Phoenix SaltingUtil, OpenTSDB RowKey.prefixKeyWithSalt at every salt width 1..8, and the
  hand-written Java key functions: MD5 prefix, ``hashCode & 0x7FFF`` short, ``%02d`` mod bucket,
  CRC32 prefix); a scan or a ``prefix`` split built from a list that misses a salt misses rows;
- the per-key prefix of the hand-written Java functions (tests/data/classic_golden.json).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import pytest

from hbase_golden import salt_golden
from keyshape.schema.prefixes import make_prefix

CLASSIC_PATH = Path(__file__).parents[1] / "data" / "classic_golden.json"


@cache
def classic() -> dict:
    return json.loads(CLASSIC_PATH.read_text(encoding="utf-8"))


def set_digest(salts: list[bytes]) -> str:
    """As the golden tools digest a salt set: SHA-256 of the sorted hex salts joined by ","."""
    return hashlib.sha256(",".join(sorted(s.hex() for s in salts)).encode("ascii")).hexdigest()


def assert_bucket_list_is(prefix, row: dict) -> None:
    buckets = prefix.buckets()
    assert buckets == sorted(set(buckets)), "buckets() must be sorted and distinct"
    assert (len(buckets), set_digest(buckets)) == (row["count"], row["sha256"]), row
    assert prefix.bucket_count() == row["count"]
    assert [prefix.bucket(i) for i in (0, len(buckets) - 1)] == [buckets[0], buckets[-1]]


@pytest.mark.parametrize("row", salt_golden()["opentsdb"]["salt_sets"], ids=lambda r: f"w{r['width']}-n{r['buckets']}")
def test_opentsdb_bucket_list_equals_the_real_salts(row):
    """Widths 5..8 wrap Java's int shifts (bucket 14 at width 5 is 0e 00 00 00 0e)."""
    p = make_prefix("opentsdb", buckets=row["buckets"], width=row["width"], metric_width=3)
    assert_bucket_list_is(p, row)
    assert [b.hex() for b in p.buckets()[:4]] == row["first"]


@pytest.mark.parametrize("row", salt_golden()["opentsdb"]["sorted_salts"], ids=lambda r: f"w{r['width']}-n{r['buckets']}")
def test_opentsdb_bucket_i_is_the_ith_real_salt_in_byte_order(row):
    """Where the salts are too many to list, bucket(i) (what ``prefix`` splits with ``regions``
    cut at) is still the i-th of the real salts in byte order."""
    p = make_prefix("opentsdb", buckets=row["buckets"], width=row["width"], metric_width=3)
    assert p.bucket_count() == row["count"]
    assert {i: p.bucket(int(i)).hex() for i in row["sorted_at"]} == row["sorted_at"]


def test_opentsdb_width_5_bucket_14_wraps_like_java():
    p = make_prefix("opentsdb", buckets=20, width=5, metric_width=3)
    assert bytes.fromhex("0e0000000e") in p.buckets()
    assert bytes.fromhex("000000000e") not in p.buckets()


# keyshape's phoenix strategy takes 2..256 buckets (SALT_BUCKETS = 1 is no salting).
@pytest.mark.parametrize("row", [r for r in salt_golden()["phoenix"]["salt_sets"] if r["buckets"] >= 2], ids=lambda r: f"n{r['buckets']}")
def test_phoenix_bucket_list_equals_the_real_salts(row):
    assert_bucket_list_is(make_prefix("phoenix", buckets=row["buckets"]), row)


def _classic_prefix(fn: dict):
    return make_prefix(fn["strategy"], **fn["options"]).bound(b"_")


@pytest.mark.parametrize("fn", classic()["functions"], ids=lambda f: f"{f['strategy']}-{f['options']}")
def test_bucket_list_equals_the_prefixes_the_java_function_produced(fn):
    p = _classic_prefix(fn)
    assert_bucket_list_is(p, fn)
    assert (p.buckets()[0].hex(), p.buckets()[-1].hex()) == (fn["first"], fn["last"])


@pytest.mark.parametrize("fn", classic()["functions"], ids=lambda f: f"{f['strategy']}-{f['options']}")
def test_prefix_of_each_key_equals_the_java_function(fn):
    p = _classic_prefix(fn)
    js = [c["j"].encode("utf-8") for c in fn["cases"]]
    want = [c["prefix"] for c in fn["cases"]]
    assert [p.prefix_for(j).hex() for j in js] == want
    assert [b.hex() for b in p.prefix_many(js)] == want  # the vectorized path too
