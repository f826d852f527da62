"""Fidelity to the classic hand-written key designs: encode-only schemas (variable-width fields
run together with no separator, byte-exact with HBase's Bytes/MD5Hash via tools/golden's
ConcatKeys.java), split points sampled across the whole workload, the uniform generator's
cardinality, advice that says only what applies, and the split-count guard."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape import KeySchema
from keyshape.analysis.designs import analyze_schema
from keyshape.core.regions import RegionMap
from keyshape.errors import KeyshapeError, SchemaError
from keyshape.ops.live import load_workload
from keyshape.store import create_table_from_schema
from keyshape.store.embedded import EmbeddedStore
from keyshape.workload import generate, generate_sample

GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "concat_golden.json").read_text())
STRATEGY = {"rowKeyWithHashPrefix": "java-hash-short", "rowKeyByMD5": "md5-full", "concat": "none"}


def concat_schema(n_fields: int, strategy: str, **extra: object) -> KeySchema:
    d: dict = {"table": {"name": "classic"}, "key": {"prefix": strategy, "fields": [{"name": f"c{i}", "type": "string"} for i in range(n_fields)]}}
    d.update(extra)
    return KeySchema.from_dict(d)


@pytest.mark.parametrize("function", sorted(STRATEGY))
def test_encode_only_keys_equal_the_java_writers_bytes(function: str) -> None:
    """Every golden row, one at a time and as columns, equals what the Java function returned."""
    for case in GOLDEN:
        cols = case["columns"]
        s = concat_schema(len(cols), STRATEGY[function])
        record = {f"c{i}": v for i, v in enumerate(cols)}
        assert s.encode(record).hex() == case[function], (function, cols)
        many = s.encode_many({f"c{i}": [v, v] for i, v in enumerate(cols)})
        assert [k.hex() for k in many] == [case[function]] * 2


def test_the_golden_rows_really_collide() -> None:
    """ "user"+"142", "user1"+"42" and "user14"+"2" are one key: why decode must refuse."""
    first3 = {c["rowKeyWithHashPrefix"] for c in GOLDEN[:3]}
    assert len(first3) == 1


def test_encode_only_decode_and_prefix_scans_refuse_with_the_reason() -> None:
    s = concat_schema(2, "java-hash-short")
    assert s.encode_only is not None and "'c0'" in s.encode_only
    key = s.encode({"c0": "user", "c1": "142"})
    with pytest.raises(KeyshapeError, match="encode-only: field 'c0' has variable width"):
        s.decode(key)
    for as_arrow in (False, True):
        with pytest.raises(KeyshapeError, match="encode-only: field 'c0' has variable width"):
            s.decode_many([key, key], as_arrow=as_arrow)
    with pytest.raises(KeyshapeError, match="scan_ranges: this schema is encode-only"):
        s.scan_ranges(c0="user")
    # A whole key is one row whatever the fields: a point range is still exact.
    assert s.scan_ranges(c0="user", c1="142") == [(key, key + b"\x00")]


def test_decodable_layouts_are_not_encode_only() -> None:
    with_sep = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"separator": "_", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}]}}
    )
    fixed = KeySchema.from_dict(
        {"table": {"name": "t"}, "key": {"fields": [{"name": "a", "type": "string", "width": 4}, {"name": "b", "type": "string"}]}}
    )
    last_var = KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{"name": "a", "type": "int64"}, {"name": "b", "type": "string"}]}})
    for s in (with_sep, fixed, last_var):
        assert s.encode_only is None
        assert not any(f.code == "encode-only" for f in s.lint())


def test_encode_only_schema_refuses_index_tables() -> None:
    """Index rows are built from decoded main keys: refused when the schema is parsed."""
    with pytest.raises(SchemaError, match="index: needs main-table keys that decode"):
        KeySchema.from_dict(
            {
                "table": {"name": "t"},
                "key": {"fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string", "width": 4}]},
                "index": [{"name": "by_b", "table": "t_by_b", "fields": ["b"]}],
            }
        )


def test_md5_full_decode_still_says_the_fields_are_gone() -> None:
    s = concat_schema(2, "md5-full")
    with pytest.raises(KeyshapeError, match="cannot be recovered"):
        s.decode(s.encode({"c0": "a", "c1": "b"}))


def test_encode_only_lints_splits_analyzes_and_loads() -> None:
    s = concat_schema(
        2,
        "java-hash-short",
        splits={"algorithm": "sample", "regions": 4, "sample_rows": 2000},
        workload={"rows": 4000, "fields": {"c0": {"generator": "uniform", "cardinality": 50, "format": "user{}"}, "c1": {"generator": "sequential"}}},
    )
    finding = next(f for f in s.lint() if f.code == "encode-only")
    assert finding.level == "warning" and "'c0'" in finding.message
    splits = s.split_keys()
    assert len(splits) == 3
    a = analyze_schema(s)
    assert a.rows == 4000 and len(a.regions) == 4
    assert any("encode-only" in line for line in a.lint)
    store = EmbeddedStore()
    create_table_from_schema(store, s)
    result = load_workload(store, s, rows=500, batch_size=200)
    assert result.rows == 500
    stored = [row for row, _ in store.scan(s.table.full_name)]
    cols = next(generate(s, rows=500))
    assert sorted(stored) == sorted(set(s.encode_many(cols)))


# ------------------------------------------------------------------------- sample splits


TIME_LEADING = {
    "table": {"name": "events"},
    "key": {"fields": [{"name": "t", "type": "timestamp"}, {"name": "id", "type": "int32"}]},
    "splits": {"algorithm": "sample", "regions": 8, "sample_rows": 20_000},
    "workload": {"rows": 100_000, "fields": {"t": {"generator": "sequential-time"}, "id": {"generator": "uniform", "cardinality": 1000}}},
}


def test_generate_sample_strides_over_the_whole_workload() -> None:
    s = KeySchema.from_dict(TIME_LEADING)
    whole = [k for chunk in generate(s) for k in s.encode_many(chunk)]
    sample = [k for chunk in generate_sample(s, 1000) for k in s.encode_many(chunk)]
    assert sample == [whole[i * len(whole) // 1000] for i in range(1000)]


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 3000), sample=st.integers(1, 400), chunk=st.integers(1, 700))
def test_generate_sample_is_the_stride_of_generate_for_any_chunking(rows: int, sample: int, chunk: int) -> None:
    s = KeySchema.from_dict(TIME_LEADING)
    whole = [int(t) for c in generate(s, rows=rows, chunk_rows=chunk) for t in c["t"]]
    got = [int(t) for c in generate_sample(s, sample, rows=rows, chunk_rows=chunk) for t in c["t"]]
    want = whole if rows <= sample else [whole[i * rows // sample] for i in range(sample)]
    assert got == want


def test_sample_splits_even_out_totals_of_a_time_leading_workload() -> None:
    """Sampling the first rows only left the last region with 80% of 100,000 rows."""
    s = KeySchema.from_dict(TIME_LEADING)
    regions = RegionMap(s.split_keys()).assign([k for c in generate(s) for k in s.encode_many(c)])
    counts = np.bincount(regions, minlength=8)
    assert max(counts) <= 1.05 * 100_000 / 8
    a = analyze_schema(s)
    assert a.verdict == "hotspot"  # even totals, yet every moment writes one region
    assert any("sampled from past data cannot cover future keys of t" in x for x in a.advice)


def test_uniform_cardinality_means_ids_0_to_n_minus_1() -> None:
    s = KeySchema.from_dict(TIME_LEADING)
    ids = next(generate(s, rows=50_000))["id"]
    assert ids.min() == 0 and ids.max() == 999
    bad = json.loads(json.dumps(TIME_LEADING))
    bad["workload"]["fields"]["id"]["high"] = 10
    with pytest.raises(SchemaError, match="cardinality: and high both bound"):
        KeySchema.from_dict(bad)


# ------------------------------------------------------------------------------- advice


def test_real_keys_are_not_told_to_try_real_keys(tmp_path: Path) -> None:
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "mod", "buckets": 8}, "separator": "_", "fields": [{"name": "u", "type": "string"}]},
            "splits": {"algorithm": "prefix"},
        }
    )
    keys = tmp_path / "keys.csv"
    keys.write_text("key\n" + "\n".join(s.encode({"u": f"user{i}"}).decode() for i in range(4000)) + "\n")
    a = analyze_schema(s, keys_file=keys, column="key")
    assert a.verdict == "balanced"
    assert not any("--keys" in x for x in a.advice), a.advice


def test_md5_prefix_with_hex_splits_draws_no_bucket_noise() -> None:
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "md5", "length": 8}, "separator": "_", "fields": [{"name": "u", "type": "string"}]},
            "splits": {"algorithm": "hex", "regions": 16},
        }
    )
    assert [f.code for f in s.lint() if f.code.startswith(("splits", "regions", "buckets"))] == []
    s2 = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"prefix": {"strategy": "md5", "length": 8}, "separator": "_", "fields": [{"name": "u", "type": "string"}]},
            "splits": {"algorithm": "prefix", "regions": 10},
        }
    )
    assert [f.code for f in s2.lint() if f.code.startswith(("regions", "buckets"))] == []


# ------------------------------------------------------------------------------- splits


def test_splits_hex_refuses_ten_million_regions_without_force() -> None:
    run = [sys.executable, "-m", "keyshape.cli", "splits", "hex", "--regions", "10000000"]
    p = subprocess.run(run, capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.strip().splitlines()) == 1
    assert "far more than an HBase table runs with" in p.stderr and "--force" in p.stderr
    p = subprocess.run([*run[:-1], "12000", "--force", "--format", "file"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and len(p.stdout.splitlines()) == 11_999
