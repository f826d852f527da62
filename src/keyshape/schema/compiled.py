"""Per-schema encoders and decoders compiled once from generated Python source.

:meth:`KeySchema.encode` and :meth:`KeySchema.decode` are what application code calls for every
row, so a per-call walk over the field specs (type, encoding, order, width, pad, prefix strategy)
costs more than the hand-written code it replaces. Here each schema's layout is turned into the
source of one straight-line function with its constants folded in (widths, pad bytes, separator,
``struct`` packers, bucket counts), compiled with :func:`compile` and cached on the schema.

The generated code only handles the common, exactly-typed case of each field (a ``str`` for a
string field, an ``int`` in range for a number, ...); anything else (another type, an out-of-range
number, a value wider than its field, a key that does not parse) goes to the generic
:class:`~keyshape.schema.fields.FieldSpec` / ``KeySchema`` path, which gives the same bytes or
raises the same one-line error. So the fast path is never a second definition of the layout that
could drift: it is checked against the generic one by the property tests.

Salt prefixes computed from the hashed fields J (``mod``, ``md5``, ``crc32``, ``java-hash-short``,
``opentsdb``) are memoized per schema in a bounded dict keyed by J: a writer sees the same user,
device or metric many times, and the prefix is a pure function of J. The memo is cleared when full,
so memory stays bounded and a stream of distinct J only pays the lookup.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from binascii import hexlify
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from keyshape.core import hashing, ordered
from keyshape.schema.fields import FieldSpec

if TYPE_CHECKING:
    from keyshape.schema.keyschema import KeySchema

__all__ = ["compile_encoder", "compile_decoder", "java_string_hash_u32", "MEMO_LIMIT"]

MEMO_LIMIT = 1 << 16  # distinct J values kept per schema before the memo starts over
_M32 = 0xFFFFFFFF
_INVERT = bytes(range(255, -1, -1))
_SIGNED = tuple(c - 256 if c > 127 else c for c in range(256))
_MAX = {"int32": 2**31 - 1, "int64": 2**63 - 1, "timestamp": 2**63 - 1}


# Two bytes at a time: the big-endian pair (a, b) contributes a*31 + b to a Horner step of 31**2.
_PAIR = [(x >> 8) * 31 + (x & 0xFF) for x in range(1 << 16)]
_PAIRS_OF: dict[int, Callable[[bytes], tuple[int, ...]]] = {}
_POW31 = [pow(31, k, 1 << 32) for k in range(257)]


def _ascii_poly(j: bytes) -> int:
    """``sum(j[i] * 31**(len-1-i))`` (unbounded), two bytes per Python step: the per-byte loop is
    what costs in pure Python, and ``struct`` splits the key into pairs in one C call."""
    n = len(j)
    unpack = _PAIRS_OF.get(n)
    if unpack is None:
        unpack = _PAIRS_OF[n] = struct.Struct(f">{n & 1}x{n // 2}H").unpack if n < 4096 else None  # type: ignore[assignment]
        if unpack is None:
            h = 0
            for c in j:
                h = (h * 31 + c) & _M32
            return h
    h = j[0] if n & 1 else 0
    pair = _PAIR
    for x in unpack(j):
        h = h * 961 + pair[x]
    return h


def java_string_hash_u32(j: bytes) -> int:
    """``String.hashCode`` of J read as text (UTF-8, else ISO-8859-1), as 0..2**32-1.

    ASCII J (the usual case) is its own UTF-16 code units, so the polynomial runs over the bytes
    directly (:func:`_ascii_poly`) and is masked once at the end.
    """
    if j.isascii():
        return _ascii_poly(j) & _M32
    try:
        text = j.decode("utf-8")
    except UnicodeDecodeError:
        text = j.decode("latin-1")
    return hashing.java_string_hash(text) & _M32


def _java_bytes_hash(b: bytes) -> int:
    """``Arrays.hashCode(byte[])`` as a signed 32-bit int (see :func:`hashing.java_bytes_hash`).

    For ASCII bytes (all non-negative as Java bytes) it is ``31**len + poly(b)``."""
    if b.isascii():
        n = len(b)
        h = (_ascii_poly(b) + (_POW31[n] if n <= 256 else pow(31, n, 1 << 32))) & _M32
    else:
        h = 1
        s = _SIGNED
        for c in b:
            h = (h * 31 + s[c]) & _M32
    return h - (1 << 32) if h & 0x80000000 else h


# ------------------------------------------------------------------------------------ encoder


def _field_encode_lines(i: int, f: FieldSpec, env: dict[str, Any]) -> list[str]:
    """Source lines turning ``v{i}`` (the record's value) into ``p{i}`` (its bytes)."""
    env[f"F{i}"] = f
    t, enc, desc = f.type, f.encoding, f.descending
    v, p, F = f"v{i}", f"p{i}", f"F{i}"
    slow = [f"    {p} = {F}.encode({v})"]
    if t in ("int32", "int64", "timestamp") and enc != "ordered" or t == "float64":
        want = "float" if t == "float64" else "int"
        lines = [f"    if {v}.__class__ is not {want}:", f"        {v} = {F}.coerce({v})"]
        if t == "float64":
            if enc == "ordered":
                env[f"E{i}"] = ordered.encode_float64
                return lines + [f"    {p} = E{i}({v}, {desc})"]
            env["_pack_d"] = struct.Struct(">d").pack
            return lines + [f"    {p} = _pack_d({v})"]
        lo, hi = f.int_domain()
        x = f"({_MAX[t]} - {v})" if desc else v
        if enc == "hbase":
            pk = "_pack_i" if t == "int32" else "_pack_q"
            env[pk] = struct.Struct(">i" if t == "int32" else ">q").pack
            return lines + [f"    if {lo} <= {v} <= {hi}:", f"        {p} = {pk}({x})", "    else:",
                            "    " + slow[0]]
        w = f.text_width  # text digits; desc can need more digits than the width: slow path raises
        return lines + [f"    if {lo} <= {v} <= {hi}:", f"        {p} = b'%0{w}d' % {x}",
                        f"        if len({p}) != {w}:", "        " + slow[0], "    else:", "    " + slow[0]]
    if enc == "ordered":
        lines = []
        if t in ("int32", "int64", "timestamp"):
            lo, hi = f.int_domain()
            env[f"E{i}"] = ordered.encode_int32 if t == "int32" else ordered.encode_int64
            return [f"    if {v}.__class__ is int and {lo} <= {v} <= {hi}:", f"        {p} = E{i}({v}, {desc})",
                    "    else:", "    " + slow[0]]
        env[f"E{i}"] = ordered.encode_string if t == "string" else ordered.encode_blob_var
        want = "str" if t == "string" else "bytes"
        return [f"    if {v}.__class__ is {want}:", f"        {p} = E{i}({v}, {desc})", "    else:",
                "    " + slow[0]]
    # string / bytes as text or raw bytes
    want = "str" if t == "string" else "bytes"
    raw = f"{v}.encode()" if t == "string" else v
    lines = [f"    if {v}.__class__ is {want}:", f"        {p} = {raw}"]
    w = f.width
    if w is not None:
        pad = f._pad_byte()
        env[f"PAD{i}"] = pad
        if f.pad == "none":
            lines += [f"        if len({p}) != {w}:", f"            {p} = {F}.encode({v})"]
            if desc:
                lines += ["        else:", f"            {p} = {p}.translate(_INVERT)"]
        else:
            just = "rjust" if f.pad == "left" else "ljust"
            if len(pad) != 1:
                lines += [f"        {p} = {F}.encode({v})"]
            elif f.truncate == "keep-last":
                # The generic path also drops UTF-8 continuation bytes at the cut: leave those to it.
                return lines + [
                    f"        if len({p}) > {w}:",
                    f"            if 0x80 <= {p}[-{w}] < 0xC0:",
                    f"                {p} = {F}.encode({v})",
                    "            else:",
                    f"                {p} = {p}[-{w}:]" + (".translate(_INVERT)" if desc else ""),
                    "        else:",
                    f"            {p} = {p}.{just}({w}, PAD{i})" + (".translate(_INVERT)" if desc else ""),
                    "    else:", "    " + slow[0]]
            else:
                return lines + [f"        if len({p}) > {w}:", f"            {p} = {F}.encode({v})", "        else:",
                                f"            {p} = {p}.{just}({w}, PAD{i})" + (".translate(_INVERT)" if desc else ""),
                                "    else:", "    " + slow[0]]
        return lines + ["    else:", "    " + slow[0]]
    if desc:
        lines += [f"        {p} = {p}.translate(_INVERT)"]
    return lines + ["    else:", "    " + slow[0]]


def _prefix_lines(schema: KeySchema, env: dict[str, Any], material: str) -> list[str]:
    """Source lines computing ``pre`` (the prefix bytes) from ``material``."""
    p = schema.prefix
    name = p.name
    env["_P"] = p
    if name == "md5" or name == "md5-full":
        env["_md5"] = hashlib.md5
        env["_hexlify"] = hexlify
        w = p.width
        if w % 2 == 0:
            return [f"pre = _hexlify(_md5({material}).digest()[:{w // 2}])"]
        return [f"pre = _hexlify(_md5({material}).digest()[:{(w + 1) // 2}])[:{w}]"]
    if name == "mod":
        env["_jsh"] = java_string_hash_u32
        return [f"pre = b'%0{p.width}d' % ((_jsh({material}) & 0x7FFFFFFF) % {p.n})"]  # type: ignore[attr-defined]
    if name == "java-hash-short":
        env["_jsh"] = java_string_hash_u32
        env["_pack_h"] = struct.Struct(">H").pack
        return [f"pre = _pack_h(_jsh({material}) & 0x7FFF)"]
    if name == "crc32":
        env["_crc32"] = zlib.crc32
        return [f"pre = b'%04x' % (_crc32({material}) & 0xFFFF)"]
    if name == "phoenix":
        env["_jbh"] = _java_bytes_hash
        env["_BYTE"] = [bytes([i]) for i in range(256)]
        # (byte) Math.abs(hash % buckets): Java's remainder takes the dividend's sign.
        return [f"h = _jbh({material})", f"pre = _BYTE[(-h) % {p.n} if h < 0 else h % {p.n}]"]  # type: ignore[attr-defined]
    if name == "opentsdb" and p.n <= MEMO_LIMIT:  # type: ignore[attr-defined]
        env["_jbh"] = _java_bytes_hash
        n, mw = p.n, p.metric_width  # type: ignore[attr-defined]
        env["_SALTS"] = [_opentsdb_bytes(b, p.width) for b in range(n)]
        env["_ZERO_SALT"] = bytes(p.width)
        # A zero (or empty) metric UID is not salted; else |hash % buckets| (Java remainder).
        return [f"m = {material}[:{mw}]", "if m.count(0) == len(m):", "    pre = _ZERO_SALT", "else:",
                f"    h = _jbh({material})", f"    pre = _SALTS[(-h) % {n} if h < 0 else h % {n}]"]
    return [f"pre = _P.prefix_for({material})"]  # random (and huge opentsdb bucket counts)


def _opentsdb_bytes(bucket: int, width: int) -> bytes:
    """The salt bytes of a bucket, with Java's int shifts (as :func:`hashing.opentsdb_salt`)."""
    out = bytearray(width)
    for i in range(1, width + 1):
        out[width - i] = (bucket >> ((8 * (i - 1)) % 32)) & 0xFF
    return bytes(out)


def compile_encoder(schema: KeySchema) -> Callable[[Mapping[str, Any]], bytes]:
    """``record -> key`` for ``schema``, equal to the generic encode for every record."""
    env: dict[str, Any] = {"_INVERT": _INVERT, "_S": schema}
    fields = schema.fields
    names = [f.name for f in fields]
    src = ["def encode(record):", "    try:"]
    src += [f"        v{i} = record[{n!r}]" for i, n in enumerate(names)]
    src += ["    except KeyError:", "        return _S._encode_generic(record)"]
    for i, f in enumerate(fields):
        src += _field_encode_lines(i, f, env)
    sep = schema.separator
    env["SEP"] = sep
    parts = ", ".join(f"p{i}" for i in range(len(fields)))
    if len(fields) == 1:
        src.append("    k = p0")
    else:
        src.append(f"    k = SEP.join(({parts},))" if sep else f"    k = b''.join(({parts},))")
    p = schema.prefix
    if not p.width:
        src.append("    return k")
    else:
        if p.material == "K" or schema._j_is_k:
            mat = "k"
        elif p.material == "J":
            hashed = [f"p{i}" for i in schema._hash_idx]
            mat = "j"
            src.append(f"    j = {hashed[0]}" if len(hashed) == 1 else
                       f"    j = SEP.join(({', '.join(hashed)},))")
        else:
            mat = "b''"
        pre = _prefix_lines(schema, env, mat)
        if mat == "j" and p.name != "random":
            env["_MEMO"] = {}
            src += ["    pre = _MEMO.get(j)", "    if pre is None:"]
            src += ["        " + ln for ln in pre]
            src += [f"        if len(_MEMO) >= {MEMO_LIMIT}:", "            _MEMO.clear()", "        _MEMO[j] = pre"]
        else:
            src += ["    " + ln for ln in pre]
        if p.name == "md5-full":
            src.append("    return pre")
        elif p.sep_after and sep:
            src.append("    return pre + SEP + k")
        else:
            src.append("    return pre + k")
    code = "\n".join(src) + "\n"
    exec(compile(code, f"<keyshape encoder {schema.table.full_name}>", "exec"), env)  # noqa: S102
    fn = env["encode"]
    fn.source = code  # for debugging: the generated source
    return fn


# ------------------------------------------------------------------------------------ decoder


def _sep_test(at: str, sep: bytes) -> str:
    """A line testing that the separator is NOT at offset ``at`` of ``k`` (one byte: an int
    compare, no slice; past the end: IndexError, which hands the key to the generic decoder)."""
    if len(sep) == 1:
        return f"    if k[{at}] != {sep[0]}:"
    return f"    if k[{at}:{at} + {len(sep)}] != SEP:"


class _Doubt(Exception):
    """Raised inside a compiled decoder when the generic decoder must decide (and word the error)."""


_UNPACKED = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1), "timestamp": (-(2**63), 2**63 - 1)}


def _domain_lines(i: int, f: FieldSpec) -> list[str]:
    """``raise _Doubt`` when ``o{i}`` is outside what the field can encode; only the bounds the
    bytes can actually cross are tested (a big-endian int32 is always an int32)."""
    lo, hi = f.int_domain()
    if f.encoding == "hbase":
        a, b = _UNPACKED[f.type]
    else:
        a, b = 0, 10**f.text_width - 1
    if f.descending:
        a, b = _MAX[f.type] - b, _MAX[f.type] - a
    tests = ([f"o{i} < {lo}"] if a < lo else []) + ([f"o{i} > {hi}"] if b > hi else [])
    return [f"    if {' or '.join(tests)}:", "        raise _Doubt"] if tests else []


def _field_decode_lines(i: int, f: FieldSpec, env: dict[str, Any], start: str, stop: str,
                        keep: bool = False, domain: bool = False, key: str = "k") -> list[str]:
    """Source lines reading ``o{i}`` from ``key[start:stop]``; ``raise _Doubt`` when unsure.

    ``keep``: also keep the field's bytes as ``b{i}`` (a hashed field, for the prefix check).
    ``domain``: doubt integers outside what the field can encode (the generic decoder re-encodes
    the values to check the prefix, and fails on those)."""
    if keep:
        lines = _field_decode_lines(i, f, env, start, stop, False, domain, key)
        grab = f"    raw = {key}[{start}:{stop}]"
        if lines[0] == grab:  # text fields slice their bytes anyway
            return [f"    b{i} = raw = {key}[{start}:{stop}]"] + lines[1:]
        return [f"    b{i} = {key}[{start}:{stop}]"] + lines
    if domain and f.type in ("int32", "int64", "timestamp") and f.encoding != "ordered":
        return _field_decode_lines(i, f, env, start, stop, key=key) + _domain_lines(i, f)
    env[f"F{i}"] = f
    t, enc, desc = f.type, f.encoding, f.descending
    o = f"o{i}"
    if enc == "ordered":
        env[f"D{i}"] = ordered.decode
        # Fixed-width ordered numbers carry their own header; decode checks it.
        return [f"    {o}, rest = D{i}({key}[{start}:{stop}])", "    if rest:", "        raise _Doubt"]
    if t == "float64":
        env["_unpack_d"] = struct.Struct(">d").unpack_from
        return [f"    {o} = _unpack_d({key}, {start})[0]"]
    if t in ("int32", "int64", "timestamp"):
        if enc == "hbase":
            up = "_unpack_i" if t == "int32" else "_unpack_q"
            env[up] = struct.Struct(">i" if t == "int32" else ">q").unpack_from
            x = f"{up}({key}, {start})[0]"
        else:
            # isdigit: int() would also take signs, spaces and underscores.
            lines = [f"    raw = {key}[{start}:{stop}]", "    if not raw.isdigit():", "        raise _Doubt"]
            return lines + [f"    {o} = {_MAX[t]} - int(raw)" if desc else f"    {o} = int(raw)"]
        return [f"    {o} = {_MAX[t]} - {x}" if desc else f"    {o} = {x}"]
    lines = [f"    raw = {key}[{start}:{stop}]"]
    if desc:
        lines.append("    raw = raw.translate(_INVERT)")
    if f.width is not None and f.pad != "none":
        env[f"PAD{i}"] = f._pad_byte()
        lines.append(f"    raw = raw.{'lstrip' if f.pad == 'left' else 'rstrip'}(PAD{i})")
    if t == "string":
        lines += ["    try:", f"        {o} = raw.decode()", "    except UnicodeDecodeError:",
                  "        raise _Doubt"]
    else:
        lines.append(f"    {o} = raw")
    return lines


def _indent(lines: list[str]) -> list[str]:
    return ["    " + ln for ln in lines]


def _memo_store(memo: str, key: str, value: str) -> list[str]:
    return [f"    if len({memo}) >= {MEMO_LIMIT}:", f"        {memo}.clear()", f"    {memo}[{key}] = {value}"]


def _check_lines(schema: KeySchema, env: dict[str, Any], mat: str, got: str) -> list[str]:
    """Lines raising ``_Doubt`` unless ``got`` (the key's prefix bytes) is the prefix of ``mat``.

    J prefixes go through the encoder's memo (the same pure function of J), and a J seen here
    for the first time is remembered too, so a reader of the same users or devices hashes each once."""
    pre = _prefix_lines(schema, env, mat)
    enc_env = schema._encoder().__globals__
    if "_MEMO" in enc_env and mat == "j":
        env["_MEMO"] = enc_env["_MEMO"]
        lines = ["    pre = _MEMO.get(j)", "    if pre is None:"] + ["        " + ln for ln in pre]
        lines += _indent(_memo_store("_MEMO", "j", "pre"))
    else:
        lines = ["    " + ln for ln in pre]
    return lines + [f"    if {got} != pre:", "        raise _Doubt"]


def _join_line(parts: list[str], sep: bytes) -> str:
    """``j = ...``: J from its parts; for the few short parts of a key, ``+`` beats a join call."""
    return "    j = " + (" + SEP + " if sep else " + ").join(parts)


def _head_memo_width(schema: KeySchema, raw_check: bool) -> int | None:
    """How many leading fields a key's head (prefix + those fields) stands for, when the hashed
    fields are exactly the first fields, in order: then the head bytes alone decide both the
    prefix check and those fields' values, and a memo keyed by the head skips both."""
    p = schema.prefix
    m = len(schema._hash_idx)
    if not (raw_check and p.width and p.material == "J" and not schema._j_is_k and m):
        return None
    if list(schema._hash_idx) != list(range(m)) or m == len(schema.fields):
        return None
    return m


def _struct_layout(schema: KeySchema) -> bool:
    """Fields all fixed-width and not ordered, except perhaps a last text/bytes field: the key is
    then read with one precomputed ``struct`` unpack (which also checks the length)."""
    fields = schema.fields
    if any(f.encoding == "ordered" for f in fields):
        return False
    return all(f.fixed_width is not None for f in fields[:-1]) and (
        fields[-1].fixed_width is not None or schema._ends[-1] == 0)


def _struct_decoder_lines(schema: KeySchema, env: dict[str, Any], raw_check: bool) -> list[str]:
    """The body of a decoder for a :func:`_struct_layout` schema: one ``unpack`` of the fixed
    part into prefix, separators, numbers and raw text, then per-field conversions."""
    fields, sep, p = schema.fields, schema.separator, schema.prefix
    ls, head = len(sep), p.head_width
    check = bool(p.width and p.material)
    memo_m = _head_memo_width(schema, raw_check)
    hashed = set(schema._hash_idx) if raw_check and p.material == "J" and not schema._j_is_k else set()
    fmt, names, src, miss = [">"], [], [], []
    first = 0
    if memo_m:
        # The head: prefix, separators and the first memo_m fields as one bytes item ``h``.
        width = head + sum(f.fixed_width for f in fields[:memo_m]) + ls * (memo_m - 1)  # type: ignore[misc]
        fmt.append(f"{width}s")
        names.append("hd")
        if head != p.width:
            miss += [_sep_test(str(p.width), sep).replace("k[", "hd["), "        raise _Doubt"]
        pos = head
        for i in range(memo_m):
            w = fields[i].fixed_width
            miss += _field_decode_lines(i, fields[i], env, str(pos), str(pos + w), True, True, key="hd")  # type: ignore[operator]
            pos += w  # type: ignore[operator]
            if i < memo_m - 1 and ls:
                miss += [_sep_test(str(pos), sep).replace("k[", "hd["), "        raise _Doubt"]
                pos += ls
        parts = [f"b{i}" for i in schema._hash_idx]
        miss.append(_join_line(parts, sep))
        miss += _check_lines(schema, env, "j", f"hd[:{p.width}]")
        vals = ", ".join(f"o{i}" for i in range(memo_m))
        miss += _memo_store("_HM", "hd", vals if memo_m == 1 else f"({vals})")
        env["_HM"] = {}
        first = memo_m
        if first < len(fields) and ls:
            fmt.append(f"{ls}s")
            names.append(f"s{first - 1}")
    elif p.width:
        fmt.append(f"{p.width}s")
        names.append("kp")
        if head != p.width:
            fmt.append(f"{ls}s")
            names.append("sp")
    post: list[str] = []
    tail: str | None = None
    fixed = sum(f.fixed_width or 0 for f in fields) + ls * (len(fields) - 1) + head
    for i in range(first, len(fields)):
        f = fields[i]
        w = f.fixed_width
        if w is None:  # the last field, to the end of the key
            tail = str(fixed)
            post += _field_decode_lines(i, f, env, tail, "", i in hashed, raw_check)
            continue
        if f.type in ("int32", "int64", "timestamp", "float64") and f.encoding == "hbase" and i not in hashed \
                or f.type == "float64" and i not in hashed:
            code = {"int32": "i", "int64": "q", "timestamp": "q", "float64": "d"}[f.type]
            fmt.append(code)
            if f.descending and f.type != "float64":
                names.append(f"x{i}")
                post.append(f"    o{i} = {_MAX[f.type]} - x{i}")
            else:
                names.append(f"o{i}")
            if raw_check and f.type != "float64":
                post += _domain_lines(i, f)
        else:
            fmt.append(f"{w}s")
            names.append(f"b{i}")
            lines = _field_decode_lines(i, f, env, "0", str(w), False, raw_check, key=f"b{i}")
            if lines == [f"    raw = b{i}[0:{w}]", f"    o{i} = raw"]:
                lines = [f"    o{i} = b{i}"]  # raw bytes as they stand
            post += [f"    raw = b{i}" if ln == f"    raw = b{i}[0:{w}]" else ln for ln in lines]
        if i < len(fields) - 1 and ls:
            fmt.append(f"{ls}s")
            names.append(f"s{i}")
    env["_U"] = struct.Struct("".join(fmt)).unpack_from if tail is not None else struct.Struct("".join(fmt)).unpack
    if names:
        src.append(f"    {', '.join(names)}, = _U(k)")
    for nm in names:
        if nm[0] == "s":
            src += [f"    if {nm} != SEP:", "        raise _Doubt"]
    if memo_m:
        vals = ", ".join(f"o{i}" for i in range(memo_m))
        src += ["    v = _HM.get(hd)", "    if v is None:"] + _indent(miss) + ["    else:", f"        {vals}{',' if memo_m > 1 else ''} = v"]
    src += post
    if check and not memo_m:
        if raw_check and hashed:
            parts = [f"b{i}" for i in schema._hash_idx]
            src.append(_join_line(parts, sep))
            src += _check_lines(schema, env, "j", "kp")
        elif raw_check:
            src += _check_lines(schema, env, f"k[{head}:]", "kp")
        else:
            return []  # the re-encode check: the general route
    out = "{" + ", ".join(f"{f.name!r}: o{i}" for i, f in enumerate(fields)) + "}"
    return src + [f"    return {out}"]


def compile_decoder(schema: KeySchema) -> Callable[[bytes], dict[str, Any]]:
    """``key -> fields`` for ``schema``, equal to the generic decode (same values, same errors:
    anything the straight-line code doubts is handed to the generic decoder)."""
    env: dict[str, Any] = {"_INVERT": _INVERT, "_slow": schema._decode_generic, "_Doubt": _Doubt}
    if not schema.prefix.recoverable or schema.encode_only is not None:
        return schema._decode_generic  # it raises the one-line error
    fields, ends, sep = schema.fields, schema._ends, schema.separator
    env["SEP"] = sep
    p = schema.prefix
    head = p.head_width
    ls = len(sep)
    check = bool(p.width and p.material)
    # The prefix is checked against the hashed fields' own bytes when decoding then re-encoding
    # them gives those bytes back (text, bytes and integers in their domain); ordered and float
    # fields (NaN payloads) are re-encoded as the generic decoder does.
    raw_check = check and not any(f.encoding == "ordered" or f.type == "float64" for f in fields)
    src = ["def decode(k):", "    if k.__class__ is not bytes:", "        k = bytes(k)"]
    body = _struct_decoder_lines(schema, env, raw_check) if _struct_layout(schema) else []
    if body:
        if fields[-1].fixed_width is not None:
            # unpack takes any bytes-like key and gives bytes items: no copy to bytes needed.
            src = src[:1]
        return _finish(src + body, env, schema)
    # Fields are read from the key ``k`` itself at offsets after the prefix (no copy of K).
    if head and p.sep_after and sep:
        src += [_sep_test(str(p.width), sep), "        raise _Doubt"]
    src.append("    n = len(k)")
    hashed = set(schema._hash_idx) if raw_check and p.material == "J" and not schema._j_is_k else set()
    # One hashed field first (orders' user): its head memo stands for its decode and the check.
    memo_one = _head_memo_width(schema, raw_check) == 1
    # Positions: a static int while every field so far has a fixed width, else the name of a variable.
    pos: int | str = head
    last = len(fields) - 1
    for i, (f, plan) in enumerate(zip(fields, ends)):
        w = f.fixed_width
        start = str(pos)
        if f.encoding == "ordered" and w is None:
            env[f"D{i}"] = ordered.decode
            src += [f"    {f'o{i}'}, rest = D{i}(k[{start}:])", "    q = n - len(rest)"]
            pos = "q"
        elif w is not None:
            end = f"{pos} + {w}" if isinstance(pos, str) else str(pos + w)
            lines = _field_decode_lines(i, f, env, start, end, i in hashed, raw_check)
            src += _head_memo(schema, env, lines, end) if memo_one and i == 0 else lines
            if isinstance(pos, int):
                pos += w
            else:
                src.append(f"    q = {end}")
                pos = "q"
        else:
            if plan == -1:
                src += [f"    e = k.find(SEP, {start})", "    if e < 0:", "        raise _Doubt"]
            else:
                src += [f"    e = n - {plan}", f"    if e < {start}:", "        raise _Doubt"]
            lines = _field_decode_lines(i, f, env, start, "e", i in hashed, raw_check)
            src += _head_memo(schema, env, lines, "e") if memo_one and i == 0 else lines
            src.append("    q = e")
            pos = "q"
        if i < last and sep:
            src += [_sep_test(str(pos), sep), "        raise _Doubt"]
            if isinstance(pos, int):
                pos += ls
            else:
                src.append(f"    q = q + {ls}")
    src += [f"    if n != {pos}:", "        raise _Doubt"]
    out = "{" + ", ".join(f"{f.name!r}: o{i}" for i, f in enumerate(fields)) + "}"
    if raw_check and not memo_one:
        if hashed:
            parts = [f"b{i}" for i in schema._hash_idx]
            src.append(_join_line(parts, sep))
            src += _check_lines(schema, env, "j", f"k[:{p.width}]")
        else:
            src += _check_lines(schema, env, f"k[{head}:]", f"k[:{p.width}]")
    elif check and not raw_check:
        # The prefix must match the fields: re-encode (memoized for J salts) and compare.
        env["_enc"] = schema._encoder()
        src += [f"    out = {out}", "    if _enc(out) != k:", "        raise _Doubt", "    return out"]
    if not check or raw_check:
        src.append(f"    return {out}")
    return _finish(src, env, schema)


def _head_memo(schema: KeySchema, env: dict[str, Any], lines: list[str], end: str) -> list[str]:
    """Field 0's lines behind a memo keyed by the key's head ``k[:end]`` (prefix, separator, field
    0): on a miss they run with the prefix check, and the head's value is remembered."""
    env["_HM"] = {}
    miss = lines + ["    j = b0"] + _check_lines(schema, env, "j", f"k[:{schema.prefix.width}]")
    miss += _memo_store("_HM", "hd", "o0")
    return [f"    hd = k[:{end}]", "    o0 = _HM.get(hd)", "    if o0 is None:"] + _indent(miss)


def _finish(src: list[str], env: dict[str, Any], schema: KeySchema) -> Callable[[bytes], dict[str, Any]]:
    # A short or malformed key can make an unpack or a slice fail midway: the generic decoder
    # then decides, outside the try, so its one-line error is raised without a chained one.
    src = src[:1] + ["    try:"] + ["    " + ln for ln in src[1:]] + [
        "    except (_Doubt, struct.error, IndexError, TypeError, ValueError):", "        pass", "    return _slow(k)"]
    env["struct"] = struct
    code = "\n".join(src) + "\n"
    exec(compile(code, f"<keyshape decoder {schema.table.full_name}>", "exec"), env)  # noqa: S102
    fn = env["decode"]
    fn.source = code
    return fn
