"""KeySchema: loading and validation errors, field encodings (round trip and order under
hypothesis), scan ranges proven by brute force, split keys, lint, and the examples."""

from __future__ import annotations

import bisect
import random
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.hbytes import next_prefix
from keyshape.errors import KeyshapeError, SchemaError
from keyshape.schema import KeySchema, TableSpec

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.toml"))
MAX_LONG = 2**63 - 1


def one_field(**field) -> KeySchema:
    field.setdefault("name", "f")
    return KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [field]}})


# ------------------------------------------------------------------------------------ loading


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


BASE = """
[table]
name = "orders"
[key]
separator = "_"
prefix = {prefix}
[[key.fields]]
name = "user_id"
type = "string"
[[key.fields]]
name = "ts"
type = "timestamp"
{extra}
"""


@pytest.mark.parametrize(
    "prefix,extra,path,fix",
    [
        ('{ strategy = "md6" }', "", "key.prefix.strategy", "use one of: none, md5"),
        ('{ strategy = "md5", length = 40 }', "", "key.prefix.length", "4..32"),
        ('{ strategy = "md5", buckets = 4 }', "", "key.prefix.buckets", "unknown key"),
        ('"none"', 'encoding = "text"\norder = "desc"\nwidth = 13', "key.fields[1].width", "width >= 19"),
        ('"none"', 'typ = "x"', "key.fields[1].typ", "unknown key"),
        ('"none"', 'order = "down"', "key.fields[1].order", "use one of: asc, desc"),
        ('"none"', 'width = "8"', "key.fields[1].width", "must be an integer"),
    ],
)
def test_malformed_schema_names_file_path_and_fix(tmp_path, prefix, extra, path, fix):
    p = write(tmp_path, BASE.format(prefix=prefix, extra=extra))
    with pytest.raises(SchemaError) as exc:
        KeySchema.load(p)
    msg = str(exc.value)
    assert str(p) in msg and path in msg and fix in msg and "\n" not in msg


def test_missing_field_type_and_missing_table(tmp_path):
    with pytest.raises(SchemaError, match=r"key\.fields\[0\]\.type: is missing"):
        KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{"name": "a"}]}})
    with pytest.raises(SchemaError, match=r"table: is missing"):
        KeySchema.from_dict({"key": {"fields": [{"name": "a", "type": "string"}]}})


def test_variable_width_middle_field_without_separator_is_encode_only():
    """Accepted (hand-written Java writers build such keys), but decode refuses it."""
    s = KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}]}})
    assert s.encode({"a": "ab", "b": "c"}) == b"abc"
    with pytest.raises(KeyshapeError, match="encode-only"):
        s.decode(b"abc")


def test_bad_toml_and_missing_file(tmp_path):
    with pytest.raises(SchemaError, match="not valid TOML"):
        KeySchema.load(write(tmp_path, "[table\n"))
    with pytest.raises(SchemaError, match="no such schema file"):
        KeySchema.load(tmp_path / "nope.toml")


def test_table_spec_full_name_and_families():
    s = KeySchema.from_dict(
        {
            "table": {"name": "orders", "namespace": "shop", "families": [{"name": "d", "versions": 3, "compression": "SNAPPY", "ttl": 60}]},
            "key": {"fields": [{"name": "a", "type": "string"}]},
        }
    )
    assert s.table.full_name == "shop:orders"
    assert s.table.families[0].versions == 3 and s.table.families[0].ttl == 60
    assert TableSpec("x").full_name == "x" and TableSpec("x").families[0].name == "d"


# ------------------------------------------------------------------------- field encodings

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)
NONNEG64 = st.integers(0, MAX_LONG)
TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20)
FLOATS = st.floats(allow_nan=False)

# (field definition, value strategy, order preserving?)
CASES = [
    ({"type": "int32"}, INT32, True),
    ({"type": "int32", "order": "desc"}, INT32, True),
    ({"type": "int32", "encoding": "hbase"}, INT32, False),
    ({"type": "int32", "encoding": "hbase", "order": "desc"}, st.integers(0, 2**31 - 1), True),
    ({"type": "int32", "encoding": "text"}, st.integers(0, 2**31 - 1), True),
    ({"type": "int64"}, INT64, True),
    ({"type": "int64", "order": "desc"}, INT64, True),
    ({"type": "int64", "encoding": "hbase"}, INT64, False),
    ({"type": "int64", "encoding": "text", "width": 12}, st.integers(0, 10**12 - 1), True),
    ({"type": "int64", "encoding": "text", "order": "desc"}, NONNEG64, True),
    ({"type": "timestamp"}, NONNEG64, True),
    ({"type": "timestamp", "order": "desc"}, NONNEG64, True),
    ({"type": "timestamp", "encoding": "ordered", "order": "desc"}, NONNEG64, True),
    ({"type": "timestamp", "encoding": "text", "order": "desc"}, NONNEG64, True),
    ({"type": "float64"}, FLOATS, True),
    ({"type": "float64", "order": "desc"}, FLOATS, True),
    ({"type": "float64", "encoding": "hbase"}, FLOATS, False),
    ({"type": "string"}, TEXT, True),
    ({"type": "string", "encoding": "ordered"}, TEXT, True),
    ({"type": "string", "encoding": "ordered", "order": "desc"}, TEXT, True),
    (
        {"type": "string", "width": 8, "pad": "left", "pad_char": " "},
        st.text(alphabet="abcXYZ09", max_size=8).filter(lambda s: not s.startswith(" ")),
        False,
    ),
    ({"type": "string", "width": 6, "order": "desc"}, st.text(alphabet="123456789", min_size=6, max_size=6), True),
    ({"type": "bytes"}, st.binary(max_size=20), True),
    # OrderedBytes BlobVar sorts exactly only among equal-length values, as in HBase
    # (tests/property/test_ordered.py::test_blob_var_is_not_ordered_across_lengths_like_hbase).
    ({"type": "bytes", "encoding": "ordered"}, st.binary(max_size=20), False),
    ({"type": "bytes", "encoding": "ordered", "order": "desc"}, st.binary(max_size=20), False),
    ({"type": "bytes", "width": 4}, st.binary(min_size=4, max_size=4), True),
]


@pytest.mark.parametrize("definition,values,ordered", CASES, ids=[str(c[0]) for c in CASES])
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_field_round_trip_and_order(definition, values, ordered, data):
    s = one_field(**definition)
    x, y = data.draw(values), data.draw(values)
    kx, ky = s.encode({"f": x}), s.encode({"f": y})
    assert s.decode(kx) == {"f": x}
    if ordered and x != y:
        if definition.get("order") == "desc":
            assert (kx < ky) == (x > y)
        else:
            assert (kx < ky) == (x < y)


@pytest.mark.parametrize("definition,values,ordered", CASES, ids=[str(c[0]) for c in CASES])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_encode_many_equals_encode(definition, values, ordered, data):
    s = one_field(**definition)
    xs = data.draw(st.lists(values, max_size=15))
    col = np.asarray(xs, dtype=np.int64) if definition["type"] in ("int32", "int64", "timestamp") and xs else xs
    assert s.encode_many({"f": col}) == [s.encode({"f": x}) for x in xs]


def test_hbase_and_text_encodings_are_the_java_bytes():
    """Bytes.toBytes(int/long/double), Long.MAX_VALUE - ts, and %0Nd text."""
    assert one_field(type="int32", encoding="hbase").encode({"f": -2}) == struct.pack(">i", -2)
    assert one_field(type="timestamp", order="desc").encode({"f": 1000}) == struct.pack(">q", MAX_LONG - 1000)
    assert one_field(type="timestamp", encoding="text", order="desc").encode({"f": 5}) == str(MAX_LONG - 5).encode()
    assert one_field(type="int32", encoding="text", width=2).encode({"f": 7}) == b"07"
    assert one_field(type="float64", encoding="hbase").encode({"f": 1.5}) == struct.pack(">d", 1.5)
    assert one_field(type="string", width=4, truncate="keep-last").encode({"f": "ABC12345"}) == b"2345"
    assert one_field(type="string", width=4, pad="right", pad_char="_").encode({"f": "ab"}) == b"ab__"


def test_a_pad_char_is_one_byte_of_the_key():
    """A pad fills the width byte by byte: 'é' (two bytes in UTF-8) would overfill a string
    field's width, so the schema is refused with the fix; bytes fields take \\x00..\\xff."""
    with pytest.raises(SchemaError, match=r"fields\[0\]\.pad_char: 'é' is 2 bytes in UTF-8.*ASCII pad_char"):
        one_field(type="string", width=4, pad_char="é")
    with pytest.raises(SchemaError, match=r"pad_char: '€' is not one byte"):
        one_field(type="bytes", width=4, pad="left", pad_char="€")
    assert one_field(type="bytes", width=3, pad="left", pad_char="\xff").encode({"f": b"a"}) == b"\xff\xffa"


def test_width_overflow_and_negative_text_are_errors():
    with pytest.raises(ValueError, match="wider than width 3"):
        one_field(type="string", width=3).encode({"f": "abcd"})
    with pytest.raises(ValueError, match="ordered"):
        one_field(type="int32", encoding="text").encode({"f": -1})


# ------------------------------------------------------------------------------ scan ranges


def test_next_prefix():
    assert next_prefix(b"ab") == b"ac"
    assert next_prefix(b"a\xff\xff") == b"b"
    assert next_prefix(b"\xff\xff") == b"" and next_prefix(b"") == b""


def _in(key: bytes, ranges, starts) -> bool:
    """Whether key is in one of the sorted, disjoint [start, stop) ranges (starts: their starts)."""
    i = bisect.bisect_right(starts, key) - 1
    return i >= 0 and (ranges[i][1] == b"" or key < ranges[i][1])


SCAN_SCHEMAS = {
    "orders-text-desc": {
        "separator": "_",
        "prefix": {"strategy": "mod", "buckets": 7},
        "hash_fields": ["u"],
        "fields": [
            {"name": "u", "type": "string"},
            {"name": "t", "type": "timestamp", "encoding": "text", "order": "desc"},
            {"name": "o", "type": "string"},
        ],
    },
    "binary-none": {"fields": [{"name": "u", "type": "int32"}, {"name": "t", "type": "timestamp", "order": "desc"}, {"name": "o", "type": "string"}]},
    "phoenix": {
        "prefix": {"strategy": "phoenix", "buckets": 5},
        "fields": [{"name": "u", "type": "string", "encoding": "ordered"}, {"name": "t", "type": "int64"}, {"name": "o", "type": "bytes"}],
    },
    "md5-hash-middle": {
        "separator": "/",
        "prefix": {"strategy": "md5", "length": 4},
        "hash_fields": ["t"],
        "fields": [{"name": "u", "type": "string", "width": 3}, {"name": "t", "type": "int64", "encoding": "hbase"}, {"name": "o", "type": "string"}],
    },
    "random": {
        "separator": "_",
        "prefix": {"strategy": "random", "buckets": 4, "seed": 3},
        "fields": [
            {"name": "u", "type": "string"},
            {"name": "t", "type": "timestamp", "encoding": "ordered", "order": "desc"},
            {"name": "o", "type": "string"},
        ],
    },
    # The specification's orders layout: the one variable-width field is measured from the right, so user ids may
    # hold "_" and the binary reverse timestamp may hold 0x5F bytes.
    "one-variable-binary-ts": {
        "separator": "_",
        "prefix": {"strategy": "mod", "buckets": 3},
        "hash_fields": ["u"],
        "fields": [
            {"name": "u", "type": "string"},
            {"name": "t", "type": "timestamp", "order": "desc"},
            {"name": "o", "type": "string", "width": 3, "pad": "right", "pad_char": " "},
        ],
    },
    "hashshort-ordered-desc": {
        "prefix": {"strategy": "java-hash-short"},
        "hash_fields": ["u"],
        "fields": [
            {"name": "u", "type": "string", "encoding": "ordered", "order": "desc"},
            {"name": "t", "type": "float64", "order": "desc"},
            {"name": "o", "type": "string"},
        ],
    },
}


def _record(rnd: random.Random, name: str) -> dict:
    """A random record; values of keys with a separator often contain it."""
    sep = SCAN_SCHEMAS[name].get("separator", "")
    t = rnd.randrange(0, 40)
    if name == "hashshort-ordered-desc":
        t = t / 4 - 5
    if name == "one-variable-binary-ts":
        t += 0x90  # Long.MAX_VALUE - t then ends in 0x6F..0x48: 0x5F ("_") among them
    u = rnd.choice(["a", "ab", "b", "zz", "a1"] + ([f"a{sep}", f"a{sep}b", sep, f"{sep}a"] if sep else []))
    if name == "binary-none":
        u = rnd.randrange(-3, 3)
    if name == "md5-hash-middle":
        u = rnd.choice(["a", "ab", "abc", "a/", "/b/"])
    o = rnd.choice(["x", "y", "xy", ""] + ([f"x{sep}", sep] if sep else []))
    return {"u": u, "t": t, "o": o.encode() if name == "phoenix" else o}


@pytest.mark.parametrize("name", sorted(SCAN_SCHEMAS))
def test_scan_ranges_brute_force(name):
    """Encode many random records; exactly those matching the query fall inside the ranges."""
    s = KeySchema.from_dict({"table": {"name": "t"}, "key": SCAN_SCHEMAS[name]})
    rnd = random.Random(7)
    records = [_record(rnd, name) for _ in range(400)]
    keys = [s.encode(r) for r in records]
    queries = []
    many_buckets = name in ("md5-hash-middle", "hashshort-ordered-desc")  # 65536 / 32768 ranges
    for _ in range(4 if many_buckets else 25):
        r = rnd.choice(records)
        lo = r["t"] - rnd.choice([0, 2, 5])
        if name == "md5-hash-middle":
            lo = max(lo, 0)  # hbase int64 sorts only non-negative values; negative lo is an error
        hi = r["t"] + rnd.choice([1, 3, 10])
        queries += [
            ({}, lambda x: True),
            ({"u": r["u"]}, lambda x, r=r: x["u"] == r["u"]),
            ({"u": r["u"], "t": r["t"]}, lambda x, r=r: (x["u"], x["t"]) == (r["u"], r["t"])),
            ({"u": r["u"], "t": (lo, hi)}, lambda x, r=r, lo=lo, hi=hi: x["u"] == r["u"] and lo <= x["t"] < hi),
            ({"u": r["u"], "t": (lo, None)}, lambda x, r=r, lo=lo: x["u"] == r["u"] and lo <= x["t"]),
            ({"u": r["u"], "t": (None, hi)}, lambda x, r=r, hi=hi: x["u"] == r["u"] and x["t"] < hi),
            (dict(r), lambda x, r=r: x == r),
        ]
        if s.field("u").order_preserving and s.field("u").self_delimiting:
            queries.append(({"u": (None, None)}, lambda x: True))
    for query, match in queries:
        if name == "md5-hash-middle" and "t" not in query:
            continue  # the md5 space of length 4 is 65536 ranges; checked separately below
        if name == "md5-hash-middle" and isinstance(query.get("t"), tuple) and query["t"][0] is None:
            with pytest.raises(ValueError, match="non-negative lo"):
                s.scan_ranges(**query)  # hbase int64 cannot bound negatives from below
            continue
        ranges = s.scan_ranges(**query)
        assert ranges == sorted(ranges)
        starts = [a for a, _ in ranges]
        for rec, key in zip(records, keys):
            inside = _in(key, ranges, starts)
            if match(rec):
                assert inside, (query, rec)
            elif inside:
                # Exact unless a variable-width u given by value shares the range's bytes:
                # u = "a" scans under "a_", where u = "a_b" lives too (documented superset).
                sep = s.separator.decode()
                u = query.get("u")
                assert sep and isinstance(u, str) and not s.field("u").self_delimiting, (query, rec)
                assert rec["u"].startswith(u + sep), (query, rec)


def test_scan_ranges_pin_one_bucket_when_hash_fields_given():
    s = KeySchema.from_dict({"table": {"name": "t"}, "key": SCAN_SCHEMAS["orders-text-desc"]})
    assert len(s.scan_ranges(u="a")) == 1
    assert len(s.scan_ranges()) == 7
    r = KeySchema.from_dict({"table": {"name": "t"}, "key": SCAN_SCHEMAS["random"]})
    assert len(r.scan_ranges(u="a", t=1, o="x")) == 4
    m = KeySchema.from_dict({"table": {"name": "t"}, "key": SCAN_SCHEMAS["md5-hash-middle"]})
    assert len(m.scan_ranges(u="abc")) == 65536
    assert len(m.scan_ranges(u="abc", t=4)) == 1


def test_scan_ranges_rejects_non_leading_fields():
    s = KeySchema.from_dict({"table": {"name": "t"}, "key": SCAN_SCHEMAS["binary-none"]})
    with pytest.raises(ValueError, match="lead the key"):
        s.scan_ranges(t=1)
    with pytest.raises(ValueError, match="no field"):
        s.scan_ranges(nope=1)


# ------------------------------------------------------------------------- splits and lint


def test_split_algorithms_from_schema():
    base = {"table": {"name": "t"}, "key": {"fields": [{"name": "a", "type": "string"}]}}
    hexs = KeySchema.from_dict({**base, "splits": {"algorithm": "hex", "regions": 4}}).split_keys()
    assert hexs == [b"40000000", b"80000000", b"c0000000"]
    explicit = KeySchema.from_dict({**base, "splits": {"algorithm": "explicit", "keys": ["c", "m", "\\x80"]}})
    assert explicit.split_keys() == [b"c", b"m", b"\x80"]
    # Out of order, keys are refused naming the key, not sorted behind the user's back (issue 40).
    with pytest.raises(KeyshapeError, match=r"key 2 'c' sorts before key 1 '\\x80'"):
        KeySchema.from_dict({**base, "splits": {"algorithm": "explicit", "keys": ["m", "\\x80", "c"]}})
    assert KeySchema.from_dict(base).split_keys() == []
    with pytest.raises(SchemaError, match=r"splits\.algorithm"):
        KeySchema.from_dict({**base, "splits": {"algorithm": "prefix"}})


def test_lint_flags_monotonic_leading_long_keys_random_and_alignment():
    seq = one_field(type="timestamp")
    assert "monotonic-leading" in {f.code for f in seq.lint()}
    long_key = one_field(type="string", width=120)
    assert [f.code for f in long_key.lint() if f.level == "error"] == ["key-too-long"]
    rnd = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "_", "prefix": {"strategy": "random", "buckets": 10}, "fields": [{"name": "a", "type": "string", "width": 4}]},
            "splits": {"algorithm": "prefix", "regions": 4},
        }
    )
    codes = {f.code for f in rnd.lint()}
    assert {"random-prefix", "regions-unaligned"} <= codes
    sep = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "-", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string"}]},
            "workload": {"fields": {"a": {"generator": "uuid"}}},
        }
    )
    assert [f.code for f in sep.lint() if f.level == "error"] == ["separator-in-values"]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_load_round_trip_and_lint_without_errors(path):
    from keyshape.workload import generate

    s = KeySchema.load(path)
    assert s.workload is not None
    assert [f for f in s.lint() if f.level == "error"] == []
    cols = next(generate(s, rows=50))
    keys = s.encode_many(cols)
    for i, key in enumerate(keys):
        assert s.encode(s.decode(key)) == key
        assert s.encode({n: cols[n][i] for n in cols}) == key
    s.split_keys()


def test_examples_include_the_classic_designs():
    names = {p.stem for p in EXAMPLES}
    assert {"orders", "iot", "opentsdb", "inbox", "sequential", "timestamp-leading"} <= names


def test_a_short_key_error_names_the_whole_key_and_its_offset():
    """The field's error quotes the key as given (prefix included) and the offset in it."""
    iot = KeySchema.load(Path(__file__).resolve().parents[2] / "examples" / "iot.toml")
    with pytest.raises(KeyshapeError, match=r"field 'device_id': key abcd ends before the 10-byte field at offset 4"):
        iot.decode(b"abcd")
