"""A per-table encoder (of the key after its salt byte) compiled once from generated Python source: for records whose PK values are
all present and of the plain Python type (str for VARCHAR/CHAR, int for the integer and date
types, bytes for BINARY/VARBINARY, bool for BOOLEAN), the key is one expression of constant
separators and C-level conversions (struct packing, str.encode, bytes.translate for DESC). Any
other record (a NULL, a DECIMAL, a value out of range ...) goes to the general composer, which
also raises the errors, so both paths give the same bytes and the same errors (property-tested).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from keyshape.phoenix.key import PhoenixKey

__all__ = ["compile_encoder"]

_INVERT = bytes(range(255, -1, -1))
_SIGNED = {"TINYINT": ("B", 8), "SMALLINT": ("H", 16), "INTEGER": ("I", 32), "BIGINT": ("Q", 64),
           "DATE": ("Q", 64), "TIME": ("Q", 64)}
_UNSIGNED = {"UNSIGNED_TINYINT": ("B", 8), "UNSIGNED_SMALLINT": ("H", 16), "UNSIGNED_INT": ("I", 32),
             "UNSIGNED_LONG": ("Q", 64), "UNSIGNED_DATE": ("Q", 64), "UNSIGNED_TIME": ("Q", 64)}


def _column(i: int, name: str, type_name: str, length: int | None, width: int | None) -> tuple[str, str] | None:
    """(guard, bytes expression) for column ``i``'s value ``v{i}``, or None if not compiled."""
    v = f"v{i}"
    if type_name in _SIGNED:
        fmt, bits = _SIGNED[type_name]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if type_name in ("DATE", "TIME"):
            low, high = -(2**63), 2**63 - 1
        return (f"type({v}) is int and {low} <= {v} <= {high}",
                f"_pack_{fmt}(({v} ^ {-(2 ** (bits - 1))}) & {2**bits - 1})")
    if type_name in _UNSIGNED:
        fmt, bits = _UNSIGNED[type_name]
        high = 2 ** (bits - 1) - 1
        return f"type({v}) is int and 0 <= {v} <= {high}", f"_pack_{fmt}({v})"
    if type_name == "BOOLEAN":
        return f"type({v}) is bool", f"(b'\\x01' if {v} else b'\\x00')"
    if type_name == "VARCHAR":
        limit = f" and len({v}) <= {length}" if length is not None else ""
        return f"type({v}) is str and {v}{limit}", f"{v}.encode()"
    if type_name == "CHAR":
        return (f"type({v}) is str and {v} and {v}.isascii() and len({v}) <= {width}",
                f"{v}.encode().ljust({width}, b' ')")
    if type_name == "BINARY":
        return f"type({v}) is bytes and {v} and len({v}) <= {width}", f"{v}.ljust({width}, b'\\x00')"
    if type_name == "VARBINARY":
        return f"type({v}) is bytes and {v}", v
    return None


def compile_encoder(key: PhoenixKey, general: Callable[[Mapping[str, Any]], bytes]) -> Callable[[Mapping[str, Any]], bytes]:
    """``record -> key without its salt byte`` for ``key``, falling back to ``general`` (which
    returns the same; see the module docstring)."""
    guards, parts = [], []
    columns = key.columns
    for i, c in enumerate(columns):
        compiled = _column(i, c.name, c.type.name, c.type.length, c.type.width)
        if compiled is None or c.pad_to is not None:
            return general
        guard, expr = compiled
        if c.desc:
            expr = f"{expr}.translate(_INVERT)"
        guards.append(guard)
        parts.append(expr)
        if not c.type.fixed:
            # Separator after a non-null value (or the trailing 0xFF of a last DESC value).
            optimizable_desc = c.desc and key.row_key_order_optimizable
            if i < len(columns) - 1 or optimizable_desc:
                parts.append("b'\\xff'" if optimizable_desc else "b'\\x00'")
    fetch = "\n".join(f"        v{i} = record[{c.name!r}]" for i, c in enumerate(columns))
    source = (
        "def encode(record):\n"
        f"    if len(record) != {len(columns)}:\n"
        "        return general(record)\n"
        "    try:\n"
        f"{fetch}\n"
        "    except KeyError:\n"
        "        return general(record)\n"
        f"    if not ({' and '.join(guards)}):\n"
        "        return general(record)\n"
        f"    return {' + '.join(parts)}\n"
    )
    namespace: dict[str, Any] = {
        "general": general, "_INVERT": _INVERT,
        "_pack_B": struct.Struct(">B").pack, "_pack_H": struct.Struct(">H").pack,
        "_pack_I": struct.Struct(">I").pack, "_pack_Q": struct.Struct(">Q").pack,
    }
    exec(compile(source, f"<phoenix encoder {'/'.join(key.names)}>", "exec"), namespace)  # noqa: S102
    encoder: Callable[[Mapping[str, Any]], bytes] = namespace["encode"]
    return encoder
