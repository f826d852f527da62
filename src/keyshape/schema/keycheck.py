"""Real keys checked against a schema: which keys read as the schema's keys, which do not, and
which carry a salt their own fields do not give.

A key set analysed against the wrong schema, or written by a writer with a salting bug, is
judged on regions it does not belong to: the verdict would be silently wrong. So every key is
checked, as a vector per batch (:func:`fit_codes`), and a :class:`KeyCheck` keeps the counts and a
few examples of each kind for the report.

Codes, one per key:

- ``FITS`` (0): the key decodes as the schema's key (``decode(key, verify=True)`` succeeds);
- ``FOREIGN`` (1): it does not read as the layout (length, separators, digits, text), or its
  fields do not encode back to its bytes;
- ``WRONG_SALT`` (2): its fields read, but its prefix is not the one they give (Phoenix's salt
  byte, ``mod`` buckets, md5 / crc32 hex of the hashed fields): a writer salts differently.

Routes, fastest first: the C reader of the layout (:meth:`keyshape.core.native.Reader.fits`, the
GIL released, keys it cannot judge exactly — non-ASCII text, numbers past int64 — go to the
decoder one by one); for layouts the reader does not read, ``decode_many`` of the whole batch,
then key by key only when it fails. What cannot be decoded is checked as far as it can be:
``md5-full`` keys must be 32 lowercase hex digits; an encode-only schema's keys must be long
enough for the fixed-width fields and carry a prefix of the strategy's form (a bucket number below
the bucket count, hex digits), and a prefix computed from K (Phoenix's salt) is re-derived.
A ``random`` prefix cannot be re-derived: its bucket must be one the strategy writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from keyshape.core.hbytes import to_string_binary
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError

if TYPE_CHECKING:
    from keyshape.schema.keyschema import KeySchema

__all__ = ["FITS", "FOREIGN", "WRONG_SALT", "KeyCheck", "fit_codes", "check_route"]

FITS, FOREIGN, WRONG_SALT, _DOUBT = 0, 1, 2, 3
EXAMPLES = 3  # examples kept per kind: enough to recognise a format, short enough for one line
# Above this share of keys that do not fit, an analysis refuses (KeysDoNotFit): a few odd rows
# (markers, a test row typed in the shell) leave the picture as it is; more mean the key set and
# the schema describe different tables. A wrong salt is never tolerated: the writer's buckets are
# not the readers', its rows are found by no get, and the salt is the design being judged.
MAX_FOREIGN_SHARE = 0.01
MAX_WRONG_SALTS = 0


def check_route(schema: KeySchema) -> str:
    """How :func:`fit_codes` checks this schema's keys, in words (reports say it)."""
    p = schema.prefix
    if not p.recoverable:
        return f"{p.name} keys: {p.width} lowercase hex digits (the fields are not in the key)"
    if schema.encode_only is not None:
        what = "length and prefix form"
        if p.width and p.material == "K":
            what += f", {p.name} salt re-derived"
        return f"encode-only schema: {what} checked (the fields cannot be read back)"
    salt = f", {p.name} salt re-derived from the fields" if p.width and p.material else ""
    if not p.deterministic:
        salt = ", random bucket within range"
    return "every key decoded" + salt


def fit_codes(schema: KeySchema, keys: KeyArray, threads: int = 1) -> np.ndarray:
    """One code per key of ``keys`` (``FITS``, ``FOREIGN`` or ``WRONG_SALT``, uint8), as the module
    says; ``threads`` for the C reader's rows (1 when the caller runs batches on threads itself)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.uint8)
    p = schema.prefix
    if not p.recoverable:
        return _hex_only(keys, p.width)
    if schema.encode_only is not None:
        return _encode_only(schema, keys)
    codes = _native_codes(schema, keys, threads)
    if codes is None:
        codes = _batch_codes(schema, keys)
    elif codes.any():  # (one pass when all fit, the common case: nothing to look up)
        doubt = np.flatnonzero(codes == _DOUBT)
        if doubt.size:
            rows = keys.matrix[doubt]
            lens = keys.lengths[doubt]
            codes[doubt] = [_classify(schema, bytes(r[:k])) for r, k in zip(rows, lens.tolist())]
    if not p.deterministic and p.width:
        codes[(codes == FITS) & ~_prefix_form(schema, keys)] = WRONG_SALT
    return codes


def _native_codes(schema: KeySchema, keys: KeyArray, threads: int) -> np.ndarray | None:
    # A layout the C reader cannot read (Phoenix's columns, ordered encodings ...) has none: None.
    from keyshape.schema.compiled_decode import native_readers

    reader = native_readers(schema.layout)[True]
    if reader is None:
        return None
    m = keys.matrix if keys.matrix.flags.c_contiguous else np.ascontiguousarray(keys.matrix)
    got = reader.fits(m, np.ascontiguousarray(keys.lengths, dtype=np.int64), threads)
    return np.frombuffer(got, dtype=np.uint8).copy()


def _batch_codes(schema: KeySchema, keys: KeyArray) -> np.ndarray:
    """The whole batch through ``decode_many`` (all fit: one vector pass), key by key only when
    some key does not decode."""
    try:
        schema.decode_many(keys, verify=True)
        return np.zeros(len(keys), dtype=np.uint8)
    except (KeyshapeError, ValueError, OverflowError):
        return np.fromiter((_classify(schema, k) for k in keys.tolist()), dtype=np.uint8, count=len(keys))


def _classify(schema: KeySchema, key: bytes) -> int:
    """One key's code by the decoder itself (the reference the vector routes equal)."""
    try:
        schema.decode(key, verify=True)
        return FITS
    except (KeyshapeError, ValueError, OverflowError):
        pass
    try:
        values = schema.decode(key, verify=False)
        again = schema.encode(values)
    except (KeyshapeError, ValueError, OverflowError, TypeError):
        return FOREIGN
    head = schema.prefix.head_width
    if again[head:] != key[head:]:
        return FOREIGN  # the fields read, but write other bytes: not this schema's key
    return WRONG_SALT if again[:head] != key[:head] else FITS


def _hex_only(keys: KeyArray, width: int) -> np.ndarray:
    """md5-full: a key is ``width`` lowercase hex digits, nothing else can be checked."""
    m = keys.matrix[:, :width]
    ok = keys.lengths == width
    if m.shape[1] == width:
        ok &= (((m >= 48) & (m <= 57)) | ((m >= 97) & (m <= 102))).all(axis=1)
    else:
        ok[:] = False
    return np.where(ok, FITS, FOREIGN).astype(np.uint8)


def _prefix_form(schema: KeySchema, keys: KeyArray) -> np.ndarray:
    """Per key, True when its first ``prefix.width`` bytes are a prefix the strategy can write
    (a bucket number below the bucket count, hex digits, a salt byte below the buckets)."""
    p = schema.prefix
    w = p.width
    n = len(keys)
    if not w:
        return np.ones(n, dtype=bool)
    if keys.width < w:
        return np.zeros(n, dtype=bool)
    m = keys.matrix[:, :w]
    long_enough = keys.lengths >= w
    return long_enough & p.prefix_form(m)  # the strategy knows its prefix's form


def _encode_only(schema: KeySchema, keys: KeyArray) -> np.ndarray:
    """What can be checked of keys whose fields cannot be read back: the length the fixed-width
    fields and separators need, the separator after the prefix, the prefix's form, and a salt
    computed from K (Phoenix's) re-derived."""
    p, sep = schema.prefix, schema.separator
    head = p.head_width
    shortest = head + sum(f.fixed_width or 0 for f in schema.fields) + len(sep) * (len(schema.fields) - 1)
    ok = keys.lengths >= shortest
    if p.sep_after and sep and p.width and keys.width >= head:
        ok &= (keys.matrix[:, p.width : head] == np.frombuffer(sep, dtype=np.uint8)).all(axis=1)
    codes = np.where(ok, FITS, FOREIGN).astype(np.uint8)
    codes[(codes == FITS) & ~_prefix_form(schema, keys)] = WRONG_SALT
    if p.width and p.material == "K" and (codes == FITS).any():
        rows = np.flatnonzero(codes == FITS)
        sub = KeyArray(keys.matrix[rows], keys.lengths[rows])
        k = KeyArray(np.ascontiguousarray(sub.matrix[:, head:]), sub.lengths - head)
        expected = p.prefix_many(k).matrix
        codes[rows[(expected != sub.matrix[:, : p.width]).any(axis=1)]] = WRONG_SALT
    return codes


@dataclass
class KeyCheck:
    """Counts of keys that fit, do not fit, or carry a wrong salt, with the first few examples of
    the last two (``(position in the stream, toStringBinary)``), over everything :meth:`add`-ed.

    Partial checks of disjoint pieces of one stream :meth:`merge` into what one pass gives (the
    examples are the earliest by position)."""

    schema: Any = field(default=None, repr=False, compare=False)  # the KeySchema checked against
    route: str = ""
    checked: int = 0
    foreign: int = 0
    wrong_salt: int = 0
    foreign_examples: list[tuple[int, str]] = field(default_factory=list)
    wrong_salt_examples: list[tuple[int, str]] = field(default_factory=list)

    def add(self, keys: KeyArray, codes: np.ndarray, start: int | np.ndarray = 0) -> None:
        """Count ``codes`` (from :func:`fit_codes`) of ``keys``; ``start`` is the first key's
        position in the whole stream, or one position per key."""
        self.checked += len(codes)
        if not codes.any():
            return  # all fit: no kind to count (one pass instead of one per kind)
        for code, count_attr, examples in ((FOREIGN, "foreign", self.foreign_examples), (WRONG_SALT, "wrong_salt", self.wrong_salt_examples)):
            rows = np.flatnonzero(codes == code)
            if not rows.size:
                continue
            setattr(self, count_attr, getattr(self, count_attr) + int(rows.size))
            for r in rows[:EXAMPLES].tolist():
                pos = int(start[r]) if isinstance(start, np.ndarray) else start + r
                key = keys.matrix[r, : int(keys.lengths[r])].tobytes()
                examples.append((pos, to_string_binary(key)))
            examples.sort()
            del examples[EXAMPLES:]

    @classmethod
    def of(cls, schema: KeySchema) -> KeyCheck:
        """An empty check of keys against ``schema``."""
        return cls(schema=schema, route=check_route(schema))

    def empty_like(self) -> KeyCheck:
        """A new empty check against the same schema (what each worker fills before a merge)."""
        return KeyCheck(schema=self.schema, route=self.route)

    def merge(self, other: KeyCheck) -> None:
        """Add what another check of another piece of the same stream counted."""
        self.checked += other.checked
        self.foreign += other.foreign
        self.wrong_salt += other.wrong_salt
        for mine, theirs in ((self.foreign_examples, other.foreign_examples), (self.wrong_salt_examples, other.wrong_salt_examples)):
            mine.extend(theirs)
            mine.sort()
            del mine[EXAMPLES:]

    def check(self, keys: KeyArray, start: int | np.ndarray = 0, threads: int = 1) -> None:
        """:func:`fit_codes` of ``keys`` against the check's schema, counted (see :meth:`add`)."""
        self.add(keys, fit_codes(self.schema, keys, threads), start)

    @property
    def fitting(self) -> int:
        return self.checked - self.foreign - self.wrong_salt

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (examples as ``{"row": position, "key": toStringBinary}``)."""
        return {
            "route": self.route,
            "checked": self.checked,
            "fit": self.fitting,
            "foreign": self.foreign,
            "wrong_salt": self.wrong_salt,
            "foreign_examples": [{"row": r, "key": k} for r, k in self.foreign_examples],
            "wrong_salt_examples": [{"row": r, "key": k} for r, k in self.wrong_salt_examples],
        }

    @property
    def refused(self) -> bool:
        """True when the counts are past what an analysis goes on with (see MAX_FOREIGN_SHARE)."""
        return self.wrong_salt > MAX_WRONG_SALTS or self.foreign > MAX_FOREIGN_SHARE * self.checked

    def refusal(self) -> str:
        """The one-line refusal: the counts, examples, and the ways on."""
        return (
            self.summary().replace("keys checked against the schema", "the keys do not match the schema", 1)
            + f"; refusing to judge them (limits: any wrong salt, or more than "
            f"{100 * MAX_FOREIGN_SHARE:g}% not fitting): check --column and the schema's prefix, "
            "separator and hash_fields, or pass --allow-foreign-keys to analyze them anyway"
        )

    def summary(self) -> str:
        """One line: "keys checked against the schema: ..." with the counts and examples."""
        n = self.checked
        text = f"keys checked against the schema ({self.route}): "
        if not self.foreign and not self.wrong_salt:
            return text + f"all {n:,} fit"
        parts = []
        if self.foreign:
            parts.append(f"{self.foreign:,} of {n:,} ({_pct(self.foreign, n)}) do not fit (e.g. {_examples(self.foreign_examples)})")
        if self.wrong_salt:
            parts.append(f"{self.wrong_salt:,} of {n:,} ({_pct(self.wrong_salt, n)}) carry a wrong salt (e.g. {_examples(self.wrong_salt_examples)})")
        return text + "; ".join(parts)


def _pct(part: int, whole: int) -> str:
    share = 100 * part / whole if whole else 0.0
    return f"{share:.2g}%" if share < 1 else f"{share:.1f}%"


def _examples(examples: list[tuple[int, str]]) -> str:
    return ", ".join(f"{key!r} at row {row:,}" for row, key in examples)
