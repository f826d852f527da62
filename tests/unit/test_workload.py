"""keyshape.workload: generators (determinism, semantics) and streaming CSV/Parquet readers."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.hbytes import to_string_binary
from keyshape.errors import SchemaError
from keyshape.schema import KeySchema
from keyshape.workload import generate, read_keys, read_records


def schema(workload: dict, fields=None) -> KeySchema:
    fields = fields or [{"name": "u", "type": "string"}, {"name": "t", "type": "timestamp"}, {"name": "n", "type": "int64"}]
    return KeySchema.from_dict({"table": {"name": "t"}, "key": {"separator": "_", "fields": fields}, "workload": workload})


W = {
    "rows": 1000,
    "fields": {
        "u": {"generator": "zipf", "cardinality": 50, "skew": 1.5, "format": "user{:03d}"},
        "t": {"generator": "sequential-time", "start": "2026-01-01T00:00:00Z", "step_ms": 50},
        "n": {"generator": "sequential", "start": 10, "step": 2},
    },
}


def collect(chunks):
    out: dict = {}
    for c in chunks:
        for k, v in c.items():
            out.setdefault(k, []).extend(list(v))
    return out


def test_rows_chunks_and_write_order():
    s = schema(W)
    chunks = list(generate(s, chunk_rows=300))
    assert [len(c["n"]) for c in chunks] == [300, 300, 300, 100]
    cols = collect(chunks)
    assert cols["n"] == list(range(10, 10 + 2 * 1000, 2))
    assert cols["t"][0] == 1767225600000 and np.all(np.diff(cols["t"]) == 50)
    assert all(u.startswith("user") and 0 <= int(u[4:]) < 50 for u in cols["u"])


def test_deterministic_per_seed():
    s = schema(W)
    a, b, c = (collect(generate(s, seed=x)) for x in (1, 1, 2))
    assert a == b and a["u"] != c["u"]


def test_zipf_is_skewed_and_uniform_in_range():
    s = schema({"rows": 20000, "fields": {"u": {"generator": "zipf", "cardinality": 100, "skew": 1.2}}})
    counts = np.unique(collect(generate(s))["u"], return_counts=True)[1]
    assert counts.max() > 10 * np.median(counts)
    s2 = schema({"fields": {"n": {"generator": "uniform", "low": -5, "high": 5}}})
    n = collect(generate(s2, rows=2000))["n"]
    assert min(n) == -5 and max(n) == 4


def test_categorical_uuid_constant_jitter_and_derived():
    s = schema(
        {
            "fields": {
                "u": {"generator": "categorical", "values": ["a", "b"], "weights": [1, 0]},
                "t": {"generator": "jittered-time", "start": 1000, "step_ms": 10, "jitter_ms": 5},
                "n": {"generator": "derived", "source": "t", "floor_ms": 100},
            }
        }
    )
    cols = collect(generate(s, rows=500))
    assert set(cols["u"]) == {"a"}
    t = np.asarray(cols["t"])
    assert np.all(np.abs(t - (1000 + 10 * np.arange(500))) <= 5)
    assert cols["n"] == [x - x % 100 for x in cols["t"]]
    u = schema({"fields": {"u": {"generator": "uuid"}, "n": {"generator": "constant", "value": 7}}})
    cols = collect(generate(u, rows=20))
    assert len(set(cols["u"])) == 20 and all(len(x) == 36 for x in cols["u"]) and set(cols["n"]) == {7}


def test_unknown_generator_and_unknown_field_are_schema_errors():
    with pytest.raises(SchemaError, match=r"workload\.fields\.u\.generator.*use one of"):
        schema({"fields": {"u": {"generator": "zipfian"}}})
    with pytest.raises(SchemaError, match=r"workload\.fields\.x: is not a key field"):
        schema({"fields": {"x": {"generator": "uuid"}}})
    with pytest.raises(SchemaError, match=r"cardinality: is missing"):
        schema({"fields": {"u": {"generator": "zipf"}}})


def test_read_keys_csv_binary_form_in_chunks(tmp_path):
    keys = [b"row\x00\x01", b"a,b"[:1] + b"\xff", b"007"]
    p = tmp_path / "keys.csv"
    p.write_text("key,other\n" + "".join(f"{to_string_binary(k)},x\n" for k in keys * 5))
    chunks = list(read_keys(p, "key", chunk_rows=4))
    assert [len(c) for c in chunks] == [4, 4, 4, 3]
    assert sum(chunks, []) == keys * 5
    raw = sum(read_keys(p, "other", key_format="raw"), [])
    assert raw == [b"x"] * 15


def test_read_keys_and_records_parquet(tmp_path):
    p = tmp_path / "k.parquet"
    pq.write_table(pa.table({"k": pa.array([b"\x00a", b"\xffb", b"c"], pa.binary()), "n": pa.array([1, 2, 3], pa.int64())}), p)
    assert sum(read_keys(p, "k", chunk_rows=2), []) == [b"\x00a", b"\xffb", b"c"]
    recs = list(read_records(p, ["n"]))
    assert isinstance(recs[0]["n"], np.ndarray) and list(recs[0]["n"]) == [1, 2, 3]
    with pytest.raises(ValueError, match="no column 'zz'"):
        list(read_keys(p, "zz"))


def test_records_from_csv_encode_like_typed_values(tmp_path):
    s = schema(W)
    p = tmp_path / "r.csv"
    p.write_text("u,t,n\nuser1,2026-01-01T00:00:00Z,007\n")
    rec = next(read_records(p))
    assert s.encode_many(rec) == [s.encode({"u": "user1", "t": 1767225600000, "n": 7})]


def test_csv_header_names_may_hold_quoted_commas(tmp_path):
    """The header is read with the csv module, as pyarrow reads the rows: "a,b" is one column."""
    p = tmp_path / "q.csv"
    p.write_text('"user, id",other\nu1,x\n"u,2",y\n')
    assert sum(read_keys(p, "user, id", key_format="raw"), []) == [b"u1", b"u,2"]
    with pytest.raises(ValueError, match="columns: user, id, other"):
        list(read_keys(p, "user"))


def test_text_arrays_give_the_same_values_and_keys():
    fields = [
        {"name": "u", "type": "string"},
        {"name": "c", "type": "string", "width": 4},
        {"name": "k", "type": "string"},
        {"name": "b", "type": "bytes", "width": 3},
        {"name": "g", "type": "bytes"},
        {"name": "n", "type": "int64"},
    ]
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "_", "fields": fields},
            "workload": {
                "fields": {
                    "u": {"generator": "zipf", "cardinality": 5000, "format": "u{:07d}"},
                    "c": {"generator": "categorical", "values": ["ab", "c", "é"]},
                    "k": {"generator": "uuid"},
                    "b": {"generator": "zipf", "cardinality": 300},
                    "g": {"generator": "uuid"},
                    "n": {"generator": "constant", "value": "7"},
                }
            },
        }
    )
    lists = list(generate(s, rows=700, chunk_rows=256))
    arrays = list(generate(s, rows=700, chunk_rows=256, text_arrays=True))
    for a, b in zip(lists, arrays):
        assert all(isinstance(a[n], list) for n in "uckbg")
        assert isinstance(b["u"], np.ndarray) and isinstance(b["k"], np.ndarray)
        assert {n: list(v) for n, v in a.items()} == {n: list(v) for n, v in b.items()}
        assert s.encode_many(a) == s.encode_many(b) == [s.encode({n: a[n][i] for n in a}) for i in range(len(a["n"]))]


def test_int_bytes_equals_int_to_bytes():
    from keyshape.schema.synthetic import _int_bytes

    vals = np.array([0, 1, 255, 256, 2**23, -1, -(2**23), 2**24 - 1], dtype=np.int64)
    assert _int_bytes(vals, 3) == [int(x).to_bytes(3, "big", signed=x < 0) for x in vals.tolist()]
    assert _int_bytes(np.array([2**24]), 3) is None  # does not fit: int.to_bytes raises its error


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(0.0, 1e6, allow_nan=False), min_size=1, max_size=300).filter(lambda w: sum(w) > 0),
    st.lists(st.floats(0.0, 1.0, allow_nan=False, exclude_max=True), min_size=1, max_size=200),
    st.data(),
)
def test_inverse_cdf_guide_table_equals_searchsorted(weights, draws, data):
    """The generators' inverse CDF (a guide table, a few steps, then a direct search for what is
    left) gives np.searchsorted's index for every u and side: the u drawn, the CDF's own values and
    their neighbours a ulp away, and zipf CDFs of a million entries."""
    from keyshape.schema.synthetic import _InverseCDF

    w = np.asarray(weights, dtype=np.float64)
    cdf = np.cumsum(w / w.sum())
    picks = data.draw(st.lists(st.integers(0, len(cdf) - 1), max_size=20))
    u = np.array(
        draws
        + [float(cdf[i]) for i in picks]
        + [float(np.nextafter(cdf[i], 0)) for i in picks]
        + [float(np.nextafter(cdf[i], 1)) for i in picks]
        + [0.0],
        dtype=np.float64,
    )
    u = u[u < 1.0]
    inv = _InverseCDF(cdf)
    for side in ("left", "right"):
        assert np.array_equal(inv.index(u.copy(), side), np.searchsorted(cdf, u, side=side))


def test_inverse_cdf_of_long_tails_equals_searchsorted():
    from keyshape.schema.synthetic import _InverseCDF

    rng = np.random.default_rng(7)
    for n, skew in ((1_000_000, 0.6), (20_000, 1.2), (1_000_000, 2.5), (3, 0.0)):
        p = np.arange(1, n + 1, dtype=np.float64) ** -skew
        cdf = np.cumsum(p / p.sum())
        u = rng.random(50_000)
        inv = _InverseCDF(cdf)
        for side in ("left", "right"):
            assert np.array_equal(inv.index(u, side), np.searchsorted(cdf, u, side=side)), (n, skew, side)
