"""``KeySchema.decode_many``: many keys to field columns, vectorized where the layout allows.

When every field has a fixed width except at most one text/bytes field measured from the end of
the key (the layouts of all the examples), each field sits at a known offset from the start or
from the end of every key, so the keys are read as one zero-padded byte matrix
(:class:`~keyshape.core.keyarray.KeyArray`) and each field is cut out of it as a column: binary
numbers are a dtype view, decimal text a dot product with powers of ten, text a numpy string
array. The hash prefix is checked for all keys at once against the prefix recomputed from the
hashed fields' bytes (:meth:`Prefix.prefix_many`), once per distinct salt material (users,
devices and series repeat), as the per-record decoder's memos do.

A list of keys goes first through the C reader of the layout (:mod:`keyshape.core.native`),
where the kernels are built and the layout is one it reads: one pass over the keys into columns,
in chunks on every core this process may use (batches of 32,768 keys and more).

Anything else (ordered-encoded fields, two variable-width fields, non-ASCII text, NUL bytes in
text, a key that does not parse) decodes key by key with the compiled per-record decoder, which
raises the same one-line error as :meth:`KeySchema.decode` for the first bad key.
"""

from __future__ import annotations

import decimal
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from keyshape.core import batchhash
from keyshape.core.keyarray import KeyArray, zero_past
from keyshape.schema.compiled_decode import decoder_for, native_readers
from keyshape.schema.layout import KeyLayout


__all__ = ["decode_many"]


class _Fallback(Exception):
    """The vector route cannot decide: decode key by key."""


def decode_many(layout: KeyLayout, keys: Sequence[bytes] | KeyArray, *, as_arrow: bool = False, verify: bool = True) -> dict[str, Any] | pa.Table:
    """Field columns of ``keys``: numbers as numpy arrays (int64, float64), text as numpy str
    arrays (a list when some value ends in NUL, which numpy str cannot hold), bytes as lists of
    bytes; value for value equal to decoding every key with :meth:`KeySchema.decode`.

    - ``layout``: the keys' layout; ``keys``: row keys (a list of bytes or a KeyArray).
    - ``as_arrow``: a ``pyarrow.Table`` instead (default False), see below.
    - ``verify``: re-derive the hash prefix of every key (default True), as ``KeySchema.decode``.

    ``as_arrow=True``: a ``pyarrow.Table`` instead (int64, float64, string, binary columns in
    field order). Text is then cut out of the key bytes as Arrow buffers (offsets and data), so
    no Python object is made per value: the form to hand to Parquet, Spark or pandas.
    ``verify=False``: the hash prefix is not re-derived, as with :meth:`KeySchema.decode`."""
    if isinstance(keys, list):
        # A list of bytes keys goes through the C reader of the layout in one call, where the
        # kernels are built; it leaves whole batches (any key it cannot read) to the routes below.
        # (a field the reader reads in a type's own mode, Phoenix's, is read key by key below)
        reader = native_readers(layout)[bool(verify)] if all(plan.native is not None for plan in layout.plans) else None
        # text columns take the dtype the Python routes would give them: the field's width where
        # the vector route reads the layout, else the longest value's (numpy from the values)
        got = reader.columns(keys, as_arrow, _vector_layout(layout), batchhash.default_threads()) if reader is not None else None
        if got is not None:
            return _native_table(layout, got, len(keys)) if as_arrow else _native_columns(layout, got, len(keys))
    ka = keys if isinstance(keys, KeyArray) else KeyArray.from_keys(keys)
    if len(ka) and _vector_layout(layout):
        try:
            out = _decode_vector(layout, ka, as_arrow, verify)
            return _table(layout, out) if as_arrow else out
        except _Fallback:
            pass
    out = _decode_rows(layout, ka.tolist(), verify)
    return _table(layout, out) if as_arrow else out


def _native_columns(layout: KeyLayout, got: tuple[Any, ...], n: int) -> dict[str, Any]:
    """The C reader's columns as numpy arrays (bytes columns stay lists of bytes)."""
    out: dict[str, Any] = {}
    for f, col in zip(layout.fields, got):
        if f.ftype.column_dtype == "str":
            w, buf = col
            out[f.name] = np.frombuffer(buf, dtype=f"U{w}") if w else np.full(n, "")
        elif f.ftype.column_dtype is None:
            out[f.name] = col
        else:
            out[f.name] = np.frombuffer(col, dtype=f.ftype.column_dtype)
    return out


def _native_table(layout: KeyLayout, got: tuple[Any, ...], n: int) -> pa.Table:
    """The C reader's Arrow-mode columns as a ``pyarrow.Table`` (text from its offsets and bytes as
    they stand, numbers from their buffers: no Python object per value)."""
    arrays = []
    for f, col in zip(layout.fields, got):
        if f.ftype.text_like:
            offsets, data = col
            arrays.append(pa.Array.from_buffers(f.ftype.arrow_type, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]))
        else:
            arrays.append(pa.array(np.frombuffer(col, dtype=f.ftype.column_dtype)))
    return pa.Table.from_arrays(arrays, names=[f.name for f in layout.fields])


def _table(layout: KeyLayout, columns: dict[str, Any]) -> pa.Table:
    arrays = []
    for f in layout.fields:
        col = columns[f.name]
        if isinstance(col, np.ndarray) and col.dtype.kind == "U":
            col = col.tolist()  # Arrow reads a numpy str value only up to its first NUL
        if not isinstance(col, (pa.Array, pa.ChunkedArray)):
            try:
                col = pa.array(col, type=f.ftype.arrow_type)
            except OverflowError:
                # a decimal text field wider than int64 holds: exact integers as decimal128
                col = pa.array([None if v is None else decimal.Decimal(v) for v in col], type=pa.decimal128(38, 0))
        arrays.append(col)
    return pa.Table.from_arrays(arrays, names=[f.name for f in layout.fields])


def _decode_rows(layout: KeyLayout, keys: list[bytes], verify: bool) -> dict[str, Any]:
    dec = decoder_for(layout)
    rows = [dec(k, verify) for k in keys]
    out: dict[str, Any] = {}
    for f in layout.fields:
        col = [r[f.name] for r in rows]
        dtype = f.ftype.column_dtype
        if dtype == "int64":
            out[f.name] = np.array(col, dtype=np.int64) if all(-(2**63) <= v < 2**63 for v in col) else col
        elif dtype == "str":
            # numpy str values cannot end in NUL
            out[f.name] = col if any(v.endswith("\x00") for v in col) else np.array(col, dtype=str)
        elif dtype is not None:
            out[f.name] = np.array(col, dtype=dtype)
        else:
            out[f.name] = col
    return out


def _vector_layout(layout: KeyLayout) -> bool:
    if not layout.prefix.recoverable or layout.encode_only is not None:  # decode() raises
        return False
    variable = [f for f in layout.fields if f.fixed_width is None]
    if any(f.encoding == "ordered" or f.ftype.own_codec for f in layout.fields) or len(variable) > 1:
        return False
    return all(e is None or e >= 0 for e in layout.field_ends)


def _take(m: np.ndarray, start: np.ndarray | int, width: int) -> np.ndarray:
    """``width`` columns of every row from ``start`` (an int or one start per row)."""
    if isinstance(start, int):
        return m[:, start : start + width]
    return np.take_along_axis(m, start[:, None] + np.arange(width), axis=1)


def _decode_vector(layout: KeyLayout, ka: KeyArray, arrow: bool, verify: bool) -> dict[str, Any]:
    p, sep, fields = layout.prefix, layout.separator, layout.fields
    ls, n = len(sep), len(ka)
    lengths = ka.lengths
    head = p.head_width
    fixed_total = sum(f.fixed_width or 0 for f in fields) + ls * (len(fields) - 1)
    shortest, longest = int(lengths.min()), int(lengths.max())
    if shortest < head + fixed_total:
        raise _Fallback
    # Every read below stays inside each key (fixed fields before the variable one end before
    # the shortest key does; the rest are measured from each key's length), so the matrix is
    # read as it stands, never written.
    m = ka.matrix
    sep_row = np.frombuffer(sep, dtype=np.uint8)
    if p.sep_after and ls and p.width and not (m[:, p.width : head] == sep_row).all():
        raise _Fallback
    check = verify and bool(p.width and p.material)
    hashed = set(layout.hash_idx) if check and p.material == "J" and not layout.hashes_whole_key else set()
    raw: dict[int, KeyArray] = {}  # the hashed fields' bytes, for the prefix check
    at_column: dict[int, int] = {}  # where each field at the same offset in every key starts
    ids_of: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # a hashed field's (value id per row, values)
    tail = 0  # bytes after the variable-width field, read from a right-aligned copy of the keys
    for f, plan in zip(fields, layout.field_ends):
        if f.fixed_width is None:
            tail = plan or 0
    same_length = shortest == longest
    if same_length:
        tail = 0  # one key length: every field sits at a fixed offset
    right = _take(m, lengths - tail, tail) if tail else None
    out: dict[str, Any] = {}
    pos: int | np.ndarray = head
    last = len(fields) - 1
    plan_after = 0  # set at the variable-width field; read by the fixed fields after it
    for i, (f, plan) in enumerate(zip(fields, layout.field_ends)):
        w = f.fixed_width
        if w is not None:
            if isinstance(pos, np.ndarray):
                assert right is not None
                at = tail - plan_after
                cols = right[:, at : at + w]
                plan_after -= w
            else:
                cols = m[:, pos : pos + w]
                at_column[i] = pos
            if i in hashed:
                raw[i] = KeyArray(cols)
            if (
                i in hashed
                and i in at_column
                and not arrow
                and n >= 1024
                and f.ftype.text_like
                and not f.ftype.utf8_text
                and not f.descending
                and f.pad == "none"
                and w <= 8
            ):
                # a salted series' bytes (OpenTSDB's metric and tags): their distinct values
                # make the column and, together, the distinct J of the prefix check
                ids_of[i] = _distinct_ids(cols)
                out[f.name] = _bytes_list(cols, None, True, ids_of[i])
            else:
                out[f.name] = _fixed_value(f, cols, arrow)
            pos = pos + w
        else:
            if isinstance(pos, np.ndarray) or plan is None:
                raise _Fallback
            end = lengths - plan
            if (end < pos).any():
                raise _Fallback
            plan_after = plan  # bytes from here to the end of the key
            vlen = end - pos
            width = int(vlen.max())
            cols = m[:, pos : pos + width]
            if plan:  # fields follow: zero them out of this one's columns (only where they can be)
                cols = cols.copy()
                zero_past(cols, vlen, int(vlen.min()))
            if i in hashed:
                raw[i] = KeyArray(np.ascontiguousarray(cols), vlen)
            out[f.name] = _text_value(f, cols, vlen, arrow)
            pos = int(end[0]) if same_length else end
        if i < last and ls:
            if isinstance(pos, np.ndarray):
                assert right is not None
                at = tail - plan_after
                got = right[:, at : at + ls]
                plan_after -= ls
            else:
                got = m[:, pos : pos + ls]
            if not (got == sep_row).all():
                raise _Fallback
            pos = pos + ls
    if isinstance(pos, np.ndarray) and not np.array_equal(pos, lengths) or not isinstance(pos, np.ndarray) and not shortest == longest == pos:
        raise _Fallback
    lead = _leading_j(layout) if check else None
    if lead is not None:
        # J sits right after the prefix: check each distinct head (prefix + J) once, as
        # decode()'s head memo does, unless nearly every head is distinct.
        heads = m[:, : head + lead]
        d = batchhash.distinct_rows(KeyArray(heads))
        if d is not None:
            heads = d[0].matrix
        expected = p.prefix_many(KeyArray(np.ascontiguousarray(heads[:, head:]))).matrix
        if not np.array_equal(expected, heads[:, : p.width]):
            raise _Fallback  # some key was written with another layout: decode() words the error
    elif check:
        # Salt material repeats (users, devices, series): each distinct J is hashed once, as
        # decode()'s memos do, unless nearly all are distinct.
        d = _distinct_j(layout, ids_of)
        if d is None:
            mats = _j_of(layout, ka, raw, at_column)
            d = batchhash.distinct_rows(mats)
        expected = p.prefix_many(mats).matrix if d is None else batchhash.gather_rows(p.prefix_many(d[0]).matrix, d[1])
        if not np.array_equal(expected, m[:, : p.width]):
            raise _Fallback  # some key was written with another layout: decode() words the error
    return out


def _j_of(layout: KeyLayout, ka: KeyArray, raw: dict[int, KeyArray], at_column: dict[int, int]) -> KeyArray:
    """Every key's prefix material: K, or J from the hashed fields' bytes (one column gather
    when they sit at the same offsets in every key and J has no separators)."""
    p, sep, fields, m = layout.prefix, layout.separator, layout.fields, ka.matrix
    head = p.head_width
    if p.material == "K" or layout.hashes_whole_key:
        return KeyArray(np.ascontiguousarray(m[:, head:]), ka.lengths - head)
    idx = layout.hash_idx
    if not sep and all(i in at_column for i in idx):
        spans = [np.arange(at_column[i], at_column[i] + (fields[i].fixed_width or 0)) for i in idx]
        return KeyArray(np.take(m, np.concatenate(spans), axis=1))
    pieces = [raw[i] for i in idx]
    if sep:
        sk = KeyArray.constant(sep, len(ka))
        pieces = [x for piece in pieces for x in (sk, piece)][1:]
    return KeyArray.concat(pieces)


def _distinct_ids(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(per row, the index of its value among the distinct values; the distinct values as a
    matrix) of a column of at most 8 bytes: each row packed into one integer, then Arrow's hash
    dictionary encoding (twice as fast as encoding the bytes)."""
    n, w = cols.shape
    dt: Any = np.uint32 if w <= 4 else np.uint64
    code = cols[:, 0].astype(dt)
    for c in range(1, w):
        code |= cols[:, c].astype(dt) << dt(8 * c)
    enc = pa.array(code).dictionary_encode()
    values = enc.dictionary.to_numpy().astype("<u8").view(np.uint8).reshape(-1, 8)[:, :w]
    return enc.indices.to_numpy(zero_copy_only=False), values


def _distinct_j(layout: KeyLayout, ids_of: dict[int, tuple[np.ndarray, np.ndarray]]) -> tuple[KeyArray, np.ndarray] | None:
    """:func:`batchhash.distinct_rows` of J, from the distinct values of its parts: each row's
    J is the mixed-radix number of its parts' value ids (one integer encoding instead of
    hashing the rows' bytes), each distinct J's bytes the parts' values side by side."""
    idx = layout.hash_idx
    if not idx or any(i not in ids_of for i in idx):
        return None
    radix = [len(ids_of[i][1]) for i in idx]
    if float(np.prod(np.array(radix, dtype=np.float64))) >= 2.0**62:
        return None
    jid = np.zeros(len(ids_of[idx[0]][0]), dtype=np.int64)
    for i, r in zip(idx, radix):
        jid *= r
        jid += ids_of[i][0]
    enc = pa.array(jid).dictionary_encode()
    rest = enc.dictionary.to_numpy()
    parts: list[np.ndarray] = []
    for i, r in reversed(list(zip(idx, radix))):
        parts.insert(0, ids_of[i][1][rest % r])
        rest = rest // r
    sep = np.frombuffer(layout.separator, dtype=np.uint8)
    if len(sep):
        parts = [x for part in parts for x in (np.broadcast_to(sep, (len(part), len(sep))), part)][1:]
    return KeyArray(np.hstack(parts)), enc.indices.to_numpy(zero_copy_only=False)


def _leading_j(layout: KeyLayout) -> int | None:
    """The width of J when J is the key's bytes right after the prefix (the hashed fields are
    the first fields, in order, all of fixed width, joined by the separator as in the key)."""
    p, fields, idx = layout.prefix, layout.fields, list(layout.hash_idx)
    if p.material != "J" or layout.hashes_whole_key or not idx or idx != list(range(len(idx))):
        return None
    widths = [fields[i].fixed_width for i in idx]
    if any(w is None for w in widths):
        return None
    return sum(widths) + len(layout.separator) * (len(idx) - 1)  # type: ignore[arg-type]


def _fixed_value(f: Any, cols: np.ndarray, arrow: bool = False) -> Any:
    enc, desc = f.encoding, f.descending
    n, w = cols.shape
    if f.ftype.numeric and not f.ftype.integer:  # a double, Bytes.toBytes(double)
        return np.ascontiguousarray(cols).view(">f8").reshape(n).astype(np.float64)
    if f.ftype.integer:
        if enc == "hbase":
            v = np.ascontiguousarray(cols).view(f.ftype.hbase_dtype).reshape(n).astype(np.int64)
            if not desc and f.ftype.min is not None and f.ftype.min >= 0 and (v < 0).any():
                raise _Fallback  # a negative timestamp: no value of the type (decode says so, key by key)
            if desc:
                if (v < 0).any():
                    raise _Fallback  # MAX - v leaves int64: Python ints per key
                v = np.int64(f.type_max) - v
            return v
        if ((cols - np.uint8(48)) > 9).any():  # uint8 wraps: anything but '0'..'9' is > 9
            raise _Fallback
        if w > 18 and _too_big(cols, w):
            raise _Fallback
        v = np.zeros(n, dtype=np.int64)
        for c in range(w):  # Horner over the digit columns, all rows at once
            v *= 10
            v += cols[:, c] - np.uint8(48)
        return np.int64(f.type_max) - v if desc else v
    return _text_value(f, cols, np.full(n, w, dtype=np.int64), arrow)


def _too_big(cols: np.ndarray, w: int) -> bool:
    """True when some decimal value does not fit int64 (then Python ints per key)."""
    top = str(2**63 - 1).rjust(w, "0").encode()
    as_s = np.ascontiguousarray(cols).view(f"S{w}").reshape(len(cols))
    return bool((as_s > np.bytes_(top)).any())


def _text_value(f: Any, cols: np.ndarray, vlen: np.ndarray, arrow: bool = False) -> Any:
    """A string/bytes column: inverted back when descending, padding stripped, decoded."""
    n, w = cols.shape
    fixed = f.fixed_width is not None
    if f.descending:
        cols = cols ^ np.uint8(0xFF)
        if not fixed:
            cols[np.arange(w)[None, :] >= vlen[:, None]] = 0
    if arrow:
        return _arrow_text(f, cols, vlen)
    if not f.ftype.utf8_text:
        if f.width is not None and f.pad != "none":
            return [r.lstrip(f.pad_byte) if f.pad == "left" else r.rstrip(f.pad_byte) for r in _bytes_list(cols, vlen, fixed)]
        return _bytes_list(cols, vlen, fixed)
    if w == 0:
        return np.full(n, "")
    # One pass for NUL (numpy strings would drop it) and non-ASCII (needs UTF-8 checks): as
    # uint8, c - 1 wraps 0 to 255, so both are c - 1 >= 127; outside a variable field's bytes
    # the padding is all NUL, exactly w * n - sum(vlen) bytes.
    if fixed:
        if int((cols - np.uint8(1)).max()) >= 127:
            raise _Fallback
    elif int(np.count_nonzero((cols - np.uint8(1)) >= np.uint8(127))) != n * w - int(vlen.sum()):
        raise _Fallback
    if f.width is not None and f.pad != "none":
        cols = _strip(cols, f.pad_byte, f.pad == "left")
    # ASCII bytes widened to code points are a numpy str array as they stand (no string cast).
    return cols.astype("<u4").view(f"<U{w}").reshape(n)


def _strip(cols: np.ndarray, pad: bytes, left: bool) -> np.ndarray:
    """Each row without its leading (``left``) or trailing ``pad`` bytes, left-aligned and
    NUL-filled (numpy str values end at their first trailing NUL). Rows are numpy ``S`` values
    (a view when each row's bytes are contiguous) stripped by numpy's string ufuncs; nothing is
    done when no row starts (ends) with the pad byte."""
    n, w = cols.shape
    if not (cols[:, 0 if left else w - 1] == pad[0]).any():
        return cols
    if cols.strides[1] != 1:
        cols = np.ascontiguousarray(cols)
    rows = cols.view(f"S{w}")[:, 0]
    out = np.strings.lstrip(rows, pad) if left else np.strings.rstrip(rows, pad)
    return out.astype(f"S{w}", copy=False).view(np.uint8).reshape(n, w)


def _arrow_text(f: Any, cols: np.ndarray, vlen: np.ndarray) -> pa.Array:
    """The column as an Arrow string/binary array cut straight out of the key bytes: each row's
    value is ``cols[row, start:end]`` (padding and a variable field's NUL fill left out), the
    data buffer is those bytes in row order (one boolean-mask gather) and the offsets are the
    running sum of their lengths."""
    n, w = cols.shape
    start = np.zeros(n, dtype=np.int64)
    end = np.minimum(vlen, w).astype(np.int64)
    if f.width is not None and f.pad != "none":  # a padded field is fixed-width: end == w
        pad = np.uint8(f.pad_byte[0])
        if f.pad == "left":
            start = _lead(cols, pad)
        else:
            end = _keep(cols, pad)
    # The mask in the narrowest dtype that holds a column index: n x w comparisons of int64
    # cost more than everything else here.
    small: Any = np.uint8 if w < 256 else np.int32
    at: Any = np.arange(w, dtype=small)[None, :]
    cut_start, cut_end = bool(start.any()), bool((end != w).any())
    if not cut_start and not cut_end:
        data = np.ascontiguousarray(cols).reshape(-1)
    else:
        inside = at < end.astype(small)[:, None] if cut_end else None
        if cut_start:
            later = at >= start.astype(small)[:, None]
            inside = later if inside is None else inside & later
        data = cols[inside]  # row-major: each row's bytes, rows in order
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(end - start, out=offsets[1:])
    big = int(offsets[-1]) >= 2**31
    kind = (pa.large_string() if big else pa.string()) if f.ftype.utf8_text else (pa.large_binary() if big else pa.binary())
    offs = offsets if big else offsets.astype(np.int32)
    out = pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offs), pa.py_buffer(data)])
    if f.ftype.utf8_text and len(data) and int(data.max()) >= 128:
        try:
            out.validate(full=True)  # UTF-8; a key whose text is not is decode()'s error to word
        except pa.ArrowInvalid:
            raise _Fallback from None
    return out


def _lead(cols: np.ndarray, pad: np.uint8) -> np.ndarray:
    """Per row, the index of the first byte that is not ``pad`` (the width when all are)."""
    n, w = cols.shape
    other = cols != pad
    lead = other.argmax(axis=1)
    lead[~other[np.arange(n), lead]] = w  # all padding: the empty string
    return lead


def _keep(cols: np.ndarray, pad: np.uint8) -> np.ndarray:
    """Per row, the number of bytes up to and including the last one that is not ``pad``."""
    n, w = cols.shape
    other = cols[:, ::-1] != pad
    last = other.argmax(axis=1)
    return np.where(other[np.arange(n), last], w - last, 0)


def _bytes_list(cols: np.ndarray, vlen: np.ndarray | None, fixed: bool, ids: tuple[np.ndarray, np.ndarray] | None = None) -> list[bytes]:
    """The rows as ``bytes`` (trailing NULs kept): fixed-width rows come out of one
    ``struct.unpack`` of the whole column (n items made in C)."""
    n, w = cols.shape
    if not fixed or w == 0 or n == 0:
        return KeyArray(np.ascontiguousarray(cols), vlen).tolist()
    if n >= 1024:
        # Ids, metrics and tags repeat: make one bytes object per distinct value (Arrow's hash
        # dictionary encoding, in C) and hand out references, unless most values are distinct.
        # Values of at most 8 bytes are encoded as one integer each (about twice as fast).
        if w <= 8:
            index, rows = ids or _distinct_ids(cols)
            values = [r.tobytes() for r in rows] if len(rows) <= n // 4 else []
        else:
            flat = np.ascontiguousarray(cols)
            enc = pa.FixedSizeBinaryArray.from_buffers(pa.binary(w), n, [None, pa.py_buffer(flat)]).dictionary_encode()
            index, values = enc.indices.to_numpy(zero_copy_only=False), enc.dictionary.to_pylist()
        if 0 < len(values) <= n // 4:
            uniq = np.empty(len(values), dtype=object)
            uniq[:] = values
            return uniq[index].tolist()  # type: ignore[no-any-return]
    return list(struct.unpack(f"{w}s" * n, np.ascontiguousarray(cols).tobytes()))
