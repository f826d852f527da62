"""Per-table functions compiled once from generated Python source.

The encoder (of the key after its salt byte): for records whose PK values are
all present and of the plain Python type (str for VARCHAR/CHAR, int for the integer and date
types, bytes for BINARY/VARBINARY, bool for BOOLEAN), the key is one expression of constant
separators and C-level conversions (struct packing, str.encode, bytes.translate for DESC). Any
other record (a NULL, a DECIMAL, a value out of range ...) goes to the general composer, which
also raises the errors, so both paths give the same bytes and the same errors (property-tested).

The decoder: the walk of ``RowKeySchema.next`` unrolled for the table's columns, integers read by
``struct``, text by ``bytes.decode``, other types by their codec; any key off the common path (a
NULL, a short key, a missing separator, a salt byte to refuse, bytes a codec refuses) goes to the
general decoder, which decides and words the error. With the C kernels, a table of VARCHAR, CHAR
and integer columns is read by a C reader of its layout first (one call per key), which leaves
every key that decoder would doubt to it.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from keyshape.errors import KeyshapeError

__all__ = ["compile_encoder", "compile_decoder"]


class PhoenixKey(Protocol):
    """What the compilers read of a :class:`keyshape.phoenix.key.PhoenixKey` (described here, not
    imported: key.py calls these compilers, and a module never imports its caller)."""

    @property
    def columns(self) -> Sequence[Any]: ...

    @property
    def salt_buckets(self) -> int | None: ...

    @property
    def row_key_order_optimizable(self) -> bool: ...

    @property
    def names(self) -> tuple[str, ...]: ...


_INVERT = bytes(range(255, -1, -1))
_SIGNED = {"TINYINT": ("B", 8), "SMALLINT": ("H", 16), "INTEGER": ("I", 32), "BIGINT": ("Q", 64), "DATE": ("Q", 64), "TIME": ("Q", 64)}
_UNSIGNED = {
    "UNSIGNED_TINYINT": ("B", 8),
    "UNSIGNED_SMALLINT": ("H", 16),
    "UNSIGNED_INT": ("I", 32),
    "UNSIGNED_LONG": ("Q", 64),
    "UNSIGNED_DATE": ("Q", 64),
    "UNSIGNED_TIME": ("Q", 64),
}


def _column(i: int, name: str, type_name: str, length: int | None, width: int | None) -> tuple[str, str] | None:
    """(guard, bytes expression) for column ``i``'s value ``v{i}``, or None if not compiled."""
    v = f"v{i}"
    if type_name in _SIGNED:
        fmt, bits = _SIGNED[type_name]
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        if type_name in ("DATE", "TIME"):
            low, high = -(2**63), 2**63 - 1
        return (f"type({v}) is int and {low} <= {v} <= {high}", f"_pack_{fmt}(({v} ^ {-(2 ** (bits - 1))}) & {2**bits - 1})")
    if type_name in _UNSIGNED:
        fmt, bits = _UNSIGNED[type_name]
        high = 2 ** (bits - 1) - 1
        return f"type({v}) is int and 0 <= {v} <= {high}", f"_pack_{fmt}({v})"
    if type_name == "BOOLEAN":
        return f"type({v}) is bool", f"(b'\\x01' if {v} else b'\\x00')"
    if type_name == "VARCHAR":
        # VARCHAR(n) counts UTF-16 units: text that may hold a surrogate pair too many goes to the
        # general composer, which counts them
        limit = f" and len({v}) <= {length} and ({v}.isascii() or len({v}) <= {length // 2})" if length is not None else ""
        return f"type({v}) is str and {v}{limit}", f"{v}.encode()"
    if type_name == "CHAR":
        return (f"type({v}) is str and {v} and {v}.isascii() and len({v}) <= {width}", f"{v}.encode().ljust({width}, b' ')")
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
        if compiled is None or c.pad_to is not None or c.tenant_ascending:
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
        "general": general,
        "_INVERT": _INVERT,
        "_pack_B": struct.Struct(">B").pack,
        "_pack_H": struct.Struct(">H").pack,
        "_pack_I": struct.Struct(">I").pack,
        "_pack_Q": struct.Struct(">Q").pack,
    }
    exec(compile(source, f"<phoenix encoder {'/'.join(key.names)}>", "exec"), namespace)  # noqa: S102
    encoder: Callable[[Mapping[str, Any]], bytes] = namespace["encode"]
    return encoder


# The integer types read inline (dates and times keep their own codecs: their values are not ints).
_SIGNED_INTS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")
_UNSIGNED_INTS = ("UNSIGNED_TINYINT", "UNSIGNED_SMALLINT", "UNSIGNED_INT", "UNSIGNED_LONG")
_INTS = {n: ({**_SIGNED, **_UNSIGNED})[n] for n in _SIGNED_INTS + _UNSIGNED_INTS}


def _int_line(i: int, type_name: str, desc: bool) -> str:
    """``o{i}`` from ``x{i}``, the column's bytes read as a big-endian unsigned number: Phoenix
    flips a signed number's sign bit (the stored number is value + 2**(bits-1)), and DESC
    inverts every byte (the stored number is 2**bits - 1 - that)."""
    bits = _INTS[type_name][1]
    if type_name in _SIGNED_INTS:
        half = 2 ** (bits - 1)
        return f"    o{i} = {half - 1} - x{i}" if desc else f"    o{i} = x{i} - {half}"
    return f"    o{i} = {2**bits - 1} - x{i}" if desc else f"    o{i} = x{i}"


def _value_lines(i: int, type_name: str, desc: bool) -> list[str]:
    """Lines turning ``d`` (column ``i``'s bytes as they stand in the key, not empty) into ``o{i}``."""
    d = "d.translate(_INVERT)" if desc else "d"
    if type_name == "VARCHAR":
        return [f"    o{i} = {d}.decode()"]
    if type_name == "CHAR":
        return [f"    o{i} = {d}.decode().rstrip(' ')"]
    return [f"    o{i} = T{i}({d})"]


def compile_decoder(key: PhoenixKey, general: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """``(key bytes, verify=True) -> PK values`` for ``key``, equal to ``general`` (see the module
    docstring); ``general(key, verify)`` gets every key the unrolled walk is not sure of."""
    from keyshape.core import native
    from keyshape.core.hashing import java_bytes_hash

    columns = key.columns
    n = key.salt_buckets
    if any(c.pad_to is not None or c.tenant_ascending for c in columns) or n is not None and (type(n) is not int or not 1 <= n <= 256):
        return general  # (a bad SALT_BUCKETS is the general walk's one-line error)
    env: dict[str, Any] = {
        "general": general,
        "_INVERT": _INVERT,
        "_Doubt": _Doubt,
        "_jbh": native.bytes_hash if native.AVAILABLE else java_bytes_hash,
        "_errors": (_Doubt, UnicodeDecodeError, ValueError, IndexError, KeyshapeError, struct.error),
    }
    src = ["def decode(key, verify=True):", "    if key.__class__ is not bytes:", "        return general(key, verify)", "    n = len(key)"]
    o = 0
    if n is not None:
        src += [
            "    if not n:",
            "        return general(key, verify)",
            # Java's (byte) Math.abs(hash % buckets) is abs(hash) % buckets
            f"    if verify and key[0] != abs(_jbh(key[1:])) % {n}:",
            "        return general(key, verify)",
        ]
        o = 1
    src += [f"    o = {o}", "    try:"]
    body: list[str] = []
    last = len(columns) - 1
    group: list[int] = []  # consecutive fixed-width integer columns: one struct read

    def flush() -> None:
        if not group:
            return
        g = f"_G{group[0]}"
        st = struct.Struct(">" + "".join(_INTS[columns[i].type.name][0] for i in group))
        env[g] = st.unpack_from
        # a key ending before the group (trailing NULLs) or inside it: the general walk's
        body.extend([f"    e = o + {st.size}", "    if e > n:", "        raise _Doubt", f"    {', '.join(f'x{i}' for i in group)}, = {g}(key, o)"])
        body.extend(_int_line(i, columns[i].type.name, columns[i].desc) for i in group)
        body.append("    o = e")
        group.clear()

    for i, c in enumerate(columns):
        t = c.type
        if i > 0 and not columns[i - 1].type.fixed:
            body.append("    o += 1")  # the separator after the previous variable-width value
        if t.name in _INTS and t.fixed:
            group.append(i)
            continue
        flush()
        env[f"T{i}"] = t.decode
        if t.fixed:
            body += [f"    e = o + {t.width}", "    if e > n:", "        raise _Doubt", "    d = key[o:e]"]
        elif i == last:
            trail = 1 if key.row_key_order_optimizable and c.desc else 0
            # nothing left: trailing NULLs; an empty value: a NULL (both the general walk's)
            body += [
                "    if o >= n:",
                "        raise _Doubt",
                f"    d = key[o:n - {trail}]" if trail else "    d = key[o:]",
                "    if not d:",
                "        raise _Doubt",
            ]
        else:
            desc_sep = key.row_key_order_optimizable and c.desc
            # a value starting with 0x00 is a NULL (an IndexError past the end: trailing NULLs);
            # a value with no separator after it runs to the end of the key: the general walk's
            body += [
                "    if key[o] == 0:",
                "        raise _Doubt",
                f"    e = key.find({'255' if desc_sep else '0'}, o)",
                "    if e < 0:",
                "        raise _Doubt",
                "    d = key[o:e]",
            ]
            if desc_sep:
                body += ["    if not d:", "        raise _Doubt"]  # 0xFF right away: a NULL
        body += _value_lines(i, t.name, c.desc)
        body.append("    o = n" if not t.fixed and i == last else "    o = e")
    flush()
    if columns[last].type.fixed:
        body += ["    if o != n:", "        raise _Doubt"]
    out = "{" + ", ".join(f"{c.name!r}: o{i}" for i, c in enumerate(columns)) + "}"
    src += ["    " + ln for ln in body] + [f"        return {out}", "    except _errors:", "        pass", "    return general(key, verify)"]
    code = "\n".join(src) + "\n"
    exec(compile(code, f"<phoenix decoder {'/'.join(key.names)}>", "exec"), env)  # noqa: S102
    decoder: Callable[..., dict[str, Any]] = env["decode"]
    decoder.source = code  # type: ignore[attr-defined]  # for debugging: the generated source
    readers = {verify: _native_reader(key, verify) for verify in (False, True)}
    if readers[False] is None or readers[True] is None:
        return decoder
    # One C call per key: the C reader of the layout, or this decoder for what it leaves.
    return native.Decoder(readers[False], readers[True], decoder)  # type: ignore[no-any-return]


def _native_reader(key: PhoenixKey, verify: bool) -> Any:
    """A C :class:`keyshape.core.native.Reader` of ``key``'s row keys in Phoenix's layout (salt byte
    re-checked when ``verify``), for tables of VARCHAR, CHAR and integer columns; None for anything
    else, or without the C kernels. It reads what the generated decoder reads, and leaves to it
    (returns None for) every key that decoder would doubt."""
    from keyshape.core import native
    from keyshape.schema.prefixes.phoenix import PhoenixPrefix

    if not native.AVAILABLE:
        return None
    columns, n = key.columns, key.salt_buckets
    last = len(columns) - 1
    specs = []
    for i, c in enumerate(columns):
        t, desc = c.type, c.desc
        ends_ff = key.row_key_order_optimizable and desc  # a DESC value ends at 0xFF, the last one with a 0xFF
        if t.name == "VARCHAR":
            term, plan = (-1, 1 if ends_ff else 0) if i == last else (255 if ends_ff else 0, -1)
            specs.append((0, -1, plan, b"", False, desc, 0, 0, 0, False, term, False))
        elif t.name == "CHAR" and t.width:
            specs.append((0, t.width, 0, b" ", False, desc, 0, 0, 0, False, -1, False))
        elif t.name in _INTS and t.fixed:
            specs.append((6, _INTS[t.name][1] // 8, 0, b"", False, desc, 0, 0, 0, False, -1, t.name in _SIGNED_INTS))
        else:
            return None
    # the C reader's check of the phoenix prefix: abs(Arrays.hashCode(rest of the key)) % buckets
    check = (PhoenixPrefix.native_check, n, True, ()) if verify and n is not None else None
    head = 0 if n is None else 1
    try:
        return native.Reader(tuple(c.name for c in columns), head, head, b"", False, tuple(specs), check, True)
    except (ValueError, OverflowError):
        return None


class _Doubt(Exception):
    """Raised inside a compiled decoder when the general decoder must decide."""
