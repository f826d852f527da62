"""Preflight of a target design on the source's real keys (``create`` and ``migrate``, issue 31).

Before a table is created or a migration copies into it: read a sample of the keys the OLD table
really holds (key-only scans of every region, the same number of keys from each, evenly spaced over
its rows, each weighted by its region's rows), decode them with the OLD schema, encode the records with the NEW one, and count how the
target's regions (its split points) would share them against how the source's regions share them
now and against the plan: what NEW's own ``[workload]`` predicts (its generated rows placed by the
same split points, as ``keyshape analyze`` would draw them), or without one the pre-split's even
share, 1/regions. A target whose busiest region takes a clearly larger share than the source's, or
than the plan's (1.25x it, and twice the even share), is warned about.

This is about where existing rows land, not about write concentration over time (``advise`` and
``analyze`` replay that); it catches a target whose split points do not fit the data (split at
quantiles of another sample, a salt over a field with few values, a leading field that the source
never varies).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from keyshape.analysis.advise.spec import AdviseError
from keyshape.errors import BadInput, KeyshapeError
from keyshape.ops.sample import row_counts, sample_table
from keyshape.schema.keyschema import KeySchema
from keyshape.schema.synthetic import generate_sample
from keyshape.store.base import Store

__all__ = ["Preflight", "preflight", "preflight_lines", "create_preflight", "busiest_share", "plan_share"]

WORSE = 1.25  # the target's busiest share over the source's (or the plan's) before it counts as worse
# A [workload] of more rows than this is not generated for the plan's share (generate_sample walks
# every row of the workload; 2M rows is a few seconds): the even share stands in, and says so.
PLAN_ROWS = 2_000_000
# Rows read to count the source's regions whole (the rest estimated from their store size, as
# analyze does): ~1 s of key-only scans on one server.
COUNT_ROWS = 500_000


@dataclass
class Preflight:
    """The busiest region's share of the sampled keys, in the source and in the target."""

    keys: int
    source_regions: int
    target_regions: int
    source_share: float
    target_share: float
    plan_share: float  # the busiest region's share the plan claims: its [workload]'s, else 1 / target regions
    undecodable: int = 0  # sampled keys the source schema does not read (left out)
    warnings: list[str] = field(default_factory=list)
    plan_basis: str = "an even pre-split"  # where plan_share comes from
    rows: int = 0  # the source's rows (counted, or estimated from store sizes past COUNT_ROWS)

    def lines(self) -> list[str]:
        """What ``create`` and ``migrate`` print."""
        head = (
            f"preflight on {self.keys:,} of the source's keys ({self.rows:,} rows): "
            f"the busiest of the target's {self.target_regions} regions would hold "
            f"{self.target_share:.0%} of them (source: {self.source_share:.0%} of {self.source_regions} regions; "
            f"plan: {self.plan_share:.0%}, {self.plan_basis})"
        )
        return [head] + [f"warning: {w}" for w in self.warnings]


def busiest_share(keys: list[bytes], split_keys: list[bytes], weights: list[float] | None = None) -> float:
    """The largest share of ``keys`` (each counted by its weight, default 1) one region between
    ``split_keys`` holds."""
    if not keys:
        return 0.0
    bounds = sorted(split_keys)
    counts = [0.0] * (len(bounds) + 1)
    for k, w in zip(keys, weights if weights is not None else [1.0] * len(keys)):
        counts[bisect.bisect_right(bounds, k)] += w
    total = sum(counts)
    return max(counts) / total if total else 0.0


def plan_share(target: KeySchema, split_keys: list[bytes], sample: int = 20_000) -> tuple[float, str]:
    """The busiest region's share the target's plan claims, and where it comes from: ``sample``
    rows of its ``[workload]`` (spread over the whole workload) placed by ``split_keys``, or
    1/regions (an even pre-split) when it has no ``[workload]`` or one too large to generate."""
    even = 1.0 / (len(split_keys) + 1)
    wl = target.workload
    if wl is None:
        return even, "an even pre-split"
    if wl.rows > PLAN_ROWS:
        return even, f"an even pre-split (its [workload] of {wl.rows:,} rows is not generated here)"
    keys: list[bytes] = []
    for chunk in generate_sample(target, min(sample, wl.rows), seed=0):  # load and analyze default to seed 0
        keys += target.encode_many({f: chunk[f] for f in target.field_names})
    return busiest_share(keys, split_keys), "by its [workload]"


def preflight(store: Store, source_table: str, source: KeySchema, target: KeySchema, sample: int = 20_000) -> Preflight:
    """Spread of ``source_table``'s keys (read through ``store``, decoded by ``source``) under
    ``target``'s split points, beside the source's own regions; see the module docstring.

    Every region gives the same number of keys, evenly spaced over its rows
    (:func:`keyshape.ops.sample.sample_table`: small regions read whole, large ones thinned or
    probed across their key range), and each key stands for its region's rows / keys sampled: a
    region holding most of the rows weighs most, however few keys it gave."""
    regions = sorted(store.regions(source_table), key=lambda r: r.start)
    per = max(1, sample // max(1, len(regions)))
    drawn = sample_table(store, source_table, per, count_rows=COUNT_ROWS)
    rows = [c.rows for c in row_counts(drawn).regions]
    missing = [f for f in target.field_names if f not in source.field_names]
    if missing:
        raise AdviseError(
            f"preflight: the target's key field {missing[0]!r} is not a field of the source's key; the keys alone cannot place the rows"
        )
    old: list[bytes] = []
    new: list[bytes] = []
    weights: list[float] = []
    first = ""
    sampled = 0
    for region, n in zip(drawn.regions, rows):
        sampled += len(region.keys)
        weight = n / len(region.keys) if region.keys else 0.0
        for k in region.keys:
            try:
                record = source.decode(k, verify=False)
            except (KeyshapeError, ValueError) as exc:  # migrate rejects such rows to its file; not placed here
                first = first or str(exc)
                continue
            old.append(k)
            new.append(target.encode({f: record[f] for f in target.field_names}))
            weights.append(weight)
    if sampled and not old:
        raise AdviseError(
            f"preflight: none of the {sampled:,} sampled keys of {source_table} decodes with the source schema {source.source} "
            f"(first: {first}); give the schema its rows were written with"
        )
    undecodable = sampled - len(old)
    target_splits = target.split_keys()
    planned, basis = plan_share(target, target_splits, sample)
    total = sum(rows)
    result = Preflight(
        keys=len(old),
        source_regions=len(drawn.regions),
        target_regions=len(target_splits) + 1,
        source_share=max(rows) / total if total else 0.0,
        target_share=busiest_share(new, target_splits, weights),
        plan_share=planned,
        undecodable=undecodable,
        plan_basis=basis,
        rows=total,
    )
    even = 1.0 / result.target_regions
    if result.keys and result.target_share > WORSE * result.source_share and result.target_regions >= result.source_regions:
        result.warnings.append(
            f"the target spreads the existing rows worse than the source: its busiest region holds {result.target_share:.0%} "
            f"vs {result.source_share:.0%}; check its split points or prefix against the data"
        )
    # Worse than planned: clearly above the plan's share, and above twice the even share (a plan
    # claiming 6% of 16 regions is not contradicted by 7%).
    if result.keys and result.target_share > max(WORSE * result.plan_share, 2 * even):
        result.warnings.append(
            f"the target's busiest region holds {result.target_share:.0%} of the rows where its {result.target_regions} pre-split regions "
            f"plan {result.plan_share:.0%} ({basis}); split at the data's quantiles (keyshape split-plan) or salt the leading field"
        )
    if undecodable:
        result.warnings.append(
            f"{undecodable:,} of the {sampled:,} sampled keys do not decode with the source schema and are left out; a copy rejects such rows"
        )
    return result


def preflight_lines(store: Store, source: KeySchema, target: KeySchema) -> list[str]:
    """What ``migrate`` prints before it copies: :meth:`Preflight.lines`, or one line saying why
    the preflight could not run (it never stops a migration)."""
    try:
        return preflight(store, source.table.full_name, source, target).lines()
    except (KeyshapeError, ValueError) as exc:
        return [f"preflight skipped: {exc}"]


def create_preflight(store: Store, source: KeySchema, target: KeySchema, sample: int = 20_000) -> Preflight:
    """``create NEW --from OLD``: :func:`preflight`, asked for, so a source that cannot be read is
    an error (one line: what is wrong, how to fix it) rather than a skipped preflight."""
    table = source.table.full_name
    if not store.table_exists(table):
        raise BadInput(
            f"--from: the source table {table} (named in {source.source}) does not exist; give the schema of the table NEW's rows come from"
        )
    return preflight(store, table, source, target, sample)
