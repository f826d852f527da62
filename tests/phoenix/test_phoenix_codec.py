"""Property tests of the Phoenix codecs (no Java): round trips, order preservation ASC and DESC,
and the compiled per-table encoder against the general composer (same bytes, same errors)."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core import native
from keyshape.phoenix import PhoenixColumn, PhoenixKey, PhoenixKeyError, PhoenixTimestamp

VALUES: dict[str, st.SearchStrategy[Any]] = {
    "TINYINT": st.integers(-128, 127),
    "SMALLINT": st.integers(-32768, 32767),
    "INTEGER": st.integers(-(2**31), 2**31 - 1),
    "BIGINT": st.integers(-(2**63), 2**63 - 1),
    "UNSIGNED_LONG": st.integers(0, 2**63 - 1),
    "FLOAT": st.floats(width=32, allow_nan=False, allow_infinity=False),
    "DOUBLE": st.floats(allow_nan=False, allow_infinity=False),
    "DECIMAL": st.decimals(allow_nan=False, allow_infinity=False, min_value=Decimal("-1e25"), max_value=Decimal("1e25"), places=6),
    "DATE": st.integers(-(2**50), 2**50),
    "TIMESTAMP": st.builds(PhoenixTimestamp, st.integers(-(2**50), 2**50), st.integers(0, 999_999)),
    "VARCHAR": st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1),
    "BOOLEAN": st.booleans(),
}


def _key(type_name: str, desc: bool) -> PhoenixKey:
    return PhoenixKey([PhoenixColumn.of("K", type_name, desc=desc)])


def _sort_value(type_name: str, v: Any) -> Any:
    if type_name == "VARCHAR":
        return v.encode("utf-8")  # Phoenix orders VARCHAR by its UTF-8 bytes
    if type_name == "TIMESTAMP":
        return (v.millis, v.nanos)
    if type_name in ("FLOAT", "DOUBLE"):
        return (v, math.copysign(1.0, v) > 0)  # -0.0 sorts before 0.0
    return v


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(VALUES)), st.booleans(), st.data())
def test_round_trip_and_order(type_name: str, desc: bool, data: st.DataObject) -> None:
    key = _key(type_name, desc)
    a, b = data.draw(VALUES[type_name]), data.draw(VALUES[type_name])
    ka, kb = key.encode({"K": a}), key.encode({"K": b})
    back = key.decode(ka)["K"]
    if type_name == "DECIMAL":
        assert back == a.normalize()
    else:
        assert back == a and str(back) == str(a)
    sa, sb = _sort_value(type_name, a), _sort_value(type_name, b)
    if sa < sb:
        assert (ka > kb) if desc else (ka < kb)
    elif sa == sb:
        assert ka == kb


_LAYOUT = st.lists(
    st.tuples(
        st.sampled_from(["BIGINT", "INTEGER", "VARCHAR", "CHAR", "BINARY", "BOOLEAN", "DATE", "UNSIGNED_INT", "DECIMAL", "VARBINARY"]),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=4,
)
_ANY = st.one_of(
    st.none(),
    st.integers(-(2**64), 2**64),
    st.text(max_size=5),
    st.binary(max_size=5),
    st.booleans(),
    st.decimals(allow_nan=False, allow_infinity=False, places=2),
)


def _columns(layout: list[tuple[str, bool, bool]]) -> list[PhoenixColumn]:
    """PK columns Phoenix accepts for a drawn layout (VARBINARY only last and ASC; a nullable
    column only where Phoenix allows one: variable width, in a composite key)."""
    columns = []
    for i, (type_name, desc, nullable) in enumerate(layout):
        if type_name == "VARBINARY" and (i != len(layout) - 1 or desc):
            type_name = "VARCHAR"
        length = 3 if type_name in ("CHAR", "BINARY") else None
        fixed = type_name not in ("VARCHAR", "DECIMAL", "VARBINARY")
        columns.append(PhoenixColumn.of(f"C{i}", type_name, desc, nullable and not fixed and len(layout) > 1, length))
    return columns


@settings(max_examples=400, deadline=None)
@given(_LAYOUT, st.sampled_from([None, 1, 7, 256]), st.data())
def test_compiled_encoder_equals_general_composer(layout: list[tuple[str, bool, bool]], salt: int | None, data: st.DataObject) -> None:
    columns = _columns(layout)
    key = PhoenixKey(columns, salt)
    record = {c.name: data.draw(_ANY) for c in columns if data.draw(st.booleans()) or True}
    if data.draw(st.booleans()):
        record["EXTRA"] = 1

    def run(fn: Any) -> tuple[str, Any]:
        try:
            return "ok", fn(record)
        except PhoenixKeyError as exc:
            return "error", str(exc)

    assert run(key._encode_rest) == run(key._rest_general)


def test_datetimes_and_iso_text_give_the_epoch_millisecond_they_name() -> None:
    from datetime import datetime, timezone

    from keyshape.phoenix.types import parse_text, phoenix_type

    ts, date = phoenix_type("TIMESTAMP"), phoenix_type("DATE")
    before = datetime(1969, 12, 31, 23, 59, 59, 500_250, tzinfo=timezone.utc)  # -499.75 ms
    assert ts.decode(ts.encode(before)) == PhoenixTimestamp(-500, 250_000)
    assert parse_text(ts, "1969-12-31T23:59:59.500250Z") == PhoenixTimestamp(-500, 250_000)
    assert parse_text(date, "1969-12-31T23:59:59.500Z") == -500
    late = datetime(2262, 4, 11, 23, 47, 16, 854_775, tzinfo=timezone.utc)
    assert date.decode(date.encode(late)) == 9_223_372_036_854


def test_salt_buckets_that_are_not_an_int_in_range_are_the_one_line_error():
    from keyshape.errors import KeyshapeError

    columns = [PhoenixColumn.of("A", "VARCHAR")]
    assert PhoenixKey(columns, 16).encode({"A": "x"})[1:] == b"x"
    for buckets in (16.0, True, 300):
        key = PhoenixKey(columns, 16)
        good = key.encode({"A": "x"})
        key.salt_buckets = buckets  # type: ignore[assignment]
        for call in (lambda: key.encode({"A": "x"}), lambda: key.decode(good)):
            try:
                call()
            except KeyshapeError as exc:
                assert "buckets" in str(exc)
            else:
                raise AssertionError(f"salt_buckets={buckets!r} was accepted")


def test_a_key_changed_after_construction_encodes_and_decodes_as_changed():
    """The compiled functions are made anew when the columns, the salt or the DESC separator
    change (they hold what those were when made)."""
    key = PhoenixKey([PhoenixColumn.of("A", "VARCHAR"), PhoenixColumn.of("B", "VARCHAR", desc=True)], 16)
    for change in (
        {"salt_buckets": 8},
        {"salt_buckets": None},
        {"row_key_order_optimizable": False},
        {"columns": [PhoenixColumn.of("A", "VARCHAR"), PhoenixColumn.of("C", "BIGINT")]},
    ):
        for name, value in change.items():
            setattr(key, name, value)
        record = {n: ("x" if n != "C" else 7) for n in key.names}
        k = key.encode(record)
        assert k == key._rest_general(record) if key.salt_buckets is None else k[1:] == key._rest_general(record)
        assert key.decode(k) == key._decode_general(k) == record


@settings(max_examples=400, deadline=None)
@given(_LAYOUT, st.sampled_from([None, 1, 7, 256]), st.booleans(), st.data())
def test_compiled_decoder_equals_general_walk(layout: list[tuple[str, bool, bool]], salt: int | None, optimizable: bool, data: st.DataObject) -> None:
    layout = [(data.draw(st.sampled_from(["TINYINT", "UNSIGNED_LONG", "TIME", t])), d, n) for t, d, n in layout]
    """Keys written by the table (NULLs, trailing NULLs, DESC separators, pre-4.5 tables), cut,
    extended, with a byte changed or another salt: the compiled decoder gives the general walk's
    values, or its one-line error, verified or not."""
    columns = _columns(layout)
    key = PhoenixKey(columns, salt, row_key_order_optimizable=optimizable)
    values = {
        "BIGINT": VALUES["BIGINT"],
        "INTEGER": VALUES["INTEGER"],
        "DATE": VALUES["DATE"],
        "TINYINT": VALUES["TINYINT"],
        "UNSIGNED_LONG": VALUES["UNSIGNED_LONG"],
        "TIME": VALUES["DATE"],
        "DECIMAL": VALUES["DECIMAL"],
        "BOOLEAN": st.booleans(),
        "UNSIGNED_INT": st.integers(0, 2**31 - 1),
        "VARCHAR": st.text(max_size=4),
        "CHAR": st.text(alphabet="ab c", min_size=1, max_size=3),
        "BINARY": st.binary(min_size=1, max_size=3),
        "VARBINARY": st.binary(max_size=4),
    }
    keys = _keys_to_read(key, values, data)
    for k in [*keys, bytearray(keys[0])]:
        for verify in (True, False):
            assert _outcome(key.decode, k, verify) == _outcome(key._decode_general, k, verify), (k, verify)


def _keys_to_read(key: PhoenixKey, values: dict[str, Any], data: st.DataObject) -> list[bytes]:
    """A key the table writes for a drawn record (NULLs where the column allows; random bytes when
    the record is refused), and that key cut, extended, with a byte changed, and bytes of any kind."""
    record = {c.name: (None if c.nullable and data.draw(st.booleans()) else data.draw(values[c.type.name])) for c in key.columns}
    try:
        good = key.encode(record)
    except PhoenixKeyError:
        good = data.draw(st.binary(max_size=12))
    cut = data.draw(st.integers(0, len(good)))
    flip = data.draw(st.integers(0, max(len(good) - 1, 0)))
    return [
        good,
        good[:cut],
        good + data.draw(st.binary(min_size=1, max_size=3)),
        data.draw(st.binary(max_size=10)),
        good[:flip] + bytes([data.draw(st.integers(0, 255))]) + good[flip + 1 :] if good else b"\xff",
    ]


def _outcome(fn: Any, k: Any, verify: bool) -> tuple[str, Any]:
    try:
        return "ok", repr(fn(k, verify))
    except PhoenixKeyError as exc:
        return "error", str(exc)


def test_the_compiled_decoder_is_compiled():
    """A plain salted table gets a generated decoder (not the general walk behind another name)."""
    key = PhoenixKey([PhoenixColumn.of("U", "VARCHAR"), PhoenixColumn.of("T", "BIGINT", desc=True), PhoenixColumn.of("K", "INTEGER")], 16)
    compiled = key._decode.fallback if native.AVAILABLE else key._decode  # C reader first, where built
    assert compiled.__name__ == "decode" and compiled is not key._decode_general
    k = key.encode({"U": "user1", "T": 1767225600000, "K": -5})
    assert key.decode(k) == {"U": "user1", "T": 1767225600000, "K": -5}
    forged = bytes([(k[0] + 1) % 16]) + k[1:]
    assert key.decode(forged, verify=False) == key.decode(k)
    try:
        key.decode(forged)
        raise AssertionError("a wrong salt byte must be refused")
    except PhoenixKeyError as exc:
        assert "salt byte" in str(exc)


_C_TYPES = ["VARCHAR", "CHAR", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UNSIGNED_TINYINT", "UNSIGNED_SMALLINT", "UNSIGNED_INT", "UNSIGNED_LONG"]
_C_VALUES = {
    "VARCHAR": st.text(max_size=4),
    "CHAR": st.text(alphabet="ab cé", min_size=1, max_size=3),
    "TINYINT": st.integers(-128, 127),
    "SMALLINT": st.integers(-(2**15), 2**15 - 1),
    "INTEGER": st.integers(-(2**31), 2**31 - 1),
    "BIGINT": st.integers(-(2**63), 2**63 - 1),
    "UNSIGNED_TINYINT": st.integers(0, 127),
    "UNSIGNED_SMALLINT": st.integers(0, 2**15 - 1),
    "UNSIGNED_INT": st.integers(0, 2**31 - 1),
    "UNSIGNED_LONG": st.integers(0, 2**63 - 1),
}


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
@settings(max_examples=500, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_C_TYPES), st.booleans(), st.booleans()), min_size=1, max_size=4),
    st.sampled_from([None, 1, 7, 256]),
    st.booleans(),
    st.data(),
)
def test_c_phoenix_reader_equals_general_walk(layout: list[tuple[str, bool, bool]], salt: int | None, optimizable: bool, data: st.DataObject) -> None:
    """Tables of VARCHAR, CHAR and integer columns are read by the C reader of their layout: for
    keys the table writes (NULLs, DESC separators, old tables' 0x00 after DESC values), keys cut,
    extended, with a byte changed, and bytes of any kind, verified or not, the values or the
    one-line error of the general walk, and the reader itself never answers a key the walk would
    refuse or read otherwise."""
    columns = []
    for i, (type_name, desc, nullable) in enumerate(layout):
        length = 3 if type_name == "CHAR" else None
        columns.append(PhoenixColumn.of(f"C{i}", type_name, desc, nullable and type_name == "VARCHAR" and len(layout) > 1, length))
    key = PhoenixKey(columns, salt, row_key_order_optimizable=optimizable)
    reader = key._decode
    assert isinstance(reader, native.Decoder) and reader.verified is not None
    for k in _keys_to_read(key, _C_VALUES, data):
        for verify in (True, False):
            general = _outcome(key._decode_general, k, verify)
            assert _outcome(key.decode, k, verify) == general, (k, verify)
            got = (reader.verified if verify else reader.plain).read(k)
            if got is not None:  # what the C reader answers is the walk's answer
                assert general == ("ok", repr(got)), (k, verify)
