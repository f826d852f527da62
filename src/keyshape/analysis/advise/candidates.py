"""Candidate designs: field orders, prefix strategies, reverse time, index tables, pre-splits.

Every candidate is a real :class:`~keyshape.schema.keyschema.KeySchema` made from TOML text
(``Design.toml``), so the schema the advisor prints is exactly the one it scored. The search is
bounded and explained: what is left out is listed in ``Pruned`` with the reason.

- Field orders: for each access pattern, its given fields first (then the event time when the
  pattern reads by time, then the identifying fields not yet in), the identifying fields alone, and
  the event time first (the log's key, unsalted) when no pattern leads with it.
- Prefixes: none; ``mod`` over the leading field with ``1x, 2x, 4x`` the region servers buckets; ``md5``
  (4 hex digits, 65,536 buckets) and ``crc32`` over the leading field; ``mod`` over the whole identity (spreads
  everything, pins nothing a scan gives).
- The event time descending (``Long.MAX_VALUE - ts``) or ascending, when a pattern reads by time.
- An index table (a second copy of the key in another order, pointing at the main row) for the
  patterns one order cannot serve.
- Time bucketing (:mod:`.timebucket`): for the patterns that read one entity by time, the entity
  then the event time truncated to an hour or a day (chosen from the sample's rate), unsalted and
  salted by the servers; the offset in the qualifier, closed buckets packed into one cell.
- Pre-splits: a salted key splits on bucket boundaries (``[splits] algorithm = "prefix"``); an
  unsalted key at the quantiles of the sample's *first half* (``keyshape.core.splits.sample_splits``)
  so the second half, replayed as the future, meets split points it did not choose.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from keyshape.analysis.advise.sample import Sample
from keyshape.analysis.advise.spec import AdviseSpec, Pattern
from keyshape.analysis.advise.timebucket import Bucket, add_bucket_column, choose_bucket
from keyshape.core.hbytes import to_string_binary
from keyshape.core.splits import sample_splits
from keyshape.schema.keyschema import KeySchema
from keyshape.schema.prefixes import REGISTRY, Prefix

__all__ = ["Shape", "Design", "Pruned", "designs", "pattern_order", "served_by", "build_schema"]

SEPARATORS = ("_", "|", "#", "~", ":")
SALT = "mod"  # the counted salt tried with 1x, 2x, 4x the servers' buckets
HASHES = ("md5", "crc32")  # the hash prefixes tried at their default width, in this order
DEFAULT_MAX_DESIGNS = 64


@dataclass(frozen=True)
class Shape:
    """What a key looks like before it is TOML: order, prefix, reverse time."""

    order: tuple[str, ...]
    prefix: str = "none"  # a prefix strategy's name (schema/prefixes REGISTRY)
    buckets: int = 0  # the strategy's count option (mod's buckets, md5's length); 0: none
    hash_fields: tuple[str, ...] = ()
    desc_time: bool = False  # the event time (or, bucketed, its bucket) sorts newest first
    bucket_ms: int = 0  # time bucketing: the last key field is the event time truncated to this

    def strategy(self) -> Prefix:
        """The prefix strategy object: what the advisor asks instead of the name."""
        cls = REGISTRY[self.prefix]
        return cls(**({cls.count_option: self.buckets} if self.buckets and cls.count_option in cls.options else {}))  # type: ignore[arg-type]

    @property
    def salted(self) -> bool:
        return self.strategy().salted

    @property
    def counted(self) -> bool:
        """A salt whose count option is its number of buckets (mod N), not a hash's width."""
        return bool(self.buckets) and self.bucket_count == self.buckets

    @property
    def label(self) -> str:
        parts = [" + ".join(self.order)]
        if self.counted:
            parts.insert(0, f"{self.prefix} {self.buckets}({', '.join(self.hash_fields)})")
        elif self.salted:
            parts.insert(0, f"{self.prefix}({', '.join(self.hash_fields)})")
        text = " | ".join(parts)
        if self.bucket_ms:
            return text + f" [{'hour' if self.bucket_ms == 3_600_000 else 'day'} buckets{', newest first' if self.desc_time else ''}]"
        return text + (" [time desc]" if self.desc_time else "")

    @property
    def bucket_count(self) -> int:
        strategy = self.strategy()
        return (strategy.bucket_count() or 1) if strategy.salted else 1


@dataclass
class Design:
    """One scored-to-be design: the main table and its index tables, each a KeySchema + its TOML."""

    name: str
    shape: Shape
    schema: KeySchema
    toml: str
    split_keys: list[bytes]
    indexes: list[tuple[Pattern, KeySchema, str]] = field(default_factory=list)  # (pattern served, schema, TOML)
    hand: bool = False  # a design the user gave (--compare), not one the advisor made

    @property
    def index_tables(self) -> list[KeySchema]:
        """The index tables, each once: patterns read in the same order share one."""
        out: list[KeySchema] = []
        for _p, s, _ in self.indexes:
            if not any(s is t for t in out):
                out.append(s)
        return out

    def index_table(self, pattern: str) -> int:
        """Which of :attr:`index_tables` serves ``pattern``."""
        schema = next(s for p, s, _ in self.indexes if p.name == pattern)
        return next(i for i, t in enumerate(self.index_tables) if t is schema)

    @property
    def label(self) -> str:
        text = self.shape.label
        for s in self.index_tables:
            salt = f"{s.prefix.name} {s.prefix.count()}({', '.join(s.hash_fields)}) | " if s.prefix.salted else ""
            text += f" + index({salt}{', '.join(s.field_names)})"
        return text


@dataclass(frozen=True)
class Pruned:
    """A design left out of the search, and why."""

    label: str
    reason: str


def pattern_order(p: Pattern, spec: AdviseSpec) -> tuple[str, ...] | None:
    """The key order that serves ``p`` best: its fields, the time when it reads by time, the ids."""
    if p.kind == "scan":
        return None
    order = list(p.fields)
    t = spec.time_field
    if t and t not in order and (p.kind in ("window", "latest") or not p.fields):
        order.append(t)
    order += [f for f in spec.id_fields if f not in order]
    return tuple(order)


def served_by(order: tuple[str, ...], p: Pattern, time_field: str | None) -> bool:
    """Whether a key in ``order`` answers ``p`` with a range of its own (no full scan)."""
    if p.kind == "scan":
        return True
    given = set(p.fields)
    lead = order[: len(given)]
    if set(lead) != given:
        return False
    if p.kind in ("window", "latest") and not p.fields:
        return bool(order) and order[0] == time_field
    return True


def _separator(sample: Sample) -> str:
    for sep in SEPARATORS:
        if not any(sep in v for n, t in sample.types.items() if t == "string" for v in sample.columns[n][:5000]):
            return sep
    return "\u0001"


def _field_toml(name: str, kind: str, desc: bool, sample: Sample) -> str:
    lines = ["[[key.fields]]", f"name = {json.dumps(name)}", f"type = {json.dumps(kind)}"]
    if kind == "int64":
        col = sample.columns[name]
        if len(col) and int(col.min()) >= 0:
            lines.append('encoding = "hbase"')  # non-negative: Bytes.toBytes(long), 8 bytes, sorts right
    if desc:
        lines.append('order = "desc"')
    return "\n".join(lines)


def _toml(name: str, shape: Shape, sample: Sample, spec: AdviseSpec, splits: list[bytes] | None, regions: int) -> str:
    sep = _separator(sample)
    out = [
        "[table]",
        f"name = {json.dumps(name)}",
        "[[table.families]]",
        'name = "d"',
        "",
        "[key]",
        f"separator = {json.dumps(sep)}",
    ]
    strategy = shape.strategy()
    if strategy.salted:
        options = [f"strategy = {json.dumps(shape.prefix)}"]
        if shape.buckets and strategy.count_option in type(strategy).options:
            options.append(f"{strategy.count_option} = {shape.buckets}")
        out.append("prefix = { " + ", ".join(options) + " }")
        out.append(f"hash_fields = {json.dumps(list(shape.hash_fields))}")
    timed = shape.order[-1] if shape.bucket_ms else spec.time_field
    for f in shape.order:
        out += ["", _field_toml(f, sample.types[f], shape.desc_time and f == timed, sample)]
    if strategy.salted:
        out += ["", "[splits]", 'algorithm = "prefix"', f"regions = {min(regions, shape.bucket_count)}"]
    elif splits:
        out += ["", "[splits]", 'algorithm = "explicit"', "keys = [" + ", ".join(json.dumps(to_string_binary(k)) for k in splits) + "]"]
    if shape.bucket_ms:
        b, t = shape.order[-1], spec.time_field
        out = [
            f"# Time bucketing (OpenTSDB's base-hour row): one row per {', '.join(shape.order[:-1])} and {b}.",
            f"# The writer sets {b} = {t} - {t} % {shape.bucket_ms} (a key field is a value, not a function of {t}),",
            f"# writes each event to the qualifier of its offset ({t} - {b}, 4 bytes) and, once a bucket",
            "# is closed, rewrites its cells as one cell (compaction); advise scored it so.",
        ] + out
    return "\n".join(out) + "\n"


def build_schema(name: str, shape: Shape, sample: Sample, spec: AdviseSpec, first_half: int) -> tuple[KeySchema, str, list[bytes]]:
    """The KeySchema of ``shape`` (loaded from its TOML), its TOML, and its split keys."""
    regions = 2 * spec.servers
    splits: list[bytes] | None = None
    if not shape.salted and regions > 1:
        bare = KeySchema.from_dict(tomllib.loads(_toml(name, shape, sample, spec, None, regions)), source=f"<advise {name}>")
        cols = {f: _head(sample.columns[f], first_half) for f in shape.order}
        splits = sample_splits(bare.encode_many(cols), regions)
    text = _toml(name, shape, sample, spec, splits, regions)
    schema = KeySchema.from_dict(tomllib.loads(text), source=f"<advise {name}>")
    return schema, text, schema.split_keys()


def _head(col: Any, n: int) -> Any:
    return col[:n]  # type: ignore[index]


def designs(spec: AdviseSpec, sample: Sample, max_designs: int = DEFAULT_MAX_DESIGNS) -> tuple[list[Design], list[Pruned]]:
    """The candidate designs for ``spec`` on ``sample`` (at most ``max_designs``), and the pruned."""
    pruned: list[Pruned] = []
    orders: list[tuple[str, ...]] = []
    for p in spec.patterns:
        o = pattern_order(p, spec)
        if o is not None and o not in orders:
            orders.append(o)
    ids = tuple(spec.id_fields)
    if ids not in orders:
        orders.append(ids)
    reads_time = any(p.kind in ("window", "latest") for p in spec.patterns)
    s = spec.servers
    shapes: list[Shape] = _bucketed(spec, sample, pruned)
    for o in orders:
        times = [False, True] if reads_time and spec.time_field in o else [False]
        if not reads_time and spec.time_field in o:
            pruned.append(Pruned(" + ".join(o) + " [time desc]", "no pattern reads by time, so reversing it changes nothing a read sees"))
        lead = (o[0],)
        for desc in times:
            shapes.append(Shape(o, desc_time=desc))
            for b in sorted({s, 2 * s, 4 * s}):
                if b >= 2:
                    shapes.append(Shape(o, SALT, b, lead, desc))
            for name in HASHES:
                cls = REGISTRY[name]
                shapes.append(Shape(o, name, cls.defaults.get(cls.count_option, 0), lead, desc))
            if set(ids) != set(lead):
                shapes.append(Shape(o, SALT, max(2, 2 * s), ids, desc))
    t = spec.time_field
    if t is not None and t in sample.columns and not any(o[0] == t for o in orders):
        # The key most logs start with, the event time first, as teams write it (no prefix):
        # scored like any other, it shows what leading with the time costs the reads by field
        # (a full scan each, or an index table per pattern) and the writes (the newest region).
        shapes.append(Shape((t, *[f for f in ids if f != t])))

    # Under a tight --max-designs the plainer designs go first: every order and time direction
    # unsalted, then salted by the servers, then the wider and the identity-wide salts.
    def priority(sh: Shape) -> int:
        if sh.bucket_ms:
            return 1 if sh.salted else 0
        if not sh.salted:
            return 0
        if not sh.counted:
            return 3 + 2 * HASHES.index(sh.prefix)
        if sh.hash_fields != ids:
            return {s: 1, 2 * s: 2}.get(sh.buckets, 4)
        return 6

    shapes.sort(key=priority)
    first_half = max(1, sample.rows // 2)
    out: list[Design] = []
    for i, shape in enumerate(shapes):
        if len(out) >= max_designs:
            pruned.append(Pruned(shape.label, f"past the search bound of {max_designs} designs (--max-designs)"))
            continue
        name = f"d{i + 1:02d}"
        schema, text, splits = build_schema(name, shape, sample, spec, first_half)
        out.append(Design(name, shape, schema, text, splits))
        # A bucketed design reads what its order does not serve from its packed rows (no index table).
        unserved = [] if shape.bucket_ms else [p for p in spec.patterns if not served_by(shape.order, p, spec.time_field)]
        if unserved and len(out) < max_designs:
            idx: list[tuple[Pattern, KeySchema, str]] = []
            made: dict[Shape, tuple[KeySchema, str]] = {}  # patterns read in one order share its index table
            for p in unserved:
                o = pattern_order(p, spec)
                assert o is not None
                ishape = Shape(o, desc_time=p.kind in ("window", "latest"))
                if ishape not in made:
                    ischema, itext, _ = build_schema(f"{name}_idx{len(made) + 1}", ishape, sample, spec, first_half)
                    made[ishape] = (ischema, itext)
                idx.append((p, *made[ishape]))
            out.append(Design(f"{name}i", shape, schema, text, splits, idx))
            # An index table led by a field that grows with time (the event time, an increasing
            # id) writes every index row to its newest region: the same index salted by the
            # servers over that field is scored beside it (a get still reads one bucket).
            sequential = [o for o in made if _grows(sample, o.order[0], spec.time_field)]
            if sequential and len(out) < max_designs:
                salted: dict[Shape, tuple[KeySchema, str]] = {}
                for ishape, built in made.items():
                    if ishape in sequential:
                        sshape = Shape(ishape.order, SALT, max(2, 2 * s), (ishape.order[0],), ishape.desc_time)
                        ischema, itext, _ = build_schema(f"{name}_sidx{len(salted) + 1}", sshape, sample, spec, first_half)
                        salted[ishape] = (ischema, itext)
                    else:
                        salted[ishape] = built
                sidx = [(p, *salted[next(k for k, v in made.items() if v[0] is ischema)]) for p, ischema, _ in idx]
                out.append(Design(f"{name}s", shape, schema, text, splits, sidx))
    return out, pruned


def _grows(sample: Sample, name: str, time_field: str | None) -> bool:
    """Whether ``name``'s values grow with the write order (the event time itself, or nine in ten
    consecutive records in non-decreasing order: an increasing id)."""
    if name == time_field:
        return True
    col = sample.columns.get(name)
    if not isinstance(col, np.ndarray) or col.dtype.kind not in "iuf" or len(col) < 2:
        return False
    return float(np.mean(col[1:] >= col[:-1])) >= 0.9


def _bucketed(spec: AdviseSpec, sample: Sample, pruned: list[Pruned]) -> list[Shape]:
    """Time-bucketed shapes for the entities the window and latest patterns read by time
    (:mod:`.timebucket`), unsalted and salted by the servers; the bucket column is added to the
    sample. What cannot be bucketed goes to ``pruned`` with the reason."""
    t = spec.time_field
    timed = [p for p in spec.patterns if p.kind in ("window", "latest")]
    if t is None or not timed:
        return []
    entities: list[tuple[str, ...]] = []
    for p in timed:
        if p.fields and p.fields not in entities:
            entities.append(p.fields)
    if not entities:
        pruned.append(Pruned(f"time bucketing of {t}", "every read by time spans all entities: a bucket row per entity serves none of them"))
        return []
    out: list[Shape] = []
    for entity in entities:
        chosen = choose_bucket(spec, sample, entity)
        if not isinstance(chosen, Bucket):
            pruned.append(Pruned(f"{' + '.join(entity)} + {t} bucket", chosen))
            continue
        field = add_bucket_column(sample, t, chosen)
        newest = any(p.kind == "latest" and set(p.fields) == set(entity) for p in timed)
        order = (*entity, field)
        out.append(Shape(order, desc_time=newest, bucket_ms=chosen.ms))
        if spec.servers >= 2:
            out.append(Shape(order, SALT, spec.servers, (entity[0],), newest, chosen.ms))
    return out
