"""Analyze key designs end to end: schema -> workload (or a key file) -> keys -> regions -> verdict.

``analyze_schema`` is what ``keyshape analyze`` runs; ``compare`` runs several schemas on the same
row count and seed so their numbers and heat maps line up.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.analysis.analyze import Analysis, Analyzer
from keyshape.analysis.signals import HeavyHitters
from keyshape.analysis.verdict import SchemaHints
from keyshape.core.keyarray import KeyArray
from keyshape.core.prefetch import prefetch
from keyshape.core.splitsim import COMPRESSION_RATIOS, SplitModel, cell_size
from keyshape.errors import KeyshapeError, KeysDoNotFit
from keyshape.schema import KeySchema
from keyshape.schema.keycheck import KeyCheck
from keyshape.schema.labels import key_label, label_legend
from keyshape.schema.prefixes import STRATEGIES
from keyshape.workload import LOAD_QUALIFIER, WorkloadSpec, row_value_bytes

DEFAULT_VALUE_BYTES = 100
CHUNK_ROWS = 100_000
# Workload generators whose values only grow (or only shrink) in write order.
MONOTONIC_GENERATORS = ("sequential", "sequential-time", "jittered-time")
# Buckets small enough that "regions per bucket" advice makes sense (salt bytes, mod N, ...).
_DISCRETE_BUCKETS = 1024

Progress = Callable[[int, int | None], None]


def _generator(schema: KeySchema, field: str) -> str | None:
    """The workload generator name of ``field`` (None when the schema has no workload for it)."""
    wl = schema.workload
    fields = getattr(wl, "fields", None) if wl is not None else None
    if not fields:
        return None
    spec = fields.get(field)
    if spec is None:
        return None
    name = getattr(spec, "kind", None)
    if name == "derived":
        # A bucket of another field (e.g. the hour of a timestamp) grows when its source grows.
        source = getattr(spec, "options", {}).get("source")
        inner = _generator(schema, source) if source and source != field else None
        return f"derived from {source}, {inner}" if _is_monotonic(inner) else "derived"
    return str(name) if name is not None else None


def _is_monotonic(generator: str | None) -> bool:
    if generator is None:
        return False
    return generator in MONOTONIC_GENERATORS or (generator.startswith("derived from ") and generator.split(", ")[-1] in MONOTONIC_GENERATORS)


def _bucket_count(schema: KeySchema) -> int | None:
    n = schema.prefix.bucket_count()  # None for a strategy without buckets
    return n if n is not None and n <= _DISCRETE_BUCKETS else None


def _heavy_fields(schema: KeySchema) -> list[str]:
    """Fields whose heavy values decide where rows go: the hashed fields of a prefix that hashes
    only some fields (an entity stays in one bucket), or the leading field without a prefix."""
    if not schema.prefix.width:
        return [schema.fields[0].name]
    if not schema.prefix.deterministic or set(schema.hash_fields) == set(schema.field_names):
        return []
    return list(schema.hash_fields)[:3]


def schema_hints(schema: KeySchema, heavy: dict[str, HeavyHitters] | None = None) -> SchemaHints:
    """What the schema says about hotspots: a monotonic leading field, a field to hash instead,
    the prefix and its buckets, and the heaviest values seen in the workload."""
    lead = schema.fields[0].name
    strategy = schema.prefix.name
    gens = {f.name: _generator(schema, f.name) for f in schema.fields}
    mono = lead if not schema.prefix.width and _is_monotonic(gens[lead]) else None
    spread = next((f.name for f in schema.fields[1:] if gens[f.name] is not None and not _is_monotonic(gens[f.name])), None)
    if spread is None and len(schema.fields) > 1:
        spread = next((f.name for f in schema.fields[1:] if not _is_monotonic(gens[f.name])), None)
    top: list[tuple[str, object, float]] = []
    for name, hh in (heavy or {}).items():
        top.extend((name, value, share) for value, share in hh.top(1))
    return SchemaHints(
        leading_field=lead,
        monotonic_field=mono,
        monotonic_generator=gens[lead] if mono else None,
        spread_field=spread,
        prefix_strategy=strategy,
        prefixed=bool(schema.prefix.width),
        hash_fields=tuple(schema.hash_fields) if schema.prefix.width else (),
        buckets=_bucket_count(schema),
        heavy=tuple(top),
        split_algorithm=schema.splits.algorithm if schema.splits is not None else None,
    )


def with_regions(schema: KeySchema, regions: int) -> KeySchema:
    """A copy of ``schema`` whose ``[splits]`` asks for ``regions`` regions.

    Keeps the schema's split algorithm when it takes a region count; without ``[splits]`` uses
    ``prefix`` when the key has a bucketed prefix and ``sample`` (quantiles of the workload)
    otherwise. ``buckets`` and ``explicit`` splits fix their own count, so they are refused.
    """
    from keyshape.schema import SplitSpec

    if regions < 1:
        raise KeyshapeError(f"--regions must be at least 1, got {regions}")
    out = copy.copy(schema)
    if regions == 1:
        out.splits = None
        return out
    spec = schema.splits
    if spec is None:
        algo = "prefix" if schema.prefix.bucket_count() is not None else "sample"
        if algo == "sample" and schema.workload is None:
            raise KeyshapeError(f"{schema.source}: --regions needs [splits] in the schema or a [workload] to sample split points from")
        opts = {"sample_rows": 100_000, "seed": 0} if algo == "sample" else {}
        out.splits = SplitSpec(algo, regions, opts)
    elif spec.algorithm in ("buckets", "explicit"):
        raise KeyshapeError(
            f"{schema.source}: [splits] algorithm = {spec.algorithm!r} fixes the region count itself; drop --regions or change the algorithm"
        )
    else:
        out.splits = dataclasses.replace(spec, regions=regions)
    return out


# Regions for strategy variants of a schema without [splits] (one region compares nothing).
DEFAULT_VARIANT_REGIONS = 16


@dataclasses.dataclass(frozen=True)
class Variant:
    """One prefix strategy applied to a schema: ``name`` like ``"orders [mod:16]"``, the
    canonical ``strategy`` entry (``"mod:16"``), the variant ``schema`` and a sentence on which
    ``splits`` it got."""

    name: str
    strategy: str
    schema: KeySchema
    splits: str


def parse_strategy(entry: str) -> tuple[str, dict[str, int]]:
    """``"name[:n]"`` -> ``(name, options)``: n is the md5 length, else the bucket count.

    Only the form is checked here; names and ranges are checked by :meth:`KeySchema.with_prefix`.
    """
    name, colon, count = entry.strip().partition(":")
    name = name.strip()
    if not name:
        raise KeyshapeError(f"strategy entry {entry!r} is empty; write name[:n], e.g. mod:16")
    if not colon:
        return name, {}
    try:
        n = int(count.strip())
    except ValueError:
        raise KeyshapeError(
            f"strategy {entry.strip()!r}: {count.strip()!r} is not a whole number; write name:n with n the buckets (the length for md5), e.g. mod:16"
        ) from None
    # The option a bare number sets is the strategy's (md5: length); an unknown name is left to
    # with_prefix, which names the strategies.
    cls = STRATEGIES.get(name)
    return name, {cls.count_option if cls is not None else "buckets": n}


def _region_count(schema: KeySchema) -> tuple[int, str]:
    """The schema's own region count and where it comes from."""
    spec = schema.splits
    if spec is None:
        return DEFAULT_VARIANT_REGIONS, f"default {DEFAULT_VARIANT_REGIONS}: the schema has no [splits]"
    if spec.regions is not None:
        return spec.regions, "the schema's region count"
    return len(schema.split_keys()) + 1, "the schema's region count"


def strategy_variants(
    schema: KeySchema | str | Path, entries: Sequence[str], *, regions: int | None = None, name: str | None = None
) -> list[Variant]:
    """One variant of ``schema`` per prefix strategy in ``entries`` (``"name[:n]"``, see
    :func:`parse_strategy`), for comparing strategies on the same workload.

    Every variant keeps the fields, separator, hash_fields and workload, and gets ``regions``
    regions (default: the schema's region count; 16 when it has no ``[splits]``) with splits
    matched to its strategy: ``algorithm = "prefix"`` for a prefix with buckets (at most one
    region per bucket); for ``none`` the schema's own ``[splits]`` when they are not prefix
    splits (re-cut to ``regions`` when that is given), else ``sample`` splits (quantiles of the
    workload). Variant names are ``"<name> [<entry>]"``, name defaulting to the schema file's stem.
    Raises SchemaError for a bad strategy or option (from the schema parser), KeyshapeError for
    a malformed or repeated entry.
    """
    if not isinstance(schema, KeySchema):
        schema = KeySchema.load(schema)
    if not entries:
        raise KeyshapeError("no strategies given; list at least one, e.g. none,mod:16")
    if name is None:
        name = Path(schema.source).stem if schema.source and not schema.source.startswith("<") else schema.table.full_name
    if regions is not None and regions < 1:
        raise KeyshapeError(f"regions must be at least 1, got {regions}")
    count, why = (regions, "as asked") if regions is not None else _region_count(schema)
    out: list[Variant] = []
    for entry in entries:
        strategy, options = parse_strategy(entry)
        try:
            plain = schema.with_prefix(strategy, splits=None, **options)
        except KeyshapeError as exc:
            raise type(exc)(f"strategy {entry.strip()!r}: {exc}") from None
        n = plain.prefix.bucket_count()
        # Canonical entry: the count the strategy got, defaults included ("md5" -> "md5:4").
        shown = plain.prefix.count()
        label = f"{strategy}:{shown}" if shown is not None else strategy
        if any(v.strategy == label for v in out):
            raise KeyshapeError(f"strategy {label!r} is listed twice; list each strategy once")
        own = schema.splits
        if count == 1:
            variant, note = plain, f"no splits, 1 region ({why})"
        elif n is not None:
            variant = with_regions(plain, count)  # prefix splits: the copy has no [splits]
            got = min(count, n)
            note = f"prefix splits, {got} regions (" + (f"one per bucket, {count} asked)" if got < count else f"{why})")
        elif own is not None and own.algorithm != "prefix":
            variant = copy.copy(plain)
            variant.splits = own
            if regions is not None:
                variant = with_regions(variant, regions)
            note = f"the schema's own {own.algorithm} splits, {_region_count(variant)[0]} regions"
        else:
            variant = with_regions(plain, count)
            note = f"sample splits (workload quantiles), {count} regions ({why}" + ("; its own splits are prefix splits)" if own is not None else ")")
        out.append(Variant(f"{name} [{label}]", label, variant, note))
    return out


def _schema_text(schema: KeySchema) -> str | None:
    try:
        return Path(schema.source).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def _lint_lines(schema: KeySchema) -> list[str]:
    # A loaded schema always lints; an exception here is a bug and shows as one.
    return [str(getattr(f, "message", f)) for f in schema.lint()]


def _workload_keys(
    schema: KeySchema, rows: int, seed: int, heavy: dict[str, HeavyHitters], time_field: str | None = None
) -> Iterator[KeyArray | tuple[KeyArray, np.ndarray]]:
    from keyshape.workload import generate

    first: list[float] = []
    latest = -np.inf
    for columns in generate(schema, rows, seed=seed, chunk_rows=CHUNK_ROWS, text_arrays=True):
        for name, hh in heavy.items():
            hh.update(columns[name])
        keys = schema.encode_many(columns, as_array=True)
        if time_field is None:
            yield keys
            continue
        # The field's ms are the write times, seconds from the first row; a row stamped before
        # an earlier one is written after it, so the clock never runs backwards.
        ms = np.asarray(columns[time_field], dtype=np.float64)
        if not first:
            first.append(float(ms[0]) if ms.size else 0.0)
        times = np.maximum.accumulate(np.maximum((ms - first[0]) / 1000.0, latest))
        latest = float(times[-1]) if times.size else latest
        yield keys, times


def analyze_schema(
    schema: KeySchema | str | Path,
    rows: int | None = None,
    *,
    regions: int | None = None,
    keys_file: str | Path | None = None,
    column: str | None = None,
    auto_split_rows: int | None = None,
    servers: int | None = None,
    windows: int = 50,
    seed: int = 0,
    value_bytes: int | None = None,
    cells_per_row: int | None = None,
    name: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    split_model: SplitModel | None = None,
    time_field: str | None = None,
    allow_foreign_keys: bool = False,
) -> Analysis:
    """Analyze a key design: generate its workload (or read real keys), encode, assign, judge.

    - ``schema``: the key schema, or the path of a schema file (:func:`keyshape.schema.load_schema`).
    - ``rows``: rows to generate (default: the schema's ``[workload] rows``, else ``DEFAULT_ROWS``, 100,000);
      ignored with ``keys_file``.
    - ``regions``: override the schema's region count (see ``with_regions``); the regions are
      ``schema.split_keys()``.
    - ``keys_file`` + ``column``: analyze the keys in a Parquet/ORC/CSV column (a file, a
      directory of files or a glob) instead of a generated workload (keys in toStringBinary form
      in CSV); ``workers`` threads count Parquet row groups in parallel
      (:mod:`keyshape.analysis.keyfiles`). Every key is checked against the schema
      (:mod:`keyshape.schema.keycheck`; ``Analysis.key_check`` has the counts): with any wrong
      salt, or more than 1% of the keys not fitting, the analysis raises ``KeysDoNotFit``
      unless ``allow_foreign_keys``.
    - ``cells_per_row`` (default: one per key field, as if each field were also stored as a
      column) and ``value_bytes`` per row (default: the workload's ``value_bytes``, else 100)
      feed the key-overhead and size estimates.
    - ``split_model``: simulate HBase's own splits from the schema's splits at the model's write
      rate (``keyshape.core.splitsim``); a model without ``cell_bytes`` gets one cell per row
      in the schema's first family, as ``keyshape load`` writes it (``value_bytes`` of value if
      given, else the schema's ``[workload] value_bytes``, else load's 8-byte write index:
      ``keyshape.workload.row_value_bytes``), and that family's compression ratio
      (``COMPRESSION_RATIOS``).
    - ``auto_split_rows``: the idealized split model: a region splits at its sampled median key
      once it holds more rows than this (see :func:`keyshape.analysis.analyze`).
    - ``servers``: region servers hosting the regions round-robin (None: ``DEFAULT_SERVERS``,
      marked as assumed); ``windows``: write-order windows of the heat map (default 50).
    - ``seed``: the workload's seed (default 0; the same seed gives the same rows).
    - ``name``: the analysis' name in reports (default: the table's name).
    - ``time_field``: a timestamp field of the workload whose values (ms) are the write times of
      the split simulation, instead of ``split_model.write_rate``.
    - ``progress(done, total)`` is called after each chunk (total None when unknown).
    """
    if not isinstance(schema, KeySchema):
        schema = KeySchema.load(schema)
    if regions is not None:
        schema = with_regions(schema, regions)
    if keys_file is None and schema.workload is None:
        raise KeyshapeError(
            f"{schema.source}: no [workload] section to generate rows from; add one or pass a file of real keys (--keys FILE --column C)"
        )
    if rows is None:
        rows = WorkloadSpec.of(schema.workload).rows
    if rows < 1:
        raise KeyshapeError(f"rows must be at least 1, got {rows}")
    if keys_file is not None:
        from keyshape.workload import count_key_rows

        total = count_key_rows(keys_file)  # Parquet/ORC footers: exact windows
    else:
        total = rows
    if split_model is not None and split_model.cell_bytes is None:
        # The cell `keyshape load` writes (the calibration's): one <family>:v of the value size
        # the schema sets, else load's 8-byte write index; never the size estimates' 100 bytes.
        family = schema.table.families[0] if schema.table.families else None
        family_name = family.name if family is not None else "d"
        codec = str(getattr(family, "compression", None) or "NONE").upper()
        stored = row_value_bytes(schema.workload) if value_bytes is None else value_bytes
        split_model = dataclasses.replace(
            split_model, cell_bytes=cell_size(len(family_name.encode()), len(LOAD_QUALIFIER), stored), compression=COMPRESSION_RATIOS.get(codec, 1.0)
        )
    if value_bytes is None:
        value_bytes = _estimate_value_bytes(schema)
    acc = schema_analyzer(
        schema,
        total,
        servers=servers,
        windows=windows,
        auto_split_rows=auto_split_rows,
        value_bytes=value_bytes,
        cells_per_row=cells_per_row,
        split_model=split_model,
    )
    heavy = {f: HeavyHitters() for f in _heavy_fields(schema)} if keys_file is None else {}
    if time_field is not None:
        field = next((f for f in schema.fields if f.name == time_field), None)
        if field is None or field.type != "timestamp" or split_model is None or keys_file:
            stamps = [f.name for f in schema.fields if f.type == "timestamp"]
            which = f"the key's timestamp field(s): {', '.join(stamps)}" if stamps else "this key has no timestamp field"
            raise KeyshapeError(
                f"write times from field {time_field!r}: give a timestamp field of the key ({which}), "
                "with --auto-split and a generated workload; or give rows per second, e.g. --write-rate 10000"
            )
    done = 0
    check = KeyCheck.of(schema) if keys_file is not None else None
    lint: list[str] | None = None
    if keys_file is not None and acc.split_model is None:
        from concurrent.futures import ThreadPoolExecutor

        from keyshape.analysis.keyfiles import feed_key_files

        # The schema's lint reads no key: it runs beside the key threads instead of after them
        # (its workload sample costs 0.05-0.1 s, mostly in numpy calls that let the GIL go, and
        # a file of few row groups leaves a core idle while the last ones are read).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="keyshape-lint") as pool:
            linted = pool.submit(_lint_lines, schema)
            feed_key_files(
                acc, keys_file, column, workers=workers, progress=None if progress is None else lambda done: progress(done, total), check=check
            )
            lint = linted.result()
    elif keys_file is not None:
        # An auto-split run replays the writes in order, in one pass.
        from keyshape.workload import read_key_arrays

        for keys in read_key_arrays(keys_file, column, chunk_rows=CHUNK_ROWS):
            acc.update(keys)
            assert check is not None
            check.check(keys, done, threads=workers or _threads())
            done += len(keys)
            if progress is not None:
                progress(done, total)
    else:
        # Generating and encoding the next chunk overlaps with counting this one (another core);
        # chunks arrive in order, so the result is the same as without the thread.
        for item in prefetch(_workload_keys(schema, rows, seed, heavy, time_field)):
            keys, times = item if isinstance(item, tuple) else (item, None)
            acc.update(keys, times=times)
            done += len(keys)
            if progress is not None:
                progress(done, total)
    if check is not None:
        refuse_foreign_keys(check, allow_foreign_keys)
    source = f"keys from {keys_file}" + (f" column {column}" if column else "") if keys_file is not None else f"generated workload, seed {seed}"
    analysis = finish_schema(acc, schema, source=source, name=name, heavy=heavy, real_keys=keys_file is not None, lint=lint)
    return analysis if check is None else with_key_check(analysis, check)


def refuse_foreign_keys(check: KeyCheck, allow_foreign_keys: bool = False) -> None:
    """Raise ``KeysDoNotFit`` when ``check`` is past its limits (any wrong salt, more than 1% of
    the keys not fitting: ``KeyCheck.refused``), unless ``allow_foreign_keys``."""
    if check.refused and not allow_foreign_keys:
        raise KeysDoNotFit(check.refusal(), check)


def with_key_check(analysis: Analysis, check: KeyCheck) -> Analysis:
    """``analysis`` (changed in place and returned) carrying ``check``; keys that do not fit lead
    the reasons: the numbers after it are of keys the schema does not describe."""
    analysis.key_check = check
    if check.foreign or check.wrong_salt:
        analysis.reasons.insert(0, check.summary())
    return analysis


def _threads() -> int:
    from keyshape.core.batchhash import default_threads

    return default_threads()


def with_key_labels(analysis: Analysis, schema: KeySchema) -> Analysis:
    """``analysis`` (changed in place and returned) with each region's start key decoded by
    ``schema`` into ``RegionLoad.start_text`` (``keyshape.schema.labels.key_label``: the bucket
    and the leading fields the key holds, toStringBinary when nothing decodes), for reports."""
    analysis.regions = [dataclasses.replace(r, start_text=key_label(schema, r.start)) for r in analysis.regions]
    analysis.label_legend = label_legend(schema)
    return analysis


def _estimate_value_bytes(schema: KeySchema) -> int:
    """Value bytes per row for the size estimates: the schema's ``[workload] value_bytes``, else
    ``DEFAULT_VALUE_BYTES`` (a typical row of a production table, not what ``load`` writes)."""
    given = WorkloadSpec.of(schema.workload).value_bytes
    return DEFAULT_VALUE_BYTES if given is None else int(given)


def schema_analyzer(
    schema: KeySchema,
    total_rows: int | None,
    *,
    split_keys: Sequence[bytes] | None = None,
    servers: int | None = None,
    windows: int = 50,
    auto_split_rows: int | None = None,
    value_bytes: int | None = None,
    cells_per_row: int | None = None,
    split_model: SplitModel | None = None,
) -> Analyzer:
    """The Analyzer ``analyze_schema`` fills for ``schema``: its split keys (or ``split_keys``),
    ``value_bytes`` from its workload (else 100) and one cell per key field unless given."""
    if value_bytes is None:
        value_bytes = _estimate_value_bytes(schema)
    return Analyzer(
        schema.split_keys() if split_keys is None else split_keys,
        servers=servers,
        windows=windows,
        total_rows=total_rows,
        auto_split_rows=auto_split_rows,
        value_bytes=value_bytes,
        cells_per_row=cells_per_row or len(schema.fields),
        split_model=split_model,
    )


def finish_schema(
    acc: Analyzer,
    schema: KeySchema,
    *,
    source: str,
    name: str | None = None,
    heavy: dict[str, HeavyHitters] | None = None,
    real_keys: bool = False,
    lint: list[str] | None = None,
) -> Analysis:
    """``acc.finish`` with what the schema says: its name, hints (``real_keys``: the keys came
    from a file or a live table, not a generated workload), text, lint findings (``lint``: the
    schema's lint lines when already made) and region labels."""
    hints = dataclasses.replace(schema_hints(schema, heavy), real_keys=real_keys)
    analysis = acc.finish(
        name=name or schema.table.full_name,
        hints=hints,
        schema_text=_schema_text(schema),
        lint=_lint_lines(schema) if lint is None else lint,
        source=source,
    )
    return with_key_labels(analysis, schema)


def compare(
    schemas: Sequence[KeySchema | str | Path],
    rows: int | None = None,
    *,
    names: Sequence[str] | None = None,
    phase: Callable[[str, int], AbstractContextManager[Callable[[int], None]]] | None = None,
    **options: Any,
) -> list[Analysis]:
    """Analyze several designs on the same workload size and seed: ``keyshape compare``.

    - ``schemas``: key schemas or schema file paths (every file is loaded before the first
      design is analyzed), analyzed in that order.
    - ``rows``: rows each design generates (default: the first schema's workload rows, so every
      design sees the same count).
    - ``names``: each design's analysis name (default: the schema file stems; the table names may
      be equal).
    - ``phase(name, rows)``: a context manager around each design's analysis yielding
      ``update(rows done)`` (e.g. a progress bar per design); None: no progress.
    - ``options``: :func:`analyze_schema`'s keyword options, the same for every design.
    """
    if not schemas:
        raise KeyshapeError("compare needs at least one schema")
    loaded = [s if isinstance(s, KeySchema) else KeySchema.load(s) for s in schemas]
    if rows is None:
        rows = WorkloadSpec.of(loaded[0].workload).rows
    if names is None:
        names = [Path(s.source).stem if s.source and not s.source.startswith("<") else s.table.full_name for s in loaded]
    if phase is None:
        return [analyze_schema(s, rows, name=n, **options) for s, n in zip(loaded, names)]
    analyses = []
    for s, n in zip(loaded, names):
        with phase(n, rows) as update:
            analyses.append(analyze_schema(s, rows, name=n, progress=lambda done, _total: update(done), **options))
    return analyses
