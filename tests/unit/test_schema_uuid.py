"""The ``uuid`` field type (issue 43): added as one module, keyshape/schema/fieldtypes/uuid.py,
to prove the field-type seam. Values are the canonical text of ``UUID.toString()``; ``hbase``
stores the 16 bytes Java's ``ByteBuffer.putLong(msb).putLong(lsb)`` writes, ``text`` the 36
characters ``Bytes.toBytes(uuid.toString())`` writes."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np
import pytest

from keyshape.errors import KeyshapeError
from keyshape.schema import KeySchema
from keyshape.schema.lint import lint
from keyshape.schema.synthetic import generate

U = "123e4567-e89b-12d3-a456-426614174000"
# msb 0x123e4567e89b12d3, lsb 0xa456426614174000, each big-endian (Java's ByteBuffer default)
U_BYTES = bytes.fromhex("123e4567e89b12d3a456426614174000")


def _schema(encoding: str = "hbase", order: str = "asc", prefix: dict[str, Any] | None = None, workload: bool = False) -> KeySchema:
    d: dict[str, Any] = {
        "table": {"name": "sessions"},
        "key": {
            "separator": "_",
            "prefix": prefix or {"strategy": "none"},
            "fields": [
                {"name": "session", "type": "uuid", "encoding": encoding, "order": order},
                {"name": "seq", "type": "int32", "encoding": "hbase"},
            ],
        },
    }
    if workload:
        d["workload"] = {"rows": 50, "fields": {"seq": {"generator": "sequential"}}}
    return KeySchema.from_dict(d)


def test_golden_bytes_of_both_encodings() -> None:
    assert _schema("hbase").encode({"session": U, "seq": 1}) == U_BYTES + b"_\x00\x00\x00\x01"
    assert _schema("text").encode({"session": U, "seq": 1}) == U.encode() + b"_\x00\x00\x00\x01"
    assert _schema("hbase", "desc").encode({"session": U, "seq": 1})[:16] == bytes(b ^ 0xFF for b in U_BYTES)


@pytest.mark.parametrize("given", [U, U.upper(), "{" + U + "}", "urn:uuid:" + U, U.replace("-", ""), uuid.UUID(U), U_BYTES])
def test_every_spelling_encodes_to_the_canonical_value(given: Any) -> None:
    s = _schema("text")
    key = s.encode({"session": given, "seq": 2})
    assert s.decode(key) == {"session": U, "seq": 2}
    assert s.encode_many({"session": [given], "seq": [2]}) == [key]


@pytest.mark.parametrize("encoding", ["hbase", "text"])
@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("prefix", [None, {"strategy": "mod", "buckets": 16}, {"strategy": "md5", "length": 4}])
def test_every_route_round_trips(encoding: str, order: str, prefix: dict[str, Any] | None) -> None:
    s = _schema(encoding, order, prefix)
    values = [str(uuid.UUID(int=i * 0x9E3779B97F4A7C15_1234567)) for i in range(300)]
    keys = s.encode_many({"session": values, "seq": list(range(300))})
    assert keys == [s.encode({"session": v, "seq": i}) for i, v in enumerate(values)]
    assert [s.decode(k) for k in keys] == [s.layout.decode_generic(k) for k in keys] == [{"session": v, "seq": i} for i, v in enumerate(values)]
    cols = s.decode_many(keys)
    assert list(cols["session"]) == values and list(cols["seq"]) == list(range(300))
    assert s.decode_many(keys, as_arrow=True).column("session").to_pylist() == values
    # byte order is value order: the canonical text's order (asc), reversed (desc)
    ordered = [s.decode(k)["session"] for k in sorted(keys)]
    assert ordered == sorted(values, reverse=order == "desc") or prefix is not None


def test_a_key_this_field_does_not_write_is_refused_on_every_route() -> None:
    s = _schema("text")
    bad = U.upper().encode() + b"_\x00\x00\x00\x01"
    for decode in (s.decode, s.layout.decode_generic, lambda k: s.decode_many([k])):
        with pytest.raises(KeyshapeError, match="not a UUID in its canonical text"):
            decode(bad)


def test_bad_values_say_what_to_give() -> None:
    with pytest.raises(KeyshapeError, match="field 'session' is uuid; cannot use 'nope'"):
        _schema().encode({"session": "nope", "seq": 1})
    with pytest.raises(KeyshapeError, match="has a fixed size already"):
        KeySchema.from_dict({"table": {"name": "t"}, "key": {"fields": [{"name": "u", "type": "uuid", "width": 8}]}})


def test_a_workload_without_a_generator_gets_uuids_and_lints() -> None:
    s = _schema("hbase", prefix={"strategy": "mod", "buckets": 8}, workload=True)
    cols = next(generate(s, rows=50))
    assert len({str(uuid.UUID(v)) for v in cols["session"]}) == 50
    keys = s.encode_many(cols)
    assert np.array_equal(s.decode_many(keys)["seq"], np.arange(50))
    assert all(f.level != "error" for f in lint(s))
