"""Split-key calculators: RegionSplitter's algorithms, ``createTable(start, end, n)``, salt-bucket
boundaries and sample quantiles, plus the formats HBase accepts them in.

Every calculator returns the split keys of a table, i.e. the region boundaries: sorted, unique,
never the empty key. ``n`` regions have ``n - 1`` split keys (``range_split`` aside, which
follows ``Admin.createTable`` exactly).
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Sequence

from keyshape.core.hbytes import compare, int64, split, to_string_binary
from keyshape.errors import BadInput, KeyshapeError

__all__ = [
    "hex_string_split",
    "decimal_string_split",
    "uniform_split",
    "range_split",
    "bucket_splits",
    "sample_splits",
    "format_splits",
    "verify_split_keys",
    "check_split_keys",
    "SPLIT_FORMATS",
]

SPLIT_FORMATS = ("shell", "file", "json")


def _check_regions(regions: int, minimum: int = 2) -> None:
    if isinstance(regions, bool) or not isinstance(regions, int) or regions < minimum:
        raise KeyshapeError(f"regions must be an int >= {minimum}, got {regions!r}")


def _number_string_split(regions: int, first: str, last: str, radix: int, name: str) -> list[bytes]:
    # RegionSplitter.NumberStringSplit.split(n): BigInteger arithmetic over the inclusive range
    # [first, last]; the last region absorbs the remainder ("slop").
    _check_regions(regions)
    digits = string.hexdigits if radix == 16 else string.digits
    for label, text in (("first", first), ("last", last)):
        if not text or any(c not in digits for c in text):
            raise KeyshapeError(f"{name}: {label} row {text!r} is not a base-{radix} number (use digits {'0-9a-f' if radix == 16 else '0-9'} only)")
    lo, hi = int(first, radix), int(last, radix)
    if hi <= lo:
        raise KeyshapeError(f"{name}: last row ({last}) is configured less than first row ({first})")
    span = hi - lo + 1  # +1 because the last row is inclusive
    if span < regions:
        raise KeyshapeError(f"{name}: split granularity ({regions}) is greater than the range ({span}); use fewer regions or longer first/last rows")
    size = span // regions
    pad = len(last)  # rowComparisonLength: every key is zero-padded to len(last)
    fmt = "x" if radix == 16 else "d"
    return [format(lo + size * i, fmt).rjust(pad, "0").encode("ascii") for i in range(1, regions)]


def hex_string_split(regions: int, first: str = "00000000", last: str = "FFFFFFFF") -> list[bytes]:
    """RegionSplitter ``HexStringSplit``: ``regions - 1`` lower-case hex keys over ``[first, last]``.

    regions: the table's region count, >= 2.
    first: the first row, hex digits in either case (inclusive; default ``"00000000"``).
    last: the last row, hex digits in either case (inclusive; default ``"FFFFFFFF"``).

    Key ``i`` is ``first + i * ((last - first + 1) // regions)`` written in lower-case hex,
    left-padded with '0' to ``len(last)`` characters, as ASCII bytes. Raises BadInput (a
    ValueError) if ``regions < 2``, ``last <= first`` or the range holds fewer than ``regions``
    values (RegionSplitter's preconditions).

    >>> hex_string_split(4)
    [b'40000000', b'80000000', b'c0000000']
    """
    return _number_string_split(regions, first, last, 16, "HexStringSplit")


def decimal_string_split(regions: int, first: str = "00000000", last: str = "99999999") -> list[bytes]:
    """RegionSplitter ``DecimalStringSplit``: like :func:`hex_string_split` in base 10.

    regions: the table's region count, >= 2.
    first: the first row, decimal digits (inclusive; default ``"00000000"``).
    last: the last row, decimal digits (inclusive; default ``"99999999"``).

    >>> decimal_string_split(3)
    [b'33333333', b'66666666']
    """
    return _number_string_split(regions, first, last, 10, "DecimalStringSplit")


def uniform_split(regions: int, first: bytes = b"", last: bytes = b"\xff" * 8) -> list[bytes]:
    r"""RegionSplitter ``UniformSplit``: ``regions - 1`` keys evenly spaced in raw byte space.

    regions: the table's region count, >= 2.
    first: the first row (inclusive; default ``b""``).
    last: the last row (inclusive; default eight 0xFF bytes); must sort after ``first``.

    ``Bytes.split(first, last, inclusive=True, regions - 1)`` without its two end points: keys
    are as long as the longer of ``first``/``last`` (tail-padded with 0x00), or longer when the
    range is too narrow (see :func:`keyshape.core.hbytes.split`). Raises BadInput (a ValueError)
    if ``regions < 2`` or ``last <= first``.

    >>> uniform_split(2)
    [b'\x80\x00\x00\x00\x00\x00\x00\x00']
    >>> uniform_split(4, b"a", b"e")
    [b'b', b'c', b'd']
    """
    _check_regions(regions)
    if compare(last, first) <= 0:
        raise KeyshapeError(f"UniformSplit: last row ({to_string_binary(last)}) is configured less than first row ({to_string_binary(first)})")
    return split(first, last, regions - 1, inclusive=True)[1:-1]


def range_split(start: bytes, end: bytes, regions: int) -> list[bytes]:
    """The split keys ``Admin.createTable(desc, start, end, regions)`` computes
    (``RawAsyncHBaseAdmin.getSplitKeys``).

    start: the first split key (the end of the open-ended first region).
    end: the last split key (the start of the open-ended last region); must sort after ``start``.
    regions: the table's region count, the two open-ended ones included: >= 3.

    The result has ``regions - 1`` keys and begins with ``start`` and ends with ``end``:
    ``[start, end]`` for 3 regions, else ``Bytes.split(start, end, regions - 3)`` (whose inner
    keys have the padded length; see :func:`keyshape.core.hbytes.split`). Raises BadInput (a
    ValueError) for ``regions < 3`` ("Must create at least three regions") or ``start >= end``
    ("Start key must be smaller than end key").

    An empty ``start`` is read as zero bytes, as HBase does, so the first key is usually ``b""``;
    HBase then refuses to create the table ("Empty split key must not be passed in the split
    keys."), which :func:`verify_split_keys` reports before anything is created.

    >>> range_split(b"a", b"d", 5)
    [b'a', b'b', b'c', b'd']
    """
    _check_regions(regions, 3)
    start, end = bytes(start), bytes(end)
    if compare(start, end) >= 0:
        raise KeyshapeError(f"start key '{to_string_binary(start)}' must be smaller than end key '{to_string_binary(end)}'")
    if regions == 3:
        return [start, end]
    return split(start, end, regions - 3)


def verify_split_keys(keys: Iterable[bytes]) -> list[bytes]:
    """The split keys ``keys`` sorted, after the checks ``Admin.createTable`` makes before it sends
    them (``RawAsyncHBaseAdmin.verifySplitKeys``): no empty key, no key twice.

    Raises :class:`~keyshape.errors.KeyshapeError` quoting HBase's refusal, plus the fix.
    """
    out = sorted(bytes(k) for k in keys)
    if out and not out[0]:
        raise KeyshapeError(
            'HBase refuses an empty split key ("Empty split key must not be passed in the split '
            'keys."); an empty start key of createTable(start, end, regions) puts one there: '
            "start at b'\\x00' or remove it"
        )
    for a, b in zip(out, out[1:]):
        if a == b:
            raise KeyshapeError(
                f"split key '{to_string_binary(a)}' is listed twice; HBase refuses duplicate split "
                'keys ("All split keys must be unique"): remove the repeat'
            )
    return out


def check_split_keys(keys: Iterable[bytes], what: str = "split keys") -> list[bytes]:
    """``keys`` as a list when they can go to ``Admin.createTable`` exactly as given: none empty,
    none repeated (HBase's ``verifySplitKeys``, quoted), in ascending byte order (HBase would sort
    them; a hand-written list out of order is most often a typo, so it is refused). A key is never
    dropped in silence: BadInput names the first offending key (toStringBinary) and its position.

    - ``what``: how the message names the list (e.g. ``"schema.toml: splits.keys"``).
    """
    out = [bytes(k) for k in keys]
    for i, key in enumerate(out):
        if not key:
            raise BadInput(
                f'{what}: key {i} is empty; HBase refuses it ("Empty split key must not be passed in the split keys."): '
                "the first region already starts at '', remove it"
            )
        if i and key == out[i - 1]:
            raise BadInput(
                f"{what}: key {i} '{to_string_binary(key)}' repeats key {i - 1}; HBase refuses it (\"All split keys must be unique\"): remove one"
            )
        if i and compare(key, out[i - 1]) < 0:
            raise BadInput(
                f"{what}: key {i} '{to_string_binary(key)}' sorts before key {i - 1} '{to_string_binary(out[i - 1])}'; "
                "give the split keys in ascending byte order"
            )
    return out


def bucket_splits(buckets: int, encoding: str = "byte", width: int | None = None) -> list[bytes]:
    r"""Boundaries between salt / partition buckets ``0..buckets-1``: the keys of buckets 1..n-1.

    buckets: how many buckets, >= 2.
    encoding: how a bucket id leads the key (default ``"byte"``):

        - ``"byte"``: bucket ``i`` as ``width`` big-endian bytes (default 1), i.e. Phoenix's
          ``SaltingUtil.getSalteByteSplitPoints`` for width 1, and OpenTSDB's multi-byte salts
          for larger widths.
        - ``"decimal"``: zero-padded ASCII decimal, ``width`` digits (default: the digits of
          ``buckets - 1``): with the default width, GBIF's ``ModulusSalt(buckets).getTableRegions()``.
        - ``"long"``: 8-byte ``Bytes.toBytes(long)`` partition ids ``1..n-1``.
    width: bytes (``byte``) or digits (``decimal``) per bucket id; None: the default above.

    Raises BadInput (a ValueError) for ``buckets < 2``, an unknown encoding, or a width too small
    for ``buckets - 1``.

    >>> bucket_splits(4)
    [b'\x01', b'\x02', b'\x03']
    >>> bucket_splits(16, "decimal")[:3]
    [b'01', b'02', b'03']
    >>> bucket_splits(3, "long")
    [b'\x00\x00\x00\x00\x00\x00\x00\x01', b'\x00\x00\x00\x00\x00\x00\x00\x02']
    """
    if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 2:
        raise KeyshapeError(f"buckets must be an int >= 2, got {buckets!r}")
    if encoding == "byte":
        w = 1 if width is None else width
        if w < 1 or buckets > 256**w:
            raise KeyshapeError(f"{buckets} buckets do not fit {w} byte(s); use a larger width")
        return [i.to_bytes(w, "big") for i in range(1, buckets)]
    if encoding == "decimal":
        w = len(str(buckets - 1)) if width is None else width
        if w < len(str(buckets - 1)):
            raise KeyshapeError(f"{buckets} buckets need at least {len(str(buckets - 1))} decimal digits, got width {w}")
        return [str(i).zfill(w).encode("ascii") for i in range(1, buckets)]
    if encoding == "long":
        if width not in (None, 8):
            raise KeyshapeError(f"encoding 'long' is always 8 bytes wide, got width {width}")
        return [int64(i) for i in range(1, buckets)]
    raise KeyshapeError(f"unknown bucket encoding {encoding!r}: use 'byte', 'decimal' or 'long'")


def sample_splits(keys: Iterable[bytes], regions: int) -> list[bytes]:
    """Equal-count quantiles of a sample of row keys, as split keys for ``regions`` regions.

    keys: the sample of row keys, in any order.
    regions: the region count asked for, >= 2.

    Sorts the sample (duplicates kept, so hot keys weigh more) and takes the key at position
    ``i * len(sample) // regions`` for ``i = 1 .. regions-1``. Repeated quantiles and the empty
    key are dropped, so a skewed or small sample yields fewer than ``regions - 1`` keys.
    Raises BadInput (a ValueError) for ``regions < 2`` or an empty sample.

    >>> sample_splits([b"a", b"b", b"b", b"b", b"c", b"d"], 3)
    [b'b', b'c']
    """
    _check_regions(regions)
    ordered = sorted(bytes(k) for k in keys)
    if not ordered:
        raise KeyshapeError("sample_splits needs at least one key in the sample")
    n = len(ordered)
    out: list[bytes] = []
    for i in range(1, regions):
        key = ordered[i * n // regions]
        if key and (not out or key != out[-1]):
            out.append(key)
    return out


def shell_quote(key: bytes) -> str:
    # The shell passes every SPLITS string through Bytes.toBytesBinary, so the toStringBinary
    # text must reach it verbatim: a single-quoted Ruby string keeps "\xNN" as four literal
    # characters, whereas a double-quoted one would turn "\xFF" into a raw byte that JRuby then
    # mangles while converting to a Java String. "'" is the one character to escape.
    return "'" + to_string_binary(key).replace("'", "\\x27") + "'"


def _file_line(key: bytes) -> str:
    # Older shells read SPLITS_FILE lines with strip(), which would eat edge spaces of a key.
    text = to_string_binary(key)
    stripped = text.strip(" ")
    lead = len(text) - len(text.lstrip(" "))
    trail = len(text) - len(text.rstrip(" ")) if stripped else 0
    return "\\x20" * lead + stripped + "\\x20" * trail


def format_splits(keys: Sequence[bytes], fmt: str, table: str = "t", family: str = "f") -> str:
    """Render the split keys ``keys`` for HBase in the format ``fmt``, ending in a newline
    (``table`` and ``family`` name the table the shell line creates and the JSON names).

    - ``"shell"``: ``create 't', 'f', SPLITS => ['\\x01', ...]`` for the HBase shell (keys in
      ``toStringBinary`` form, which the shell decodes with ``Bytes.toBytesBinary``).
    - ``"file"``: a ``SPLITS_FILE``: one ``toStringBinary`` key per line.
    - ``"json"``: ``{"table", "family", "splits": [toStringBinary...], "splits_hex": [...]}``.

    Raises ``ValueError`` for an unknown format, an empty key or a repeated key (HBase refuses
    those: :func:`verify_split_keys`). Keys are written in the order given.
    """
    keys = [bytes(k) for k in keys]
    verify_split_keys(keys)
    if fmt == "shell":
        ruby_keys = ", ".join(shell_quote(k) for k in keys)
        q = lambda s: "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"  # noqa: E731
        return f"create {q(table)}, {q(family)}, SPLITS => [{ruby_keys}]\n"
    if fmt == "file":
        return "".join(_file_line(k) + "\n" for k in keys)
    if fmt == "json":
        doc = {
            "table": table,
            "family": family,
            "splits": [to_string_binary(k) for k in keys],
            "splits_hex": [k.hex() for k in keys],
        }
        return json.dumps(doc, indent=2) + "\n"
    raise KeyshapeError(f"unknown split format {fmt!r}: use one of {', '.join(SPLIT_FORMATS)}")
