"""The field-type seam (issue 43): each type's facts live in one module of
``keyshape.schema.fieldtypes``, and every decode route reads them through the layout's plans."""

from __future__ import annotations

import pathlib
import re

import pytest

from keyshape.core import native
from keyshape.schema import KeySchema
from keyshape.schema.compiled_decode import native_reader
from keyshape.schema.fields import ENCODINGS, FIELD_TYPES
from keyshape.schema.fieldtypes import REGISTRY, field_type
from keyshape.errors import KeyshapeError

SCHEMA_DIR = pathlib.Path(__file__).resolve().parents[2] / "src" / "keyshape" / "schema"


def test_builtin_types_in_documented_order_then_the_rest() -> None:
    assert FIELD_TYPES[:6] == ("string", "int32", "int64", "float64", "bytes", "timestamp")
    assert set(FIELD_TYPES) == set(REGISTRY)
    assert ENCODINGS["timestamp"][0] == "hbase" and ENCODINGS["int64"][0] == "ordered"


def test_integer_ranges_are_java_ranges() -> None:
    assert (field_type("int32").min, field_type("int32").max) == (-(2**31), 2**31 - 1)
    assert (field_type("int64").min, field_type("int64").max) == (-(2**63), 2**63 - 1)
    assert (field_type("timestamp").min, field_type("timestamp").max) == (0, 2**63 - 1)


def test_unknown_type_names_the_types() -> None:
    with pytest.raises(KeyshapeError, match="no field type 'decimal'; types: .*int32"):
        field_type("decimal")


def test_the_value_range_is_written_once() -> None:
    """The Java MAX_VALUE tables were copied in fields.py, compiled.py and batchdecode.py; the
    ranges now live in the type modules only (core/hbytes.MAX_LONG is the one long constant)."""
    pattern = re.compile(r"_(MAX|MIN|UNPACKED)\s*=\s*\{|\"(int32|int64|timestamp)\":\s*-?\(?2")
    offenders = [
        p.relative_to(SCHEMA_DIR).as_posix() for p in SCHEMA_DIR.rglob("*.py") if "fieldtypes" not in p.parts and pattern.search(p.read_text())
    ]
    assert offenders == []


def _schema(fields: list[dict[str, object]], prefix: dict[str, object] | None = None) -> KeySchema:
    return KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"separator": "_", "prefix": prefix or {"strategy": "none"}, "fields": [{"name": f"f{i}", **f} for i, f in enumerate(fields)]},
        }
    )


def test_plans_give_each_route_the_field_facts() -> None:
    s = _schema(
        [
            {"type": "string", "width": 4},
            {"type": "int32", "encoding": "hbase", "order": "desc"},
            {"type": "int64", "encoding": "text", "width": 6},
            {"type": "bytes", "width": 2, "pad": "right"},
            {"type": "float64"},
        ]
    )
    p = s.layout.plans
    assert [x.width for x in p] == [4, 4, 6, 2, 9]
    assert [x.native for x in p] == [0, 3, 2, 1, None]  # K_STR, K_INT32, K_DIGITS, K_BYTES; ordered: Python
    assert (p[0].pad, p[0].pad_left, p[3].pad, p[3].pad_left) == (b"0", True, b"\x00", False)
    assert (p[1].max, p[1].lo, p[1].hi) == (2**31 - 1, 0, 2**31 - 1)
    assert (p[2].lo, p[2].hi) == (0, 999_999)
    assert p[4].max == 0 and p[4].pad == b""


@pytest.mark.skipif(not native.AVAILABLE, reason=f"the C kernels are not built here: {native.ROUTE}")
def test_the_c_reader_takes_its_field_codes_from_the_plans() -> None:
    """A layout whose every plan has a C code gets a C reader; one ordered field (no C code) none."""
    s = _schema([{"type": "string"}, {"type": "timestamp", "order": "desc"}], {"strategy": "mod", "buckets": 10})
    reader = native_reader(s.layout, False)
    assert reader is not None
    key = s.encode({"f0": "u1", "f1": 5})
    assert reader.read(key) == s.layout.decode_generic(key)
    assert native_reader(_schema([{"type": "string"}, {"type": "int64"}]).layout, True) is None
