"""KeyArray and the vectorized paths that take it: each must equal its per-key counterpart."""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.hashing import (
    java_bytes_hash,
    java_bytes_hash_many,
    phoenix_salt,
    phoenix_salt_many,
)
from keyshape.core.keyarray import KeyArray
from keyshape.core.regions import RegionMap
from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.fields import FieldSpec
from keyshape.schema.prefixes import OpenTsdbPrefix
from keyshape.workload import generate

EXAMPLES = sorted(Path(__file__).resolve().parents[2].joinpath("examples").glob("*.toml"))

# Few distinct byte values (with 0x00 and 0xFF) so that keys share heads with split keys, end in
# NULs and are prefixes of one another: the cases where padded comparison could go wrong.
tricky_keys = st.binary(max_size=6).map(lambda b: bytes(v % 4 * 85 for v in b))


@given(st.lists(tricky_keys, max_size=60))
def test_from_keys_round_trips_exactly(keys):
    ka = KeyArray.from_keys(keys)
    assert KeyArray(ka.matrix.copy(), ka.lengths).tolist() == keys
    assert ka.lengths.tolist() == [len(k) for k in keys]


@given(st.lists(st.lists(tricky_keys, min_size=3, max_size=3), max_size=30))
def test_concat_is_rowwise_join(rows):
    cols = [KeyArray.from_keys([r[i] for r in rows]) for i in range(3)]
    sep = KeyArray.constant(b"_", len(rows))
    got = KeyArray.concat([cols[0], sep, cols[1], cols[2]])
    assert KeyArray(got.matrix.copy(), got.lengths).tolist() == [a + b"_" + b + c for a, b, c in rows]


@settings(max_examples=300)
@given(st.lists(tricky_keys, max_size=80), st.lists(tricky_keys.filter(bool), max_size=12))
def test_assign_keyarray_equals_bisect(keys, splits):
    """RegionMap.assign on a KeyArray == bisect_right over the split keys (HBase [start, end))."""
    splits = sorted(set(splits))
    ka = KeyArray.from_keys(keys)
    expected = [bisect.bisect_right(splits, k) for k in keys]
    assert RegionMap(splits).assign(KeyArray(ka.matrix.copy(), ka.lengths)).tolist() == expected


def test_assign_keyarray_many_blocks_random():
    rng = np.random.default_rng(7)
    matrix = rng.integers(0, 256, size=(150_000, 5), dtype=np.uint8)
    matrix[::3, 1] = 0  # heads shared with one-byte split keys
    keys = KeyArray(matrix).tolist()
    splits = sorted(
        {bytes(r) for r in rng.integers(0, 256, size=(300, 2), dtype=np.uint8)}
        | {bytes([i]) for i in range(0, 256, 7)}
        | {b"\x10\x00", b"\x10\x00\x00"} - {b""}
    )
    expected = [bisect.bisect_right(splits, k) for k in keys]
    assert RegionMap(splits).assign(KeyArray(matrix)).tolist() == expected


@given(st.lists(st.binary(max_size=40), max_size=50))
def test_java_bytes_hash_many_keyarray_equals_scalar(keys):
    """Arrays.hashCode per key (signed bytes, int wraparound), from a KeyArray and from a list."""
    expected = [java_bytes_hash(k) for k in keys]
    assert java_bytes_hash_many(KeyArray.from_keys(keys)).tolist() == expected
    assert java_bytes_hash_many(keys).tolist() == expected
    assert phoenix_salt_many(keys, 37).tolist() == [phoenix_salt(k, 37) for k in keys]


@pytest.mark.parametrize("width", range(1, 9))
def test_opentsdb_prefix_many_equals_prefix_for(width):
    """Vector OpenTSDB salt == RowKey.prefixKeyWithSalt per key, zero metric UID unsalted."""
    p = OpenTsdbPrefix(buckets=1000, width=width, metric_width=3)
    rng = np.random.default_rng(width)
    mats = [bytes(r) for r in rng.integers(0, 256, size=(200, 9), dtype=np.uint8)]
    mats += [b"\x00\x00\x00" + b"\x01" * 6, b"\x00\x00\x00", b"", b"\x00\x01"]
    assert p.prefix_many(mats) == [p.prefix_for(m) for m in mats]


ascii_text = st.text(alphabet="ab0_Z ", max_size=9)


@given(
    st.lists(ascii_text, min_size=1, max_size=30),
    st.sampled_from(["left", "right"]),
    st.sampled_from(["asc", "desc"]),
    st.sampled_from([None, 1, 4, 12]),
)
def test_text_column_equals_per_value(values, pad, order, width):
    f = FieldSpec("s", "string", "text", order, width, pad, "0", "keep-last")

    def outcome(fn: Any) -> Any:  # the keys, or the error (a value padding would give another's key)
        try:
            return fn()
        except KeyshapeError as exc:
            return str(exc)

    one_by_one = outcome(lambda: [f.encode(v) for v in values])  # each value a run of its own
    column = outcome(lambda: f.encode_column(values).tolist())  # the values as one run
    if isinstance(one_by_one, str):
        assert isinstance(column, str), column  # a value refused alone is refused in a run too
        return
    # The pad rule (README "Key schemas"): a run is refused exactly when two distinct values of it,
    # each stored whole (not cut by keep-last, which shares keys by declaration), pad to one key;
    # otherwise the column route gives each value's own key.
    first: dict[bytes, str] = {}
    whole = [(k, v) for k, v in zip(one_by_one, values) if width is None or len(v.encode()) <= width]
    twins = any(first.setdefault(k, v) != v for k, v in whole)
    if twins:
        assert isinstance(column, str), column
    else:
        assert column == one_by_one


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_encode_many_as_array_equals_encode(path):
    schema = KeySchema.load(path)
    columns = next(generate(schema, 2000, seed=3, chunk_rows=2000))
    rows = [{name: columns[name][i] for name in schema.field_names} for i in range(2000)]
    expected = [schema.encode(r) for r in rows]
    as_array = schema.encode_many(columns, as_array=True)
    assert isinstance(as_array, KeyArray)
    assert as_array.tolist() == expected
    assert schema.encode_many(columns) == expected
