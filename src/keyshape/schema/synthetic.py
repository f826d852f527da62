"""The synthetic workload of a schema: its ``[workload]`` section and the key-field values it generates.

A schema's ``[workload]`` section::

    [workload]
    rows = 200000          # default 100000
    seed = 0               # mixed with generate()'s seed
    value_bytes = 100      # value bytes per row: what `keyshape load` writes in its one cell and
                           # what `analyze --auto-split` assumes (default: load's 8-byte write
                           # index); size estimates take 100 when it is not set
    fields.user_id = { generator = "zipf", cardinality = 100000, skew = 1.1 }

Generators (``fields.NAME = { generator = ..., options }``; a key field without one gets the default
for its type: ``sequential-time`` for timestamps, ``uuid`` for strings and bytes, ``uniform`` over
[0, 1000000) for numbers):

====================  ===========================================================================
sequential            ``start`` (0), ``step`` (1), ``repeat`` (1): start, start+step, ..., each value
                      ``repeat`` times in a row (the hot-spot pattern)
sequential-time       ``start`` (ISO-8601 or ms, default 2026-01-01T00:00:00Z), ``step_ms`` (1000)
jittered-time         like sequential-time plus uniform noise in ``[-jitter_ms, jitter_ms]``
                      (default 10 x step_ms), clamped at 0: late and early arrivals
zipf                  ``cardinality`` (required), ``skew`` (1.1), ``offset`` (0), ``shuffle`` (true):
                      ids ``offset..offset+cardinality-1`` with P(rank k) ~ 1/k**skew; ``shuffle``
                      scatters the hot ranks over the id range instead of making the smallest hot
uniform               ``low`` (0), ``high`` (1000000, exclusive); or ``cardinality`` instead of
                      ``high``: ids ``low..low+cardinality-1`` (0..cardinality-1), as zipf takes it
uuid                  random UUID4 (text for strings, 16 raw bytes for bytes fields)
categorical           ``values`` (required), ``weights`` (equal)
constant              ``value`` (required)
derived               ``source`` (another field), ``floor_ms`` (1), ``divide`` (1): e.g. the hour
                      bucket of a timestamp field, or its seconds
====================  ===========================================================================

Integer generators feed string fields through ``format`` (a Python format string, default
``"{}"``, e.g. ``"user{:06d}"``) and bytes fields as big-endian bytes of the field's width (8 if
none). Output is deterministic for a (schema seed, ``seed``, ``chunk_rows``) triple; each field
draws from its own random stream, so adding a field does not change the others.

:mod:`keyshape.workload` re-exports these names beside its readers of real keys; they live here, in
the schema layer, because a schema's ``[workload]`` is part of what describes its table (it feeds
``splits.algorithm = "sample"`` and lint without reaching up a layer).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from keyshape.core import textcols
from keyshape.core.keyarray import KeyArray
from keyshape.errors import KeyshapeError
from keyshape.schema.fields import FieldSpec, parse_timestamp

__all__ = [
    "DEFAULT_ROWS",
    "DEFAULT_START",
    "GENERATORS",
    "GeneratorSpec",
    "WorkloadSpec",
    "Described",
    "generate",
    "generate_sample",
    "parse_workload",
]

DEFAULT_ROWS = 100_000  # rows of a workload that does not say: [workload] rows, load, analyze, compare
DEFAULT_START = "2026-01-01T00:00:00Z"
# generator -> {option: (kind, default)}; a default of ... means required.
GENERATORS: dict[str, dict[str, tuple[type | tuple[type, ...], Any]]] = {
    "sequential": {"start": (int, 0), "step": (int, 1), "repeat": (int, 1), "format": (str, "{}")},
    "sequential-time": {"start": ((str, int), DEFAULT_START), "step_ms": (int, 1000)},
    "jittered-time": {"start": ((str, int), DEFAULT_START), "step_ms": (int, 1000), "jitter_ms": (int, None)},
    "zipf": {"cardinality": (int, ...), "skew": (float, 1.1), "offset": (int, 0), "shuffle": (bool, True), "format": (str, "{}")},
    "uniform": {"low": ((int, float), 0), "high": ((int, float), 1_000_000), "cardinality": (int, None), "format": (str, "{}")},
    "uuid": {},
    "categorical": {"values": (list, ...), "weights": (list, None)},
    "constant": {"value": ((str, int, float), ...)},
    "derived": {"source": (str, ...), "floor_ms": (int, 1), "divide": (int, 1)},
}
_INT_GENERATORS = ("sequential", "sequential-time", "jittered-time", "zipf", "derived")


@dataclass(frozen=True)
class GeneratorSpec:
    """One field's generator: ``kind`` (a name of ``GENERATORS``) and its ``options`` (defaults
    filled in)."""

    kind: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadSpec:
    """The ``[workload]`` section: row count, seed, cell size and one generator per key field.

    - ``rows``: rows to generate (``DEFAULT_ROWS``, 100,000, when the section does not say).
    - ``seed``: mixed with :func:`generate`'s seed (default 0).
    - ``value_bytes``: value bytes per row as the schema sets it; None: not set (see
      :func:`keyshape.workload.row_value_bytes`).
    - ``fields``: the generator of each key field, by name.
    - ``key_fields``: the key's fields, in key order.

    A schema without the section has ``workload = None``; :meth:`of` gives its defaults, so a
    reader asks ``WorkloadSpec.of(schema.workload).rows`` instead of guessing with ``getattr``.
    """

    rows: int = DEFAULT_ROWS
    seed: int = 0
    value_bytes: int | None = None  # as the schema sets it; None: not set (see row_value_bytes)
    fields: dict[str, GeneratorSpec] = field(default_factory=dict)
    key_fields: tuple[FieldSpec, ...] = ()

    @classmethod
    def of(cls, workload: WorkloadSpec | None) -> WorkloadSpec:
        """``workload`` itself (a schema's ``workload``), or the defaults of a ``[workload]``
        section the schema does not have (``workload`` None).

        >>> WorkloadSpec.of(None).rows, WorkloadSpec.of(None).value_bytes
        (100000, None)
        """
        return cls() if workload is None else workload


class Described(Protocol):
    """What :func:`generate` reads of a schema: its key fields and its ``[workload]`` (or None)."""

    @property
    def fields(self) -> Sequence[FieldSpec]: ...

    @property
    def workload(self) -> Any: ...


def _default_generator(f: FieldSpec) -> GeneratorSpec:
    if f.type == "timestamp":
        return GeneratorSpec("sequential-time", {"start": parse_timestamp(DEFAULT_START), "step_ms": 1000})
    width = f.width if f.type in ("string", "bytes") and getattr(f, "truncate", "error") == "error" else None
    padded = width is not None and getattr(f, "pad", "none") != "none"
    if width is not None and (width < 36 or padded):
        # A UUID does not fit a fixed width, and one in 16 starts with '0', a value a '0' pad
        # refuses (it would share its key with the value without it): values that fit, and never
        # start (left pad) or end (right pad) with the pad character ('s' then digits; digits for
        # bytes, whose pad is 0x00; another letter first, or one last, where the pad is one of those).
        lead = "s" if f.type == "string" else ""
        if f.pad == "left" and f.pad_char in (lead or "123456789"):
            lead = "x"
        tail = "e" if f.pad == "right" and f.pad_char in "0123456789" else ""
        digits = max(1, min(18, width - len(lead) - len(tail)))  # int64 values
        return GeneratorSpec("uniform", {"low": 1, "high": 10**digits - 1, "cardinality": None, "format": lead + "{}" + tail})
    if f.ftype.uuid_by_default:
        return GeneratorSpec("uuid", {})
    return GeneratorSpec("uniform", {"low": 0, "high": 1_000_000, "cardinality": None, "format": "{}"})


def parse_workload(section: Any, key_fields: Sequence[FieldSpec]) -> WorkloadSpec:
    """Check and read a ``[workload]`` section.

    - ``section``: the ``[workload]`` :class:`keyshape.schema.parse.Section`.
    - ``key_fields``: the key's fields; one without a generator gets its type's default.

    Calls ``section.fail`` (a one-line SchemaError) when bad.
    """
    rows = section.get("rows", int, DEFAULT_ROWS, minimum=1)
    seed = section.get("seed", int, 0, minimum=0)
    value_bytes = section.get("value_bytes", int, None, minimum=0)
    by_name = {f.name: f for f in key_fields}
    gens: dict[str, GeneratorSpec] = {}
    fsec = section.section("fields")
    if fsec is not None:
        for name in list(fsec.data):
            if name not in by_name:
                fsec.fail(name, "is not a key field", "use one of: " + ", ".join(by_name))
            g = fsec.section(name)
            kind = g.get("generator", str, required=True, choices=GENERATORS)
            opts: dict[str, Any] = {}
            for opt, (typ, default) in GENERATORS[kind].items():
                value = g.get(opt, typ, None if default is ... else default, required=default is ...)
                opts[opt] = value
            g.done()
            _check_generator(g, by_name[name], kind, opts, by_name)
            gens[name] = GeneratorSpec(kind, opts)
        fsec.done()
    section.done()
    for f in key_fields:
        gens.setdefault(f.name, _default_generator(f))
    return WorkloadSpec(rows, seed, value_bytes, gens, tuple(key_fields))


# The largest zipf id space a workload generates: zipf keeps the whole distribution in memory
# (the CDF, ranks and a permutation: ~32 bytes per value, 1.6 GB here).
MAX_ZIPF_CARDINALITY = 50_000_000


def _check_generator(g: Any, f: FieldSpec, kind: str, o: dict[str, Any], by_name: dict[str, FieldSpec]) -> None:
    if kind in ("sequential-time", "jittered-time"):
        try:
            o["start"] = parse_timestamp(o["start"])
        except KeyshapeError as exc:
            g.fail("start", str(exc))
        if o["step_ms"] < 0:
            g.fail("step_ms", "must be >= 0", "use a positive step")
    if kind == "sequential" and o["repeat"] < 1:
        g.fail("repeat", "must be >= 1", "e.g. repeat = 3600")
    if kind == "zipf" and (o["cardinality"] < 1 or o["skew"] <= 0):
        g.fail("cardinality" if o["cardinality"] < 1 else "skew", "must be positive", "e.g. cardinality = 1000, skew = 1.1")
    if kind == "zipf" and o["cardinality"] > MAX_ZIPF_CARDINALITY:
        # Checked before allocation: zipf holds ~32 bytes per value (2e9 values tried 60 GiB; issue 40).
        g.fail("cardinality", f"{o['cardinality']:,} is more than {MAX_ZIPF_CARDINALITY:,} values", "use generator = 'uniform' for a larger id space")
    if "format" in o:
        try:
            o["format"].format(0)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            g.fail("format", f"{o['format']!r} is not a format for an integer ({exc})", "e.g. format = 'user{:07d}'")
    if kind == "uniform" and o["cardinality"] is not None:
        if g.has("high"):
            g.fail("cardinality", "and high both bound the values", "give one of them")
        if o["cardinality"] < 1 or not isinstance(o["low"], int):
            g.fail("cardinality", "must be positive, with an integer low", "e.g. cardinality = 1000")
        o["high"] = o["low"] + o["cardinality"]
    if kind == "uniform" and not o["low"] < o["high"]:
        g.fail("high", f"must be greater than low ({o['low']})", "set low < high")
    if kind == "categorical":
        if not o["values"]:
            g.fail("values", "is empty", "list at least one value")
        w = o["weights"]
        if w is not None and (len(w) != len(o["values"]) or any(not isinstance(x, (int, float)) or x < 0 for x in w) or sum(w) <= 0):
            g.fail("weights", "must be non-negative numbers, one per value, not all zero", "or drop weights")
    if kind == "derived":
        if o["source"] not in by_name or o["source"] == f.name:
            g.fail("source", f"{o['source']!r} is not another key field", "use one of: " + ", ".join(n for n in by_name if n != f.name))
        if not by_name[o["source"]].ftype.integer:
            g.fail("source", "must be an integer or timestamp field", "derive from a timestamp field")
        if o["floor_ms"] < 1 or o["divide"] < 1:
            g.fail("floor_ms", "floor_ms and divide must be >= 1", "e.g. floor_ms = 3600000")
    if kind == "uuid" and f.ftype.uuid_values is None:
        g.fail("generator", f"uuid cannot feed a {f.type} field", "use sequential, zipf or uniform")
    if f.ftype.integer and kind == "uniform" and not all(isinstance(o[k], int) for k in ("low", "high")):
        g.fail("low", "must be integers for an integer field", "e.g. low = 0, high = 1000")


# ------------------------------------------------------------------------------------ generate


def generate(
    schema_or_spec: Described | WorkloadSpec, rows: int | None = None, seed: int = 0, chunk_rows: int = 100_000, text_arrays: bool = False
) -> Iterator[dict[str, np.ndarray | list]]:
    """Yield the workload as column chunks (field name -> values) in write order.

    ``schema_or_spec`` is a KeySchema (its ``[workload]``, or default generators when it has
    none) or a :class:`WorkloadSpec`. ``rows`` overrides the spec's row count. Integer, float and
    timestamp columns are numpy arrays (int64 / float64); string and bytes columns are lists.
    With ``text_arrays=True`` string columns are numpy ``str`` arrays where they can be built
    without a Python ``str`` per value (formatted integers, uuids, categorical and constant text;
    the same values, what :meth:`KeySchema.encode_many` reads fastest).
    Deterministic for the same spec, ``seed`` and ``chunk_rows``.
    """
    spec = schema_or_spec if isinstance(schema_or_spec, WorkloadSpec) else _spec_of(schema_or_spec)
    total = spec.rows if rows is None else rows
    if total < 0 or chunk_rows < 1:
        raise KeyshapeError(f"generate: rows must be >= 0 and chunk_rows >= 1, got {total}, {chunk_rows}")
    fields = list(spec.key_fields)
    streams = np.random.SeedSequence([spec.seed, seed]).spawn(len(fields))
    state = {f.name: _Stream(f, spec.fields[f.name], np.random.default_rng(s), text_arrays) for f, s in zip(fields, streams)}
    order = sorted(fields, key=lambda f: spec.fields[f.name].kind == "derived")  # sources first
    done = 0
    while done < total:
        n = min(chunk_rows, total - done)
        raw: dict[str, np.ndarray | list] = {}
        for f in order:
            raw[f.name] = state[f.name].next(n, done, raw)
        yield {f.name: state[f.name].convert(raw[f.name]) for f in fields}
        done += n


def generate_sample(
    schema_or_spec: Described | WorkloadSpec, sample_rows: int, rows: int | None = None, seed: int = 0, chunk_rows: int = 100_000
) -> Iterator[dict[str, np.ndarray | list]]:
    """``sample_rows`` rows spread evenly over the whole workload, as column chunks in write order.

    - ``schema_or_spec``: a schema (its ``[workload]``, or default generators) or a :class:`WorkloadSpec`.
    - ``sample_rows``: how many rows to keep (at least 1).
    - ``rows``: the workload's rows (default None: the spec's ``rows``).
    - ``seed``, ``chunk_rows``: as in :func:`generate` (defaults 0 and 100,000).

    Row ``i * rows // sample_rows`` for ``i = 0..sample_rows-1`` of what :func:`generate` yields
    with the same arguments (every row when ``rows <= sample_rows``). The whole workload is
    generated and strided, not cut short: a time-leading key's late rows must be in the sample,
    or split points drawn from it leave the last region with everything written after the cut.
    """
    spec = schema_or_spec if isinstance(schema_or_spec, WorkloadSpec) else _spec_of(schema_or_spec)
    total = spec.rows if rows is None else rows
    if sample_rows < 1:
        raise KeyshapeError(f"generate_sample: sample_rows must be >= 1, got {sample_rows}")
    if total <= sample_rows:
        yield from generate(spec, total, seed, chunk_rows)
        return
    picks = np.arange(sample_rows, dtype=np.int64) * total // sample_rows
    start = 0
    for chunk in generate(spec, total, seed, chunk_rows):
        n = len(next(iter(chunk.values())))
        lo, hi = np.searchsorted(picks, [start, start + n])
        idx = picks[lo:hi] - start
        start += n
        if len(idx):
            yield {k: v[idx] if isinstance(v, np.ndarray) else [v[i] for i in idx] for k, v in chunk.items()}


def _spec_of(schema: Described) -> WorkloadSpec:
    if schema.workload is not None:
        return schema.workload  # type: ignore[no-any-return]
    fields = tuple(schema.fields)
    return WorkloadSpec(fields={f.name: _default_generator(f) for f in fields}, key_fields=fields)


class _Stream:
    """One field's generator state across chunks."""

    def __init__(self, f: FieldSpec, g: GeneratorSpec, rng: np.random.Generator, text_arrays: bool = False) -> None:
        self.f, self.g, self.rng, self.text_arrays = f, g, rng, text_arrays
        o = g.options
        if g.kind == "zipf":
            ranks = np.arange(1, o["cardinality"] + 1, dtype=np.float64)
            p = ranks ** -float(o["skew"])
            self.cdf = _InverseCDF(np.cumsum(p / p.sum()))
            self.ids = (rng.permutation(o["cardinality"]) if o["shuffle"] else np.arange(o["cardinality"])) + o["offset"]
        if g.kind == "categorical":
            w = np.asarray(o["weights"] if o["weights"] is not None else [1.0] * len(o["values"]), dtype=np.float64)
            self.cdf = _InverseCDF(np.cumsum(w / w.sum()))

    def next(self, n: int, offset: int, done: dict[str, Any]) -> np.ndarray | list:
        o, rng, kind = self.g.options, self.rng, self.g.kind
        idx = np.arange(offset, offset + n, dtype=np.int64)
        if kind == "sequential":
            return o["start"] + (idx // o["repeat"]) * o["step"]
        if kind in ("sequential-time", "jittered-time"):
            t = o["start"] + idx * o["step_ms"]
            if kind == "jittered-time":
                j = o["jitter_ms"] if o["jitter_ms"] is not None else 10 * o["step_ms"]
                t = np.maximum(t + rng.integers(-j, j + 1, size=n), 0)
            return t
        if kind == "zipf":
            return self.ids[np.minimum(self.cdf.index(rng.random(n)), len(self.ids) - 1)]
        if kind == "uniform":
            if self.f.type == "float64" or isinstance(o["low"], float) or isinstance(o["high"], float):
                return rng.uniform(o["low"], o["high"], size=n)
            return rng.integers(o["low"], o["high"], size=n, dtype=np.int64)
        if kind == "uuid":
            return textcols.uuid_bytes_matrix(rng.bytes(16 * n))
        if kind == "categorical":
            pick = np.minimum(self.cdf.index(rng.random(n), side="right"), len(self.cdf) - 1)
            values = o["values"]
            if self.text_arrays and self.f.type == "string" and _plain_text(values):
                return np.array(values)[pick]
            return [values[i] for i in pick.tolist()]
        if kind == "constant":
            value = self.f.coerce(o["value"])  # once: every row has the same value
            if self.text_arrays and self.f.type == "string" and _plain_text([value]):
                return np.full(n, value)
            return [value] * n
        src = np.asarray(done[o["source"]], dtype=np.int64)  # derived
        return (src - src % o["floor_ms"]) // o["divide"]

    def convert(self, v: np.ndarray | list) -> np.ndarray | list:
        t, kind, o = self.f.type, self.g.kind, self.g.options
        if kind == "uuid":
            assert isinstance(v, np.ndarray)
            if self.f.ftype.uuid_values == "text":
                return self._text(textcols.uuid_strings(v))
            return KeyArray(v).tolist()
        if self.f.ftype.own_codec:  # a type with its own codec takes what its coerce takes
            return [self.f.coerce(x) for x in (v if isinstance(v, list) else v.tolist())]
        if isinstance(v, np.ndarray) and v.dtype.kind == "U":
            return self._text(v)
        if self.f.ftype.integer:
            a = np.asarray([self.f.coerce(x) for x in v] if isinstance(v, list) else v, dtype=np.int64)
            if t == "int32" and a.size and (a.min() < -(2**31) or a.max() >= 2**31):
                raise KeyshapeError(f"workload for {self.f.name!r} produces values outside int32")
            return a
        if t == "float64":
            return np.asarray([float(x) for x in v] if isinstance(v, list) else v, dtype=np.float64)
        if isinstance(v, list):
            return [self.f.coerce(x) for x in v]
        if t == "string":
            fmt = o.get("format", "{}")
            built = textcols.format_ints(fmt, v)
            return [fmt.format(x) for x in v.tolist()] if built is None else self._text(built)
        width = self.f.width or 8
        fast = _int_bytes(v, width)
        return fast if fast is not None else [int(x).to_bytes(width, "big", signed=x < 0) for x in v.tolist()]

    def _text(self, column: np.ndarray) -> np.ndarray | list:
        return column if self.text_arrays else column.tolist()


class _InverseCDF:
    """``np.searchsorted(cdf, u, side)`` for many uniform ``u`` at once, exactly, through a guide
    table: ``G`` equal cells of [0, 1), each holding the first index whose CDF value reaches the
    cell's start, so every ``u`` starts two cells below its answer and steps up to it (a few
    vectorized steps; the rare ``u`` still short after those is searched directly). A binary
    search over a million-entry CDF misses the cache at every level; sorting the needles first
    (what this replaced) cost more than the search."""

    STEPS = 8

    def __init__(self, cdf: np.ndarray) -> None:
        self.cdf = cdf
        self.cells = int(min(1 << 20, max(4096, 16 * len(cdf))))
        self._stop = np.append(cdf, np.inf)  # index len(cdf) ends every walk
        self._guide: dict[str, np.ndarray] = {}  # per side, made on first use

    def _guide_of(self, side: Literal["left", "right"]) -> np.ndarray:
        guide = self._guide.get(side)
        if guide is None:
            at = np.arange(self.cells, dtype=np.float64) / self.cells
            guide = self._guide[side] = np.searchsorted(self.cdf, at, side=side).astype(np.int32 if len(self.cdf) < 2**31 else np.int64)
        return guide

    def __len__(self) -> int:
        return len(self.cdf)

    def index(self, u: np.ndarray, side: Literal["left", "right"] = "left") -> np.ndarray:
        if side not in self._guide and u.size * 64 < self.cells:
            # A few values (lint's 2,000-row sample of a million-value zipf): a binary search
            # each costs less than making the guide (30 ms for a million cells).
            return np.searchsorted(self.cdf, u, side=side)
        # two cells below u's: rounding in u * cells (or in a cell's start) cannot put the start past the answer
        cell = (u * self.cells).astype(np.int64) - 2
        np.clip(cell, 0, self.cells - 1, out=cell)
        out = self._guide_of(side)[cell].astype(np.intp)
        below = np.less if side == "left" else np.less_equal  # cdf[i] short of u: the answer is past i
        for _ in range(2):  # most values are at most two steps away: whole-array steps
            step = below(self._stop[out], u)
            if not step.any():
                return out
            out += step
        active = np.flatnonzero(below(self._stop[out], u))
        for _ in range(self.STEPS):  # then steps over the values not yet at their answer
            if not active.size:
                return out
            out[active] += 1
            active = active[below(self._stop[out[active]], u[active])]
        out[active] = np.searchsorted(self.cdf, u[active], side=side)  # the few still short
        return out


def _plain_text(values: Sequence[Any]) -> bool:
    """True when a numpy str array holds these values exactly (str, no NUL: numpy drops trailing NULs)."""
    return all(type(x) is str and "\x00" not in x for x in values)


def _int_bytes(v: np.ndarray, width: int) -> list[bytes] | None:
    """``int(x).to_bytes(width, "big", signed=x < 0)`` of every value, or None when some value
    does not fit (then the per-value call raises its own error)."""
    a = np.asarray(v, dtype=np.int64)
    if width > 8 or not len(a):
        return None
    lo, hi = int(a.min()), int(a.max())
    if lo < -(2 ** (8 * width - 1)) or hi >= 2 ** (8 * width):
        return None
    m = a.astype(">i8").view(np.uint8).reshape(len(a), 8)[:, 8 - width :]
    return KeyArray(np.ascontiguousarray(m)).tolist()
