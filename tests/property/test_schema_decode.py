"""Decoding keys whose values contain the separator: one variable-width field is measured from the
end of the key, fixed-width fields are never split on separator bytes, and lint warns only when
decoding is truly ambiguous. Values are drawn by hypothesis with separator bytes mixed in."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema

MAX_LONG = 2**63 - 1
SPEC_EXAMPLE = Path(__file__).parents[1] / "data" / "schema_spec_example.toml"
SEPARATORS = ["_", "-", "::", "/", "é", "\x00"]
# Text that often contains separator characters (and their bytes: "é" is C3 A9).
SEP_TEXT = st.text(alphabet=st.one_of(st.sampled_from(list("_-:/é\x00a")), st.characters(blacklist_categories=("Cs",))), max_size=10)


def spec_example() -> KeySchema:
    return KeySchema.load(SPEC_EXAMPLE)


def reverse_ts_with_sep_bytes(pattern: bytes) -> int:
    """A timestamp whose Long.MAX_VALUE - ts, as 8 big-endian bytes, ends with ``pattern``."""
    rev = int.from_bytes(b"\x7f" + b"\x00" * (7 - len(pattern)) + pattern, "big")
    return MAX_LONG - rev


@settings(max_examples=300, deadline=None)
@given(
    user=SEP_TEXT,
    ts=st.one_of(st.integers(0, MAX_LONG), st.sampled_from([reverse_ts_with_sep_bytes(b"_"), reverse_ts_with_sep_bytes(b"_" * 7), MAX_LONG - 0x5F])),
    order=st.text(alphabet="_ab12é", max_size=6).filter(lambda s: not s.startswith("0") and len(s.encode()) <= 6),
)
def test_spec_example_round_trips_values_with_separators(user, ts, order):
    """user_id (variable) may contain "_"; the 8-byte reverse timestamp may contain 0x5F bytes."""
    s = spec_example()
    rec = {"user_id": user, "order_time": ts, "order_id": order}
    key = s.encode(rec)
    assert s.decode(key) == rec
    assert s.encode_many({n: [v] for n, v in rec.items()}) == [key]


def test_spec_example_key_with_separator_everywhere():
    """The brief's case, byte for byte: user "u_1", a reverse timestamp of 0x5F bytes, order "A_B"."""
    s = spec_example()
    ts = reverse_ts_with_sep_bytes(b"\x5f" * 7)
    key = s.encode({"user_id": "u_1", "order_time": ts, "order_id": "A_B"})
    import hashlib

    assert key == hashlib.md5(b"u_1").hexdigest()[:4].encode() + b"_u_1_\x7f" + b"_" * 7 + b"_000A_B"
    assert s.decode(key) == {"user_id": "u_1", "order_time": ts, "order_id": "A_B"}
    assert s.ambiguous_fields == []


# ------------------------------------------------------------------- random one-variable layouts

FIXED = [  # (definition, values): fixed width, any bytes (separator bytes included)
    ({"type": "int32", "encoding": "hbase"}, st.integers(-(2**31), 2**31 - 1)),
    ({"type": "int64", "encoding": "hbase", "order": "desc"}, st.integers(0, MAX_LONG)),
    ({"type": "timestamp"}, st.integers(0, MAX_LONG)),
    ({"type": "timestamp", "order": "desc"}, st.integers(0, MAX_LONG)),
    ({"type": "bytes", "width": 3}, st.binary(min_size=3, max_size=3)),
    ({"type": "string", "width": 4, "pad": "right", "pad_char": " "}, st.text(alphabet="_-:/a", max_size=4).filter(lambda v: not v.endswith(" "))),
    ({"type": "int32", "encoding": "text", "width": 5}, st.integers(0, 99999)),
    ({"type": "int64"}, st.integers(-(2**63), 2**63 - 1)),
]
ORDERED_VARIABLE = [  # self-delimiting, but cannot be measured from the right
    ({"type": "string", "encoding": "ordered"}, SEP_TEXT.map(lambda v: v.replace("\x00", ""))),  # TEXT ends at NUL
    ({"type": "bytes", "encoding": "ordered"}, st.binary(max_size=8)),
]
VARIABLE = [  # not self-delimiting: needs the separator or the end of the key
    ({"type": "string"}, SEP_TEXT),
    ({"type": "string", "order": "desc"}, SEP_TEXT),
    ({"type": "bytes"}, st.binary(max_size=10)),
]
PREFIXES = [
    "none",
    {"strategy": "md5", "length": 4},
    {"strategy": "mod", "buckets": 10},
    {"strategy": "phoenix", "buckets": 7},
    {"strategy": "java-hash-short"},
    {"strategy": "crc32"},
]


@st.composite
def one_variable_layout(draw):  # type: ignore[no-untyped-def]
    before = draw(st.lists(st.sampled_from(FIXED + ORDERED_VARIABLE), max_size=3))
    after = draw(st.lists(st.sampled_from(FIXED), max_size=3))
    var = draw(st.sampled_from(VARIABLE))
    parts = [*before, var, *after]
    fields = [{"name": f"f{i}", **d} for i, (d, _) in enumerate(parts)]
    key = {"separator": draw(st.sampled_from(SEPARATORS)), "prefix": draw(st.sampled_from(PREFIXES)), "fields": fields}
    schema = KeySchema.from_dict({"table": {"name": "t"}, "key": key})
    records = draw(st.lists(st.fixed_dictionaries({f"f{i}": v for i, (_, v) in enumerate(parts)}), min_size=1, max_size=6))
    return schema, records


@settings(max_examples=300, deadline=None)
@given(one_variable_layout())
def test_one_variable_field_decodes_whatever_its_bytes(layout):
    """Fixed-width/ordered fields before it, fixed-width after it: every key decodes exactly, even
    when the variable value or a binary field contains the separator."""
    schema, records = layout
    assert schema.ambiguous_fields == []
    keys = schema.encode_many({n: [r[n] for r in records] for n in records[0]})
    assert keys == [schema.encode(r) for r in records]
    assert [schema.decode(k) for k in keys] == records


@settings(max_examples=100, deadline=None)
@given(a=SEP_TEXT, b=SEP_TEXT, sep=st.sampled_from(SEPARATORS))
def test_two_variable_fields_are_ambiguous_and_decode_at_the_first_separator(a, b, sep):
    """Two variable-width fields: the first ends at the first separator, so only values without
    it round-trip; the schema says so (ambiguous_fields) and lint warns."""
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {
                "separator": sep,
                "fields": [{"name": "a", "type": "string"}, {"name": "ts", "type": "timestamp"}, {"name": "b", "type": "string"}],
            },
        }
    )
    assert [f.name for f in s.ambiguous_fields] == ["a"]
    key = s.encode({"a": a, "ts": 1, "b": b})
    # The value round-trips when the first separator after the field's start is the one written
    # after it: not when the value holds the separator, nor when its end and the separator overlap
    # (a=":" with sep="::" writes ":::", whose first "::" starts inside the value).
    if (a + sep).find(sep) == len(a):
        assert s.decode(key) == {"a": a, "ts": 1, "b": b}
    else:
        try:
            assert s.decode(key) != {"a": a, "ts": 1, "b": b}
        except KeyshapeError:
            pass


def test_variable_field_followed_by_an_ordered_string_is_ambiguous():
    """An ordered string after the variable field cannot be measured from the right: "x_" + 0x34
    "y_" ... parses two ways, so decode ends the variable field at the first separator."""
    s = KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "_", "fields": [{"name": "a", "type": "string"}, {"name": "b", "type": "string", "encoding": "ordered"}]},
        }
    )
    assert [f.name for f in s.ambiguous_fields] == ["a"]
    assert s.decode(s.encode({"a": "x", "b": "y"})) == {"a": "x", "b": "y"}


def test_short_key_is_a_clear_error():
    s = spec_example()
    key = s.encode({"user_id": "u", "order_time": 5, "order_id": "1"})
    with pytest.raises(KeyshapeError, match="too short for field 'user_id'"):
        s.decode(key[:4] + b"_" + key[-10:])


# ------------------------------------------------------------------------------------- lint


def lint_codes(key: dict, workload: dict | None = None) -> dict[str, str]:
    d = {"table": {"name": "t"}, "key": key}
    if workload:
        d["workload"] = {"fields": workload}
    return {f.code: f.level for f in KeySchema.from_dict(d).lint()}


UNDERSCORE_USERS = {"generator": "categorical", "values": ["u_1", "u_2", "a_b_c"]}


def test_lint_quiet_when_the_only_variable_field_holds_separators():
    """The specification's orders layout with user ids containing "_": decodable, so no separator finding."""
    s = spec_example()
    assert not {"separator-ambiguous", "separator-in-values"} & {f.code for f in s.lint()}
    codes = lint_codes(
        {
            "separator": "_",
            "fields": [
                {"name": "user_id", "type": "string"},
                {"name": "t", "type": "timestamp", "order": "desc"},
                {"name": "o", "type": "string", "width": 6},
            ],
        },
        {"user_id": UNDERSCORE_USERS},
    )
    assert "separator-in-values" not in codes and "separator-ambiguous" not in codes


def test_lint_errs_on_two_variable_fields_with_separators_and_warns_without():
    two = {"separator": "_", "fields": [{"name": "user_id", "type": "string"}, {"name": "o", "type": "string"}]}
    assert lint_codes(two, {"user_id": UNDERSCORE_USERS})["separator-in-values"] == "error"
    clean = {"generator": "categorical", "values": ["u1", "u2"]}
    codes = lint_codes(two, {"user_id": clean})
    assert codes["separator-ambiguous"] == "warning" and "separator-in-values" not in codes


def test_spec_example_decodes_random_user_ids_made_of_separators():
    """The specification's example with user ids drawn from "_", "a", "b" (many all-separator ids) decodes."""
    s = spec_example()
    rnd = random.Random(3)
    for _ in range(200):
        rec = {
            "user_id": "".join(rnd.choice("_ab") for _ in range(rnd.randrange(0, 6))),
            "order_time": rnd.randrange(0, MAX_LONG),
            "order_id": str(rnd.randrange(1, 999999)),
        }
        assert s.decode(s.encode(rec)) == rec
