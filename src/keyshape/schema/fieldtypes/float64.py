"""``float64``: a Java double.

Encodings: ``ordered`` (the default: OrderedBytes FixedFloat64, 9 bytes, sorts every value) and
``hbase`` (``Bytes.toBytes(double)``, 8 bytes; ``desc`` is not defined for it).
"""

from __future__ import annotations

import struct
from typing import Any

import pyarrow as pa

from keyshape.core import ordered
from keyshape.schema.fieldtypes.base import FieldType

__all__ = ["Float64Type"]

_DOUBLE = struct.Struct(">d")


class Float64Type(FieldType):
    name = "float64"
    encodings = ("ordered", "hbase")
    numeric = True
    widths = {"ordered": 9, "hbase": 8}
    native_codes = {"hbase": 5}  # K_FLOAT64
    arrow_type = pa.float64()
    column_dtype = "float64"
    ordered_many = staticmethod(ordered.encode_float64_many)
    hbase_struct = ">d"
    raw_checkable = False  # a NaN's payload: the value is re-encoded to check a salt

    def decode_lines(self, spec: Any, i: int, env: dict[str, Any], cut: str, key: str, at: str) -> list[str] | None:
        """``Bytes.toBytes(double)`` unpacked where it stands."""
        env["_unpack_d"] = _DOUBLE.unpack_from
        return [f"    o{i} = _unpack_d({key}, {at})[0]"]

    def encode_lines(self, spec: Any, i: int, env: dict[str, Any]) -> list[str] | None:
        """A float (an int coerced first) as its OrderedBytes or ``Bytes.toBytes(double)``."""
        v, p, F = f"v{i}", f"p{i}", f"F{i}"
        lines = [f"    if {v}.__class__ is not float:", f"        {v} = {F}.coerce({v})"]
        if spec.encoding == "ordered":
            env[f"E{i}"] = ordered.encode_float64
            return lines + [f"    {p} = E{i}({v}, {spec.descending})"]
        env["_pack_d"] = _DOUBLE.pack
        return lines + [f"    {p} = _pack_d({v})"]

    def coerce(self, spec: Any, value: Any) -> float:
        return float(value)

    def encode_value(self, spec: Any, value: Any) -> bytes:
        if spec.encoding == "ordered":
            return ordered.encode_float64(value, spec.descending)
        return _DOUBLE.pack(value)

    def decode_value(self, spec: Any, raw: bytes) -> float:
        if spec.encoding == "ordered":
            value, _ = ordered.decode(raw)
            return value  # type: ignore[no-any-return]
        return _DOUBLE.unpack(raw)[0]  # type: ignore[no-any-return]
