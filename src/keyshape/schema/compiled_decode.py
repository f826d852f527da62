"""The per-layout decoders of :mod:`keyshape.schema.compiled`: ``key -> fields`` as one
straight-line function per layout (generated source, compiled once).

Fixed layouts are read by one precomputed ``struct`` unpack (which also checks the length); when
the hashed fields lead the key, a memo keyed by the key's head (prefix, separator, those fields)
stands for their decoding and the salt-prefix check; other J prefixes go through the encoder's J
memo. Anything the generated code doubts goes to the generic decoder, which decides and words the
error, so both always agree (tests/property/test_compiled.py).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable
from typing import Any

from keyshape.core import native, ordered
from keyshape.errors import KeyshapeError
from keyshape.schema.compiled import _INVERT, MEMO_LIMIT, _prefix_lines, encoder_for
from keyshape.schema.fields import FieldSpec
from keyshape.schema.layout import KeyLayout


__all__ = ["compile_decoder", "decoder_for", "native_reader", "native_readers"]


def _sep_test(at: str, sep: bytes) -> str:
    """A line testing that the separator is NOT at offset ``at`` of ``k`` (one byte: an int
    compare, no slice; past the end: IndexError, which hands the key to the generic decoder)."""
    if len(sep) == 1:
        return f"    if k[{at}] != {sep[0]}:"
    return f"    if k[{at}:{at} + {len(sep)}] != SEP:"


class _Doubt(Exception):
    """Raised inside a compiled decoder when the generic decoder must decide (and word the error)."""


def _domain_lines(i: int, f: FieldSpec) -> list[str]:
    """``raise _Doubt`` when ``o{i}`` is outside what the field can encode; only the bounds the
    bytes can actually cross are tested (a big-endian int32 is always an int32)."""
    lo, hi = f.int_domain()
    if f.encoding == "hbase":
        bits = 8 * f.ftype.widths["hbase"]  # a signed big-endian integer of the field's width
        a, b = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    else:
        a, b = 0, 10**f.text_width - 1
    if f.descending:
        a, b = f.type_max - b, f.type_max - a
    tests = ([f"o{i} < {lo}"] if a < lo else []) + ([f"o{i} > {hi}"] if b > hi else [])
    return [f"    if {' or '.join(tests)}:", "        raise _Doubt"] if tests else []


def _field_decode_lines(
    i: int, f: FieldSpec, env: dict[str, Any], start: str, stop: str, keep: bool = False, domain: bool = False, key: str = "k"
) -> list[str]:
    """Source lines reading ``o{i}`` from ``key[start:stop]`` (from ``key`` itself when both are
    empty: the field's bytes already cut out); ``raise _Doubt`` when unsure.

    ``keep``: also keep the field's bytes as ``b{i}`` (a hashed field, for the prefix check).
    ``domain``: doubt integers outside what the field can encode (the generic decoder re-encodes
    the values to check the prefix, and fails on those)."""
    whole = not start and not stop
    cut = key if whole else f"{key}[{start}:{stop}]"
    lines: list[str] = []
    if keep:
        lines.append(f"    b{i} = {cut}")
        key, cut, start, stop, whole = f"b{i}", f"b{i}", "", "", True
    if domain and f.ftype.integer and f.encoding != "ordered":
        return lines + _field_decode_lines(i, f, env, start, stop, key=key) + _domain_lines(i, f)
    env[f"F{i}"] = f
    enc, o = f.encoding, f"o{i}"
    at = "0" if whole else start
    if enc == "ordered" and not f.ftype.own_codec:
        env[f"D{i}"] = ordered.decode
        # Fixed-width ordered numbers carry their own header; decode checks it.
        return lines + [f"    {o}, rest = D{i}({cut})", "    if rest:", "        raise _Doubt"]
    # the type's lines (a type without its own: its decode_value, whose error is a doubt)
    got = f.ftype.decode_lines(f, i, env, cut, key, at)
    if got is not None:
        return lines + got
    env[f"DV{i}"] = functools.partial(f.ftype.decode_value, f)
    env["KeyshapeError"] = KeyshapeError
    return lines + ["    try:", f"        {o} = DV{i}({cut})", "    except KeyshapeError:", "        raise _Doubt"]


def _indent(lines: list[str]) -> list[str]:
    return ["    " + ln for ln in lines]


def _memo_store(memo: str, key: str, value: str) -> list[str]:
    return [f"    if len({memo}) >= {MEMO_LIMIT}:", f"        {memo}.clear()", f"    {memo}[{key}] = {value}"]


def _check_lines(layout: KeyLayout, env: dict[str, Any], mat: str, got: str) -> list[str]:
    """Lines raising ``_Doubt`` unless ``got`` (the key's prefix bytes) is the prefix of ``mat``.

    J prefixes go through the encoder's memo (the same pure function of J), and a J seen here
    for the first time is remembered too, so a reader of the same users or devices hashes each once."""
    pre = _prefix_lines(layout, env, mat)
    enc_env = encoder_for(layout).__globals__
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


def _head_memo_width(layout: KeyLayout, raw_check: bool) -> int | None:
    """How many leading fields a key's head (prefix + those fields) stands for, when the hashed
    fields are exactly the first fields, in order: then the head bytes alone decide both the
    prefix check and those fields' values, and a memo keyed by the head skips both."""
    p = layout.prefix
    m = len(layout.hash_idx)
    if not (raw_check and p.width and p.material == "J" and not layout.hashes_whole_key and m):
        return None
    if list(layout.hash_idx) != list(range(m)) or m == len(layout.fields):
        return None
    return m


def _split_lines(layout: KeyLayout, env: dict[str, Any]) -> list[str]:
    """Lines returning the fields of a key whose fields are text (no numbers in binary, no raw
    bytes, nothing inverted) when one ``split`` on the separator cuts it into prefix and fields of
    their widths; any other key falls through (a separator inside a value, a short field) to the
    positional reading that follows. The prefix is not re-derived: the ``verify=False`` path."""
    fields, sep, p = layout.fields, layout.separator, layout.prefix
    if not sep or p.width and not p.sep_after or sum(f.fixed_width is None for f in fields) > 1:
        return []
    for f in fields:
        text = not f.ftype.own_codec and (
            f.ftype.utf8_text and f.encoding in ("text", "hbase") and not f.descending or f.ftype.integer and f.encoding == "text"
        )  # desc: MAX - value
        if not text:
            return []
    names = (["xp"] if p.width else []) + [f"x{i}" for i in range(len(fields))]
    sizes = ([("xp", p.width)] if p.width else []) + [(f"x{i}", f.fixed_width) for i, f in enumerate(fields) if f.fixed_width is not None]
    body: list[str] = []
    for i, f in enumerate(fields):
        body += _field_decode_lines(i, f, env, "", "", key=f"x{i}")
    out = "{" + ", ".join(f"{f.name!r}: o{i}" for i, f in enumerate(fields)) + "}"
    lengths = " and ".join(f"len({x}) == {w}" for x, w in sizes) or "True"
    return (
        ["    try:", f"        {', '.join(names)}, = k.split(SEP)", f"        if {lengths}:"]
        + ["    " * 2 + ln for ln in body]
        + [f"            return {out}", "    except (_Doubt, ValueError, TypeError, AttributeError):", "        pass"]
    )


def _struct_layout(layout: KeyLayout) -> bool:
    """Fields all fixed-width and not ordered, except perhaps a last text/bytes field: the key is
    then read with one precomputed ``struct`` unpack (which also checks the length)."""
    fields = layout.fields
    if any(f.encoding == "ordered" for f in fields):
        return False
    return all(f.fixed_width is not None for f in fields[:-1]) and (fields[-1].fixed_width is not None or layout.field_ends[-1] == 0)


def _struct_decoder_lines(layout: KeyLayout, env: dict[str, Any], check: bool, raw_check: bool, unpack: str = "_U") -> list[str]:
    """The body of a decoder for a :func:`_struct_layout` layout: one ``unpack`` of the fixed
    part into prefix, separators, numbers and raw text, then per-field conversions."""
    fields, sep, p = layout.fields, layout.separator, layout.prefix
    ls, head = len(sep), p.head_width
    memo_m = _head_memo_width(layout, raw_check)
    hashed = set(layout.hash_idx) if raw_check and p.material == "J" and not layout.hashes_whole_key else set()
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
        parts = [f"b{i}" for i in layout.hash_idx]
        miss.append(_join_line(parts, sep))
        miss += _check_lines(layout, env, "j", f"hd[:{p.width}]")
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
        code = f.ftype.hbase_struct[1:] if f.ftype.hbase_struct and f.encoding == "hbase" and not f.ftype.own_codec else None
        if code is not None and i not in hashed:
            fmt.append(code)
            if f.descending and f.ftype.integer:
                names.append(f"x{i}")
                post.append(f"    o{i} = {f.type_max} - x{i}")
            else:
                names.append(f"o{i}")
            if raw_check and f.ftype.integer:
                post += _domain_lines(i, f)
        else:
            fmt.append(f"{w}s")
            names.append(f"b{i}")
            post += _field_decode_lines(i, f, env, "", "", False, raw_check, key=f"b{i}")
        if i < len(fields) - 1 and ls:
            fmt.append(f"{ls}s")
            names.append(f"s{i}")
    env[unpack] = struct.Struct("".join(fmt)).unpack_from if tail is not None else struct.Struct("".join(fmt)).unpack
    if names:
        src.append(f"    {', '.join(names)}, = {unpack}(k)")
    for nm in names:
        if nm[0] == "s":
            src += [f"    if {nm} != SEP:", "        raise _Doubt"]
    if memo_m:
        vals = ", ".join(f"o{i}" for i in range(memo_m))
        src += ["    v = _HM.get(hd)", "    if v is None:"] + _indent(miss) + ["    else:", f"        {vals}{',' if memo_m > 1 else ''} = v"]
    src += post
    if check and not memo_m:
        if raw_check and hashed:
            parts = [f"b{i}" for i in layout.hash_idx]
            src.append(_join_line(parts, sep))
            src += _check_lines(layout, env, "j", "kp")
        elif raw_check:
            src += _check_lines(layout, env, f"k[{head}:]", "kp")
        else:
            return []  # the re-encode check: the general route
    out = "{" + ", ".join(f"{f.name!r}: o{i}" for i, f in enumerate(fields)) + "}"
    return src + [f"    return {out}"]


def native_readers(layout: KeyLayout) -> dict[bool, Any]:
    """``{verify: native_reader(layout, verify)}``, made once per layout (the per-record decoder
    and ``decode_many`` share them)."""
    return layout.cached("native_readers", lambda: {v: native_reader(layout, v) for v in (False, True)})


def native_reader(layout: KeyLayout, verify: bool) -> Any:
    """A C :class:`keyshape.core.native.Reader` for the positional reading of ``layout``'s keys
    (prefix re-checked when ``verify``), or None when the C kernels are not built or the layout
    has what the reader leaves to Python: ordered encodings, or float fields in a verified key
    (their NaN payloads are re-encoded, not compared as bytes)."""
    p, fields = layout.prefix, layout.fields
    if not native.AVAILABLE or not p.recoverable or layout.encode_only is not None:
        return None  # the generic decoder says why it cannot decode
    check = verify and bool(p.width and p.material)
    if check and (p.native_check is None or not all(f.ftype.raw_checkable for f in fields)):
        return None
    # each field's tuple, from its type (None: a field the C reader does not read: ordered
    # encodings, a type without a C code); one mode for all (Phoenix's separators, or the layout's)
    specs = [f.ftype.native_spec(f, plan, check) for f, plan in zip(fields, layout.plans)]
    modes = {f.ftype.native_phoenix for f in fields}
    if any(spec is None for spec in specs) or len(modes) > 1 or len(layout.separator) > 16:
        return None
    salt = None
    if check:
        hashed = p.material == "J" and not layout.hashes_whole_key and bool(layout.hash_idx)
        salt = (
            p.native_check,
            getattr(p, "n", 1),
            not hashed,
            tuple(layout.hash_idx) if hashed else (),
            getattr(p, "metric_width", 0),
            getattr(p, "seed", 0),  # murmur3's seed
        )
    sepcheck = bool(p.head_width and p.sep_after and layout.separator)
    try:
        return native.Reader(tuple(f.name for f in fields), p.head_width, p.width, layout.separator, sepcheck, tuple(specs), salt, modes.pop())
    except (ValueError, OverflowError):  # a layout past the reader's limits (a 2**31-bucket salt): Python's
        return None


def compile_decoder(
    layout: KeyLayout, verify: bool = True, use_native: bool = True, slow: Callable[..., dict[str, Any]] | None = None
) -> Callable[..., dict[str, Any]]:
    """``key -> fields`` for ``layout``, equal to the generic decode (same values, same errors:
    anything the straight-line code doubts is handed to the generic decoder).

    The function takes ``verify`` as the generic decode does. Compiled with ``verify=False`` it
    reads the fields without re-deriving the hash prefix (the layout of a random salt); compiled
    with ``verify=True`` it holds such a twin's lines too, under ``if not verify`` (so an
    unverified call costs one Python call), and hands what they doubt to the generic decoder.

    With the C kernels (``use_native`` and :data:`keyshape.core.native.AVAILABLE`) the result is a
    :class:`keyshape.core.native.Decoder`: C readers of the layout (:func:`native_reader`) first,
    this Python decoder for what they leave.

    ``slow``: what decides (and words the error of) a key the compiled code doubts, called as
    ``slow(key, verify)`` (default the layout's :meth:`~KeyLayout.decode_generic`; Phoenix's key
    gives its own walk, equal in values, worded as Phoenix's)."""
    general = layout.decode_generic if slow is None else slow
    plain = functools.partial(general, verify=False)
    env: dict[str, Any] = {"_INVERT": _INVERT, "_slow": general if verify else plain, "_Doubt": _Doubt}
    if not layout.prefix.recoverable or layout.encode_only is not None:
        return general  # it raises the one-line error
    env["SEP"] = layout.separator
    p = layout.prefix
    check = verify and bool(p.width and p.material)
    readers = native_readers(layout) if use_native else {False: None, True: None}
    src = [f"def decode(key, verify={verify}):", "    k = key"]  # named as KeySchema.decode's arguments
    if check:
        env["_slow_plain"] = plain
        # The twin's own struct name: its layout of the key differs from the checked one's.
        twin = _guarded(_body(layout, env, False, "_UP"), "_slow_plain")
        if readers[verify] is None and readers[False] is not None:
            # The salt is checked in Python (md5, crc32, opentsdb): the unverified calls still
            # read in C, from inside this function (a Decoder in front would cost every call).
            env["_RP"] = readers[False].read  # type: ignore[union-attr]
            twin = ["    r = _RP(k)", "    if r is not None:", "        return r"] + twin
        src += ["    if not verify:"] + _indent(twin)
    top = len(src)  # the verify=False dispatch stays outside the try
    fn = _finish(src + _body(layout, env, verify, "_U"), env, layout, top)
    if readers[verify] is None:
        return fn
    # One C call: the reader for the call's verify, else this Python decoder.
    return native.Decoder(readers[False], readers[verify], fn)  # type: ignore[no-any-return]


def _body(layout: KeyLayout, env: dict[str, Any], verify: bool, unpack: str) -> list[str]:
    """The lines of a decoder's body (after its ``def``), reading ``k`` into ``o0..``; they
    ``raise _Doubt`` (or let an unpack/slice fail) when the generic decoder must decide."""
    fields, ends, sep = layout.fields, layout.field_ends, layout.separator
    p = layout.prefix
    head = p.head_width
    ls = len(sep)
    check = verify and bool(p.width and p.material)
    # The prefix is checked against the hashed fields' own bytes when decoding then re-encoding
    # them gives those bytes back (text, bytes and integers in their domain); ordered and float
    # fields (NaN payloads) are re-encoded as the generic decoder does.
    # A type with its own codec may read bytes it would not write (it is re-encoded, too).
    raw_check = check and not any(f.encoding == "ordered" or not f.ftype.raw_checkable or f.ftype.own_codec for f in fields)
    # values that may not encode back (Phoenix's): a prefix of the key's bytes is checked on them
    key_check = check and not layout.exact_decode and (p.material == "K" or layout.hashes_whole_key)
    src = _split_lines(layout, env) if not verify else []  # takes any bytes-like key
    guard = ["    if k.__class__ is not bytes:", "        k = bytes(k)"]
    body = _struct_decoder_lines(layout, env, check, raw_check, unpack) if _struct_layout(layout) else []
    if body:
        if fields[-1].fixed_width is not None and not check:
            # unpack takes any bytes-like key and gives bytes items: no copy to bytes needed
            # (a prefix check may read the key itself, which must then be bytes)
            guard = []
        return src + guard + body
    src += guard
    # Fields are read from the key ``k`` itself at offsets after the prefix (no copy of K).
    if head and p.sep_after and sep:
        src += [_sep_test(str(p.width), sep), "        raise _Doubt"]
    src.append("    n = len(k)")
    hashed = set(layout.hash_idx) if raw_check and p.material == "J" and not layout.hashes_whole_key else set()
    # One hashed field first (orders' user): its head memo stands for its decode and the check.
    memo_one = _head_memo_width(layout, raw_check) == 1
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
        elif w is None and plan is None:
            # a field of a type that finds its own end (Phoenix's variable-width columns): it reads itself
            env[f"R{i}"], env["KeyshapeError"] = f.decode_at, KeyshapeError
            src += ["    try:", f"        o{i}, q = R{i}(k, {start}, None)", "    except KeyshapeError:", "        raise _Doubt"]
            pos = "q"
        elif w is not None:
            end = f"{pos} + {w}" if isinstance(pos, str) else str(pos + w)
            lines = _field_decode_lines(i, f, env, start, end, i in hashed, raw_check)
            src += _head_memo(layout, env, lines, end) if memo_one and i == 0 else lines
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
            src += _head_memo(layout, env, lines, "e") if memo_one and i == 0 else lines
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
            parts = [f"b{i}" for i in layout.hash_idx]
            src.append(_join_line(parts, sep))
            src += _check_lines(layout, env, "j", f"k[:{p.width}]")
        else:
            src += _check_lines(layout, env, f"k[{head}:]", f"k[:{p.width}]")
    elif key_check:
        src += _check_lines(layout, env, f"k[{head}:]", f"k[:{p.width}]")
    elif check and not raw_check:
        # The prefix must match the fields: re-encode (memoized for J salts) and compare.
        env["_enc"] = encoder_for(layout)
        src += [f"    out = {out}", "    if _enc(out) != k:", "        raise _Doubt", "    return out"]
    if not check or raw_check or key_check:
        src.append(f"    return {out}")
    return src


def _head_memo(layout: KeyLayout, env: dict[str, Any], lines: list[str], end: str) -> list[str]:
    """Field 0's lines behind a memo keyed by the key's head ``k[:end]`` (prefix, separator, field
    0): on a miss they run with the prefix check, and the head's value is remembered."""
    env["_HM"] = {}
    miss = lines + ["    j = b0"] + _check_lines(layout, env, "j", f"k[:{layout.prefix.width}]")
    miss += _memo_store("_HM", "hd", "o0")
    return [f"    hd = k[:{end}]", "    o0 = _HM.get(hd)", "    if o0 is None:"] + _indent(miss)


def _guarded(body: list[str], slow: str) -> list[str]:
    """``body`` in a try whose doubts (and failed unpacks/slices) end in ``slow(k)``."""
    return (
        ["    try:"]
        + _indent(body)
        + ["    except (_Doubt, struct.error, IndexError, TypeError, ValueError):", "        pass", f"    return {slow}(k)"]
    )


def _finish(src: list[str], env: dict[str, Any], layout: KeyLayout, top: int) -> Callable[[bytes], dict[str, Any]]:
    # A short or malformed key can make an unpack or a slice fail midway: the generic decoder
    # then decides, outside the try, so its one-line error is raised without a chained one.
    # Lines before ``top`` (the verify=False dispatch) stay outside.
    src = src[:top] + _guarded(src[top:], "_slow")
    env["struct"] = struct
    code = "\n".join(src) + "\n"
    exec(compile(code, f"<keyshape decoder {layout.name}>", "exec"), env)  # noqa: S102
    fn = env["decode"]
    fn.source = code
    return fn


def decoder_for(layout: KeyLayout) -> Callable[..., dict[str, Any]]:
    """The compiled decoder of ``layout`` (``(key, verify=True) -> fields``, :func:`compile_decoder`),
    made on first use and kept with the layout; an encode-only layout gets its generic decode,
    which says why it cannot."""
    return layout.cached("decode", lambda: compile_decoder(layout))
