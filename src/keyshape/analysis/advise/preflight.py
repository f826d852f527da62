"""Preflight of a target design on the source's real keys (``create`` and ``migrate``, issue 31).

Before a table is created or a migration copies into it: read a sample of the keys the OLD table
really holds (a key-only scan of every region, the same number from each, so the whole key range is
seen), decode them with the OLD schema, encode the records with the NEW one, and count how the
target's regions (its split points) would share them against how the source's regions share them
now and against the plan (the pre-split's even share, 1/regions). A target whose busiest region
takes a clearly larger share than the source's or than twice the plan's is warned about.

This is about where existing rows land, not about write concentration over time (``advise`` and
``analyze`` replay that); it catches a target whose split points do not fit the data (split at
quantiles of another sample, a salt over a field with few values, a leading field that the source
never varies).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from keyshape.analysis.advise.spec import AdviseError
from keyshape.errors import KeyshapeError
from keyshape.schema.keyschema import KeySchema
from keyshape.store.base import Store

__all__ = ["Preflight", "preflight", "preflight_lines", "busiest_share"]

WORSE = 1.25  # the target's busiest share over the source's before it counts as worse


@dataclass
class Preflight:
    """The busiest region's share of the sampled keys, in the source and in the target."""

    keys: int
    source_regions: int
    target_regions: int
    source_share: float
    target_share: float
    plan_share: float  # 1 / target regions: what an even pre-split promises
    undecodable: int = 0  # sampled keys the source schema does not read (left out)
    warnings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """What ``create`` and ``migrate`` print."""
        head = (
            f"preflight on {self.keys:,} of the source's keys: the busiest of the target's {self.target_regions} regions would hold "
            f"{self.target_share:.0%} of them (source: {self.source_share:.0%} of {self.source_regions} regions; plan: {self.plan_share:.0%})"
        )
        return [head] + [f"warning: {w}" for w in self.warnings]


def busiest_share(keys: list[bytes], split_keys: list[bytes]) -> float:
    """The largest share of ``keys`` one region between ``split_keys`` holds."""
    if not keys:
        return 0.0
    bounds = sorted(split_keys)
    counts = [0] * (len(bounds) + 1)
    for k in keys:
        counts[bisect.bisect_right(bounds, k)] += 1
    return max(counts) / len(keys)


def preflight(store: Store, source_table: str, source: KeySchema, target: KeySchema, sample: int = 20_000) -> Preflight:
    """Spread of ``source_table``'s keys (read through ``store``, decoded by ``source``) under
    ``target``'s split points, beside the source's own regions; see the module docstring."""
    regions = sorted(store.regions(source_table), key=lambda r: r.start)
    per = max(1, sample // max(1, len(regions)))
    old: list[bytes] = []
    for r in regions:
        old += list(store.scan_keys(source_table, r.start, r.end, limit=per))
    missing = [f for f in target.field_names if f not in source.field_names]
    if missing:
        raise AdviseError(
            f"preflight: the target's key field {missing[0]!r} is not a field of the source's key; the keys alone cannot place the rows"
        )
    new: list[bytes] = []
    readable: list[bytes] = []
    for k in old:
        try:
            record = source.decode(k, verify=False)
        except (KeyshapeError, ValueError):  # migrate rejects such rows to its file; not placed here
            continue
        readable.append(k)
        new.append(target.encode({f: record[f] for f in target.field_names}))
    if old and not readable:
        raise AdviseError(f"preflight: none of the {len(old)} sampled keys of {source_table} decodes with the source schema; is it the right schema?")
    undecodable = len(old) - len(readable)
    old = readable
    target_splits = target.split_keys()
    result = Preflight(
        keys=len(old),
        source_regions=len(regions),
        target_regions=len(target_splits) + 1,
        source_share=busiest_share(old, [r.start for r in regions if r.start]),
        target_share=busiest_share(new, target_splits),
        plan_share=1.0 / (len(target_splits) + 1),
        undecodable=undecodable,
    )
    if result.keys and result.target_share > WORSE * result.source_share and result.target_regions >= result.source_regions:
        result.warnings.append(
            f"the target spreads the existing rows worse than the source: its busiest region holds {result.target_share:.0%} "
            f"vs {result.source_share:.0%}; check its split points or prefix against the data"
        )
    if result.keys and result.target_share > 2 * result.plan_share:
        result.warnings.append(
            f"the target's busiest region holds {result.target_share:.0%} of the rows where its {result.target_regions} pre-split regions "
            f"plan {result.plan_share:.0%}; split at the data's quantiles (keyshape split-plan) or salt the leading field"
        )
    return result


def preflight_lines(store: Store, source: KeySchema, target: KeySchema) -> list[str]:
    """What ``migrate`` prints before it copies: :meth:`Preflight.lines`, or one line saying why
    the preflight could not run (it never stops a migration)."""
    try:
        return preflight(store, source.table.full_name, source, target).lines()
    except (KeyshapeError, ValueError) as exc:
        return [f"preflight skipped: {exc}"]
