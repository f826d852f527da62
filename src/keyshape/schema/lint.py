"""Design checks for a KeySchema: the usual HBase row-key rules of thumb (the HBase book's schema design chapter) as findings with advice.

Codes (level): ``key-too-long`` (error, > 100 bytes), ``key-long`` (info, mean > 20 bytes: keep keys short,
every cell repeats the key), ``monotonic-leading`` (warning: a time or sequential field
leads an unprefixed key, so every write goes to the last region), ``no-presplit`` (warning),
``splits-not-matched``, ``regions-exceed-buckets``, ``regions-unaligned`` (warnings),
``buckets-per-region`` (info), ``separator-ambiguous`` (warning) / ``separator-in-values`` (error),
``random-prefix`` (warning), ``hbase-negative`` (warning) / ``hbase-signed`` (info),
``desc-variable-width`` (warning), ``md5-full`` (info), ``workload-invalid`` (error),
``encode-only`` (warning: variable-width fields run together with no separator, so keys encode
byte-exactly but cannot be decoded or scanned by a leading value), ``pad-collision`` (error: the
workload gives a fixed-width field a value that starts (left pad) or ends (right pad) with its pad
character beside the value without it: the two share one key, so encode_many refuses the run) /
``pad-ambiguous`` (info: the pad character is one values plausibly start or end with, such as
``'0'`` or ``' '``), ``truncate-shares-keys`` (info: a ``keep-last`` field gives every value that
ends in the same ``width`` bytes one key, by declaration).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from keyshape.errors import KeyshapeError
from keyshape.schema.fields import FieldSpec
from keyshape.schema.layout import KeyLayout
from keyshape.schema.prefixes import MAX_LISTED_BUCKETS
from keyshape.schema.specs import SplitSpec
from keyshape.schema.splitting import SPLIT_ALGORITHMS, PrefixSplit


__all__ = ["Finding", "lint", "LEVELS"]

LEVELS = ("error", "warning", "info")
_SAMPLE_ROWS = 2000
_MONOTONIC = ("sequential", "sequential-time", "jittered-time", "derived")


@dataclass(frozen=True)
class Finding:
    """One lint result: ``level`` is "error", "warning" or "info"; ``code`` is stable."""

    level: str
    code: str
    message: str
    advice: str = ""

    def __str__(self) -> str:
        return f"{self.level}: [{self.code}] {self.message}" + (f" -> {self.advice}" if self.advice else "")


@dataclass(frozen=True)
class _Design:
    """What the checks read: the key's layout and what the schema says about its table."""

    layout: KeyLayout
    splits: SplitSpec | None
    workload: Any  # the [workload] section (keyshape.workload.WorkloadSpec) or None
    index_fields: tuple[FieldSpec, ...]


def lint(
    layout: KeyLayout,
    *,
    splits: SplitSpec | None = None,
    workload: Any = None,
    index_fields: Sequence[FieldSpec] = (),
    sample: Callable[[int], dict[str, Any]] | None = None,
) -> list[Finding]:
    """Every finding for a key design, errors first, then warnings, then info.

    - ``layout``: the key's layout (fields, separator, prefix, hashed fields).
    - ``splits``: the table's ``[splits]`` (default None: no pre-split).
    - ``workload``: the ``[workload]`` section, whose generators say which fields are monotonic
      and which categorical values clash with a pad (default None: none declared).
    - ``index_fields``: the fields of the ``[[index]]`` tables, checked for padding too (default none).
    - ``sample``: ``sample(n)`` -> ``n`` generated rows as columns (field name -> values), encoded
      to check key lengths, separators and padding; what it raises (KeyshapeError, ValueError)
      is a ``workload-invalid`` finding (default None: those checks are skipped).
    """
    schema = _Design(layout, splits, workload, tuple(index_fields))
    out: list[Finding] = []
    cols = _sample(schema, sample, out)
    _key_length(schema, cols, out)
    _monotonic(schema, out)
    _splits(schema, out)
    _separator(schema, cols, out)
    _fields(schema, cols, out)
    # What the strategy itself says (random: reads fan out; md5-full: fields hidden), in the
    # order the findings were always listed: its warnings here, its infos after the key's own.
    notes = [Finding(*note) for note in schema.layout.prefix.lint_notes()]
    out += [f for f in notes if f.level != "info"]
    if schema.layout.encode_only is not None:
        out.append(
            Finding(
                "warning",
                "encode-only",
                f"keys are encode-only: {schema.layout.encode_only}; decode and scans by a leading "
                'value are refused ("user" + "142" is also "user1" + "42")',
                "fine to reproduce an existing writer's keys; for new tables give the field a width, encoding = 'ordered', or set key.separator",
            )
        )
    out += [f for f in notes if f.level == "info"]
    return sorted(out, key=lambda f: LEVELS.index(f.level))


def _sample(schema: _Design, sample: Callable[[int], dict[str, Any]] | None, out: list[Finding]) -> tuple[dict[str, Any], list[bytes]] | None:
    if sample is None:
        return None
    try:
        cols = sample(_SAMPLE_ROWS)
        # rows padding would refuse are reported as pad-collision, the rest still sampled
        cols = _padding(schema, cols, out)
        if not len(next(iter(cols.values()), ())):
            return None
        return cols, schema.layout.encode_many(cols)
    except (KeyshapeError, ValueError) as exc:
        out.append(Finding("error", "workload-invalid", f"the workload cannot be encoded: {exc}", "fix [workload] or the field widths"))
        return None


# Pad characters values plausibly begin or end with (digits, letters, blanks, id punctuation):
# a '0' pad refuses every zero-padded id given whole, so lint says so even when the sample does not.
_PLAUSIBLE_PAD = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ \t-_.:/+")


def _padded(f: Any) -> bool:
    return f.type in ("string", "bytes") and f.encoding != "ordered" and f.width is not None and f.pad != "none"


def _twins(f: Any, raws: list[bytes]) -> np.ndarray:
    """Per value, True when it is stored whole with the pad byte at its padded end and another
    value of ``raws`` (values' bytes, one run) pads to its key: padding is stripped on decode, so
    ``"0abc"`` and ``"abc"`` share ``0abc`` (True for ``"0abc"``)."""
    pb = f.pad_byte
    strip = bytes.lstrip if f.pad == "left" else bytes.rstrip
    forms: dict[bytes, set[bytes]] = {}
    for r in raws:
        if len(r) <= f.width:
            forms.setdefault(strip(r, pb), set()).add(r)
    return np.fromiter((len(r) <= f.width and strip(r, pb) != r and len(forms[strip(r, pb)]) > 1 for r in raws), dtype=bool, count=len(raws))


def _raw(f: Any, v: Any) -> bytes:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    return str(v).encode("utf-8") if f.type == "string" else f.coerce(v)


def _padding(schema: _Design, cols: dict[str, Any], out: list[Finding]) -> dict[str, Any]:
    """pad-collision / pad-ambiguous / truncate-shares-keys findings; ``cols`` without the rows
    whose values padding refuses (the other checks run on the rest)."""
    n = len(next(iter(cols.values()), ()))
    keep = np.ones(n, dtype=bool)
    seen = set()
    for f in [*schema.layout.fields, *schema.index_fields]:
        if f.name in seen:
            continue
        seen.add(f.name)
        if f.encoding != "ordered" and f.width is not None and f.truncate == "keep-last":
            out.append(
                Finding(
                    "info",
                    "truncate-shares-keys",
                    f"{f.name} keeps the last {f.width} bytes of longer values: values ending in the same "
                    f"{f.width} bytes share one key, and decode returns those bytes",
                    "fine for ids whose last digits are unique among the rows that meet; raise width where two such values must stay apart",
                )
            )
        if not _padded(f):
            continue
        end = "start" if f.pad == "left" else "end"
        shown = f"pad character {f.pad_char!r}" if f.type == "string" else f"pad byte {f.pad_byte!r}"
        fix = f"give {f.name} pad = 'none' if its values are always {f.width} bytes, or a pad_char its values never {end} with"
        bad: list[str] = []
        gen = schema.workload.fields.get(f.name) if schema.workload is not None else None
        if gen is not None and gen.kind == "categorical":
            values = list(gen.options["values"])
            listed = [v for v, t in zip(values, _twins(f, [_raw(f, v) for v in values])) if t]
            if listed:
                bad.append(
                    f"{len(listed)} of the {len(values)} categorical values of {f.name} {end} with the {shown} beside their twin (e.g. {listed[0]!r})"
                )
        if f.name in cols:
            clash = _twins(f, [_raw(f, v) for v in cols[f.name]])
            if clash.any():
                first = cols[f.name][int(np.argmax(clash))]
                bad.append(f"{int(clash.sum())} of {n} sampled values of {f.name} {end} with the {shown} beside their twin (e.g. {first!r})")
                keep &= ~clash
        if bad:
            out.append(
                Finding(
                    "error",
                    "pad-collision",
                    "; ".join(bad) + f": a value that {end}s with the {shown} and the value without it "
                    f"({f.pad} padding to width {f.width} is stripped on decode) are one key, so encode_many refuses such a pair",
                    fix,
                )
            )
        elif f.pad_char in _PLAUSIBLE_PAD or (f.type == "bytes" and f.pad_char in "\x00\xff"):
            whole = f" of at most {f.width} bytes" if f.truncate == "keep-last" else ""
            out.append(
                Finding(
                    "info",
                    "pad-ambiguous",
                    f"{f.name} is padded to width {f.width} with {f.pad_char!r} on the {f.pad}: a value{whole} "
                    f"that {end}s with {f.pad_char!r} shares its key with the value without it (decode returns "
                    "that one); a run of data holding both is refused",
                    f"if values can {end} with it (zero-padded ids given whole), " + fix,
                )
            )
    if keep.all():
        return cols
    return {name: (v[keep] if isinstance(v, np.ndarray) else [x for x, k in zip(v, keep) if k]) for name, v in cols.items()}


def _key_length(schema: _Design, sample: Any, out: list[Finding]) -> None:
    if sample is None:
        return
    lengths = np.fromiter(map(len, sample[1]), dtype=np.int64)
    mean, longest = float(lengths.mean()), int(lengths.max())
    if longest > 100:
        out.append(
            Finding(
                "error",
                "key-too-long",
                f"keys reach {longest} bytes (mean {mean:.1f}); keep them under 100",
                "shorten fields (fixed widths, ids instead of names) or hash long fields",
            )
        )
    elif mean > 20:
        out.append(
            Finding(
                "info",
                "key-long",
                f"keys average {mean:.1f} bytes (max {longest}); 10-20 bytes is best, every cell repeats the key",
                "use binary encodings or shorter fields if memory and storage matter",
            )
        )


def _monotonic(schema: _Design, out: list[Finding]) -> None:
    if schema.layout.prefix.width:
        return
    first = schema.layout.fields[0]
    gen = schema.workload.fields[first.name].kind if schema.workload is not None else None
    if first.type == "timestamp" or gen in _MONOTONIC:
        others = [f.name for f in schema.layout.fields[1:] if f.type != "timestamp"]
        move = f"move {first.name} after {others[0]}, or " if others else ""
        out.append(
            Finding(
                "warning",
                "monotonic-leading",
                f"leading field {first.name} is monotonic and the key has no prefix: every write goes to the last region (hot spot)",
                f"{move}add a prefix (e.g. prefix = {{ strategy = 'mod', buckets = 16 }})",
            )
        )


def _splits(schema: _Design, out: list[Finding]) -> None:
    p, s = schema.layout.prefix, schema.splits
    n = p.bucket_count()
    if not p.salted or n is None:
        return
    if s is None:
        out.append(
            Finding(
                "warning",
                "no-presplit",
                f"salted key ({n} buckets) but no [splits]: the table starts as one region that takes every write",
                "add [splits] algorithm = 'prefix' with regions",
            )
        )
        return
    algo = SPLIT_ALGORITHMS.get(s.algorithm)  # (a SplitSpec built in code may name none)
    if algo is None or not algo.follows_buckets(p):
        out.append(
            Finding(
                "warning",
                "splits-not-matched",
                f"splits algorithm {s.algorithm!r} ignores the {p.name} prefix, so region boundaries fall between buckets at random",
                "use algorithm = 'prefix'",
            )
        )
        return
    if not isinstance(algo, PrefixSplit) or s.regions is None or n > MAX_LISTED_BUCKETS:
        # Millions of hash values per region: one more or less in a region changes nothing.
        return
    r = s.regions
    if r > n:
        out.append(
            Finding(
                "warning",
                "regions-exceed-buckets",
                f"{r} regions but only {n} buckets: at most {n} regions get writes",
                f"use regions <= {n}, or more buckets",
            )
        )
    elif n % r:
        out.append(
            Finding(
                "warning",
                "regions-unaligned",
                f"{n} buckets do not divide into {r} regions: some regions hold {n // r + 1} buckets, others {n // r}",
                f"choose regions dividing {n} (e.g. {max(d for d in range(1, r + 1) if n % d == 0)})",
            )
        )
    elif n > r:
        out.append(Finding("info", "buckets-per-region", f"{n} buckets over {r} regions: {n // r} buckets per region", ""))


def _separator(schema: _Design, sample: Any, out: list[Finding]) -> None:
    # Only fields decode must end at the first separator are at risk: a single variable-width
    # field followed by fixed-width ones is measured from the end of the key, so any bytes work.
    sep = schema.layout.separator
    if not sep:
        return
    for f in schema.layout.ambiguous_fields:
        bad = 0
        if sample is not None:
            enc = f.encode_column(sample[0][f.name])
            bad = sum(sep in v for v in enc.tolist())
        if bad:
            out.append(
                Finding(
                    "error",
                    "separator-in-values",
                    f"{bad} of {_SAMPLE_ROWS} sampled values of {f.name} contain the separator {sep!r}: keys cannot be decoded",
                    f"give {f.name} a width, or choose a separator that cannot occur in it",
                )
            )
        else:
            out.append(
                Finding(
                    "warning",
                    "separator-ambiguous",
                    f"{f.name} and a later field have variable width, so a {sep!r} inside a {f.name} value makes decoding ambiguous",
                    f"give {f.name} (or the later variable-width fields) a width, or make sure values never contain {sep!r}",
                )
            )


def _fields(schema: _Design, sample: Any, out: list[Finding]) -> None:
    for f in schema.layout.fields:
        if f.encoding == "hbase" and f.type in ("int32", "int64", "float64"):
            negative = sample is not None and np.any(np.asarray(sample[0][f.name]) < 0)
            if negative:
                out.append(
                    Finding(
                        "warning",
                        "hbase-negative",
                        f"{f.name} can be negative and uses hbase encoding: negatives sort after positives, range scans break",
                        "use encoding = 'ordered'",
                    )
                )
            else:
                out.append(
                    Finding(
                        "info",
                        "hbase-signed",
                        f"{f.name} uses hbase encoding: correct order only while values stay >= 0",
                        "use encoding = 'ordered' if values can be negative",
                    )
                )
        if f.type == "bytes" and f.encoding == "ordered":
            out.append(
                Finding(
                    "info",
                    "blobvar-order",
                    f"{f.name} uses OrderedBytes BlobVar, which (as in HBase) sorts exactly only among values of equal length",
                    "for range scans over values of different lengths use a fixed width with encoding = 'hbase'",
                )
            )
        if f.descending and f.type in ("string", "bytes") and f.encoding != "ordered" and f.width is None:
            out.append(
                Finding(
                    "warning",
                    "desc-variable-width",
                    f"{f.name} is descending with variable width: a shorter value still sorts first",
                    "give it a width, or use encoding = 'ordered'",
                )
            )
