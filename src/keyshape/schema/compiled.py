"""Per-layout encoders and decoders compiled once from generated Python source.

:meth:`KeySchema.encode` and :meth:`KeySchema.decode` are what application code calls for every
row, so a per-call walk over the field specs (type, encoding, order, width, pad, prefix strategy)
costs more than the hand-written code it replaces. Here each layout's layout is turned into the
source of one straight-line function with its constants folded in (widths, pad bytes, separator,
``struct`` packers, bucket counts), compiled with :func:`compile` and cached on the layout.

The generated code only handles the common, exactly-typed case of each field (a ``str`` for a
string field, an ``int`` in range for a number, ...); anything else (another type, an out-of-range
number, a value wider than its field, a key that does not parse) goes to the generic
:class:`~keyshape.schema.fields.FieldSpec` / :class:`~keyshape.schema.layout.KeyLayout` path, which gives the same bytes or
raises the same one-line error. So the fast path is never a second definition of the layout that
could drift: it is checked against the generic one by the property tests.

Salt prefixes computed from the hashed fields J (``mod``, ``md5``, ``crc32``, ``java-hash-short``,
``opentsdb``) are memoized per layout in a bounded dict keyed by J: a writer sees the same user,
device or metric many times, and the prefix is a pure function of J. The memo is cleared when full,
so memory stays bounded and a stream of distinct J only pays the lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from keyshape.core import hashing, native
from keyshape.core.hashing import POLY
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.fields import FieldSpec
from keyshape.schema.layout import KeyLayout
from keyshape.schema.prefixes import make_prefix


__all__ = ["compile_encoder", "encode_rows", "encoder_for", "java_string_hash_u32", "MEMO_LIMIT"]

MEMO_LIMIT = 1 << 16  # distinct J values kept per layout before the memo starts over
_M32 = 0xFFFFFFFF
_INVERT = bytes(range(255, -1, -1))


def java_string_hash_u32(j: bytes) -> int:
    """``String.hashCode`` of J read as text (UTF-8, else ISO-8859-1), as 0..2**32-1.

    ASCII J (the usual case) is its own UTF-16 code units, so the polynomial runs over the bytes
    directly (:data:`keyshape.core.hashing.POLY`) and is masked once at the end; with the C
    kernels built, :func:`keyshape.core.native.string_hash` does it all.
    """
    if native.AVAILABLE and j.__class__ is bytes:
        return native.string_hash(j)  # type: ignore[no-any-return]
    if j.isascii():
        return POLY[len(j)](j) & _M32  # type: ignore[no-any-return]
    try:
        text = j.decode("utf-8")
    except UnicodeDecodeError:
        text = j.decode("latin-1")
    return hashing.java_string_hash(text) & _M32


# ------------------------------------------------------------------------------------ encoder


def _field_encode_lines(i: int, f: FieldSpec, env: dict[str, Any]) -> list[str]:
    """Source lines turning ``v{i}`` (the record's value) into ``p{i}`` (its bytes): the field
    type's (:meth:`FieldType.encode_lines`), or a call of the field's encode."""
    env[f"F{i}"] = f
    return f.ftype.encode_lines(f, i, env) or [f"    p{i} = F{i}.encode(v{i})"]


def _prefix_lines(layout: KeyLayout, env: dict[str, Any], material: str) -> list[str]:
    """Source lines computing ``pre`` (the prefix bytes) from ``material``: the strategy's own
    (:meth:`keyshape.schema.prefixes.Prefix.compiled_lines`), with this module's String.hashCode lines."""
    p = layout.prefix
    env["_P"] = p
    return p.compiled_lines(env, material, lambda e, m: _string_hash_lines(layout, e, m), MEMO_LIMIT)


def _string_hash_lines(layout: KeyLayout, env: dict[str, Any], material: str) -> list[str]:
    """Lines setting ``h`` to ``String.hashCode(material)`` modulo 2**32 at least in its low 31
    bits: the C kernel where it is built (J is always bytes here); else ASCII J calls its length's
    unrolled polynomial directly (bound once when every hashed field has a fixed width), anything
    else the general :func:`java_string_hash_u32`."""
    if native.AVAILABLE:
        env["_nsh"] = native.string_hash
        return [f"h = _nsh({material})"]
    env["_jsh"] = java_string_hash_u32
    lines = []
    if not material.isidentifier():
        lines.append(f"jm = {material}")
        material = "jm"
    widths = [layout.fields[i].fixed_width for i in layout.hash_idx]
    if material == "j" and all(w is not None for w in widths) and not layout.hashes_whole_key:
        n = sum(widths) + len(layout.separator) * (len(widths) - 1)  # type: ignore[arg-type]
        env[f"_POLY{n}"] = POLY[n]
        poly = f"_POLY{n}({material})"
    else:
        env["_POLY"] = POLY
        poly = f"_POLY[len({material})]({material})"
    return lines + [f"if {material}.isascii():", f"    h = {poly}", "else:", f"    h = _jsh({material})"]


def compile_encoder(layout: KeyLayout) -> Callable[[Mapping[str, Any]], bytes]:
    """``record -> key`` for ``layout``, equal to the generic encode for every record."""
    env: dict[str, Any] = {"_INVERT": _INVERT, "_S": layout}
    fields = layout.fields
    src = ["def encode(record):", "    try:"]
    # (a field whose type takes an absent value as None: the record's get)
    src += [f"        v{i} = record{f'.get({f.name!r})' if f.ftype.null_when_absent else f'[{f.name!r}]'}" for i, f in enumerate(fields)]
    src += ["    except KeyError:", "        return _S.encode_generic(record)"]
    for i, f in enumerate(fields):
        src += _field_encode_lines(i, f, env)
    sep = layout.separator
    env["SEP"] = sep
    parts = ", ".join(f"p{i}" for i in range(len(fields)))
    p = layout.prefix
    if layout.key_tail is not None and p.width and p.material == "J" and not layout.hashes_whole_key:
        return layout.encode_generic  # hashed parts of a key whose end varies per record: the generic walk's
    # With a J prefix the unprefixed key K is never needed alone: the key is one join.
    one_join = p.width and p.material == "J" and not layout.hashes_whole_key and p.deterministic and (p.sep_after or not sep)
    if layout.key_tail is not None:
        # how the key ends is its last field type's rule (Phoenix's trailing NULLs): the parts it keeps
        env["_TAIL"] = layout.key_tail
        last = f"p{len(fields) - 1}"
        src.append(f"    k = SEP.join(({parts},)) if {last} else SEP.join(_TAIL([{parts}]))")
    elif not one_join:
        src.append("    k = p0" if len(fields) == 1 else f"    k = SEP.join(({parts},))" if sep else f"    k = b''.join(({parts},))")
    if not p.width:
        src.append("    return k")
    else:
        if p.material == "K" or layout.hashes_whole_key:
            mat = "k"
        elif p.material == "J":
            hashed = [f"p{i}" for i in layout.hash_idx]
            mat = "j"
            src.append(f"    j = {hashed[0]}" if len(hashed) == 1 else f"    j = SEP.join(({', '.join(hashed)},))")
        else:
            mat = "b''"
        pre = _prefix_lines(layout, env, mat)
        if mat == "j" and p.deterministic:
            env["_MEMO"] = {}
            src += ["    pre = _MEMO.get(j)", "    if pre is None:"]
            src += ["        " + ln for ln in pre]
            src += [f"        if len(_MEMO) >= {MEMO_LIMIT}:", "            _MEMO.clear()", "        _MEMO[j] = pre"]
        else:
            src += ["    " + ln for ln in pre]
        if one_join:
            src.append(f"    return SEP.join((pre, {parts}))" if sep else f"    return b''.join((pre, {parts}))")
        elif p.whole_key:
            src.append("    return pre")
        elif p.sep_after and sep:
            src.append("    return pre + SEP + k")
        else:
            src.append("    return pre + k")
    code = "\n".join(src) + "\n"
    exec(compile(code, f"<keyshape encoder {layout.name}>", "exec"), env)  # noqa: S102
    fn = env["encode"]
    fn.source = code  # for debugging: the generated source
    return fn


def encoder_for(layout: KeyLayout) -> Callable[[Mapping[str, Any]], bytes]:
    """The compiled encoder of ``layout``, made on first use and kept with the layout (every
    schema sharing the layout shares it; a pickled layout compiles its own)."""
    return layout.cached("encode", lambda: compile_encoder(layout))


def encode_rows(layout: KeyLayout, columns: Mapping[str, Any], as_array: bool = False) -> list[bytes] | KeyArray:
    """:meth:`KeyLayout.encode_many` for a layout whose key ends by its last field type's rule
    (:attr:`KeyLayout.key_tail`: Phoenix's trailing NULLs), which the column route builds per
    record: the compiled encoder of the unprefixed key per record, then a prefix of the key's
    bytes for all keys at once (a prefix of hashed fields: the whole compiled encoder per record).

    - ``columns``: field name -> values (a list or a numpy array), every field, all one length.
    - ``as_array``: return a :class:`~keyshape.core.keyarray.KeyArray` (default False: a list of bytes).
    """
    names = layout.field_names
    missing = [n for n in names if n not in columns]
    if missing:
        raise KeyshapeError(f"encode_many lacks columns {missing}; give all of: {', '.join(names)}")
    lists = [columns[n].tolist() if isinstance(columns[n], np.ndarray) else list(columns[n]) for n in names]
    if len({len(values) for values in lists}) > 1:
        raise KeyshapeError(f"encode_many: columns differ in length {sorted({len(v) for v in lists})}; give equal lengths")
    records = [dict(zip(names, values)) for values in zip(*lists)]
    p = layout.prefix
    if not p.width or not (p.material == "K" or layout.hashes_whole_key) or not records:
        full = encoder_for(layout)
        keys = [full(r) for r in records]
        return KeyArray.from_keys(keys) if as_array else keys
    bare = layout.cached("unprefixed", lambda: layout.replace(prefix=make_prefix("none")))
    rest = encoder_for(bare)
    ks = KeyArray.from_keys([rest(r) for r in records])
    heads = p.prefix_many(ks)
    if p.whole_key:
        out = heads
    elif p.sep_after and layout.separator:
        out = KeyArray.concat([heads, KeyArray.constant(layout.separator, len(ks)), ks])
    else:
        out = KeyArray.concat([heads, ks])
    return out if as_array else out.tolist()
