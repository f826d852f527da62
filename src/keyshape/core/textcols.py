"""Text columns built with numpy, without a Python ``str`` per value.

A synthetic workload of 10M rows spent most of its time in ``fmt.format(x)`` per value. Here a
column of integers becomes a numpy ``str`` array (``dtype 'U'``) in a few array passes: the digits
are a matrix of code points, the literal text around them constant columns. ``.tolist()`` of the
result gives the same ``str`` values ``fmt.format`` would (pinned by tests/unit/test_textcols.py).
"""

from __future__ import annotations

import re
import string

import numpy as np

__all__ = ["format_ints", "digit_matrix", "uuid_strings", "uuid_bytes_matrix"]

_SPEC = re.compile(r"^(0?)(\d*)([dxX]?)$")
_DIGITS = {
    "d": np.frombuffer(b"0123456789", dtype=np.uint8),
    "x": np.frombuffer(b"0123456789abcdef", dtype=np.uint8),
    "X": np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8),
}


# "0000".."9999" as the uint32 whose little-endian bytes are those four ASCII digits.
_QUADS = np.frombuffer("".join(f"{i:04d}" for i in range(10000)).encode(), dtype="<u4")


def _plan(fmt: str) -> tuple[str, str, bool, int, str] | None:
    """(literal before, literal after, zero fill, width, d/x/X) of a one-field integer format."""
    try:
        parsed = list(string.Formatter().parse(fmt))
    except ValueError:
        return None
    fields = [p for p in parsed if p[1] is not None]
    if len(fields) != 1 or fields[0][1] not in ("", "0") or fields[0][3]:
        return None
    spec = _SPEC.match(fields[0][2] or "")
    if spec is None or (spec.group(2) == "" and spec.group(1)):
        return None
    idx = parsed.index(fields[0])
    before = "".join(p[0] for p in parsed[: idx + 1])
    after = "".join(p[0] for p in parsed[idx + 1 :])
    if "{" in before + after or "}" in before + after:  # escaped braces: leave to str.format
        return None
    return before, after, spec.group(1) == "0", int(spec.group(2) or 0), spec.group(3) or "d"


def format_ints(fmt: str, values: np.ndarray) -> np.ndarray | None:
    """``np.array([fmt.format(v) for v in values])`` for a format with one integer field such as
    ``"user{:07d}"``, ``"{:016x}"`` or ``"{}"``, computed column-wise; None when the format or a
    value (negative, space padding) needs ``str.format`` itself."""
    plan = _plan(fmt)
    v = np.asarray(values)
    if plan is None or v.ndim != 1 or v.dtype.kind not in "iu":
        return None
    before, after, zero, width, kind = plan
    n = len(v)
    if n and int(v.min()) < 0:
        return None
    if width and not zero:
        return None  # space padding: rare, left to str.format
    u = v.astype(np.uint64)
    base = 16 if kind in "xX" else 10
    top = int(u.max()) if n else 0
    ndig = 1
    while base**ndig <= top:
        ndig += 1
    d = max(ndig, width)
    digits = _digit_matrix(u, ndig, base, _DIGITS[kind])  # right-aligned
    if d > ndig:  # zero fill wider than the largest value
        digits = np.concatenate([np.full((n, d - ndig), ord("0"), dtype=np.uint8), digits], axis=1)
    lit_b = np.array([ord(c) for c in before], dtype=np.uint32)
    lit_a = np.array([ord(c) for c in after], dtype=np.uint32)
    total = len(lit_b) + d + len(lit_a)
    out = np.zeros((n, total), dtype=np.uint32)
    out[:, : len(lit_b)] = lit_b
    lens = None
    if width < ndig:
        thresholds = np.array([base**k for k in range(1, d)], dtype=np.uint64)
        lens = np.maximum(np.searchsorted(thresholds, u, side="right") + 1, width)
    if lens is None or int(lens.min(initial=d)) == d:  # every value is exactly d digits: static columns
        out[:, len(lit_b) : len(lit_b) + d] = digits
        out[:, len(lit_b) + d :] = lit_a
    else:  # shortest form: value i keeps its last lens[i] digits, then the literal after
        cols = np.arange(d + len(lit_a))
        src = cols[None, :] + (d - lens)[:, None]  # index into digits ++ lit_a
        ext = np.concatenate([digits.astype(np.uint32), np.broadcast_to(lit_a, (n, len(lit_a)))], axis=1)
        body = np.take_along_axis(ext, np.minimum(src, d + len(lit_a) - 1), axis=1)
        body[cols[None, :] >= (lens + len(lit_a))[:, None]] = 0
        out[:, len(lit_b) :] = body
    if total == 0:
        return np.array([""] * n)
    return out.view(f"<U{total}").reshape(n)


def _digit_matrix(u: np.ndarray, ndig: int, base: int, table: np.ndarray) -> np.ndarray:
    """The last ``ndig`` base-``base`` digits of every value as an ``(n, ndig)`` uint8 matrix.

    Integer division is the slow part. Decimal digits come four at a time: one division by
    10000 and a table of the 10000 four-digit groups as little-endian uint32 words, written
    straight into the output's memory; values below 2**32 are divided as uint32, which numpy
    does far faster than uint64."""
    n = len(u)
    if base == 10:
        groups = (ndig + 3) // 4
        words = np.empty((n, groups), dtype="<u4")
        rest = u.astype(np.uint64)
        for g in range(groups - 1, -1, -1):
            if rest.dtype == np.uint64 and (not n or int(rest.max()) < 2**32):
                rest = rest.astype(np.uint32)
            ten4 = rest.dtype.type(10000)
            q = rest // ten4
            words[:, g] = _QUADS[rest - q * ten4]
            rest = q
        return words.view(np.uint8).reshape(n, groups * 4)[:, groups * 4 - ndig :]
    out = np.empty((n, ndig), dtype=np.uint8)
    rest = u.astype(np.uint32) if n and int(u.max()) < 2**32 else u.astype(np.uint64)
    b = rest.dtype.type(base)
    for col in range(ndig - 1, -1, -1):
        q = rest // b
        out[:, col] = table[rest - q * b]
        rest = q
    return out


def digit_matrix(values: np.ndarray, width: int) -> np.ndarray:
    """``b"%0*d" % (width, v)`` of every value in 0..10**width-1 (uint64), as an ``(n, width)``
    uint8 matrix."""
    return _digit_matrix(values, width, 10, _DIGITS["d"])


def uuid_bytes_matrix(raw: bytes) -> np.ndarray:
    """Random bytes (16 per value) as UUID4 bytes, ``(n, 16)`` uint8: version 4 and the RFC 4122
    variant set as ``uuid.UUID(bytes=b, version=4)`` sets them."""
    m = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 16).copy()
    m[:, 6] = (m[:, 6] & 0x0F) | 0x40
    m[:, 8] = (m[:, 8] & 0x3F) | 0x80
    return m


def uuid_strings(matrix: np.ndarray) -> np.ndarray:
    """``str(uuid.UUID(bytes=row))`` of every row of an ``(n, 16)`` uint8 matrix, as ``<U36``."""
    n = len(matrix)
    hexd = np.empty((n, 32), dtype=np.uint8)
    hexd[:, 0::2] = _DIGITS["x"][matrix >> 4]
    hexd[:, 1::2] = _DIGITS["x"][matrix & 0xF]
    out = np.full((n, 36), ord("-"), dtype=np.uint32)
    for dst, lo, hi in ((0, 0, 8), (9, 8, 12), (14, 12, 16), (19, 16, 20), (24, 20, 32)):
        out[:, dst : dst + hi - lo] = hexd[:, lo:hi]
    return out.view("<U36").reshape(n)
