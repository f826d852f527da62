"""Relieve a live table now: split its biggest regions at keys taken from its own rows.

``plan_splits`` gives every region a number of pieces (``target_regions``: one more piece at a
time to the region whose pieces are biggest; ``max_region_mb``: enough pieces to bring each under
the size) and cuts it at equal-count quantiles of the keys sampled inside it
(:func:`keyshape.ops.sample.sample_table`), so each daughter gets about the same rows. With a
salted schema a cut snaps to the nearest bucket start inside the region, so no region is left
without a whole bucket; a region inside one bucket is not cut unless ``partial_buckets``.

``apply_plan`` performs the cuts through the store's Admin API (``Store.split_region``: split at an
explicit key, wait for the daughters) in rounds of a balanced tree per region (7 cuts: 3 rounds),
then reads the boundaries back and checks they are exactly the old ones plus the planned keys.
"""

from __future__ import annotations

import bisect
import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

from keyshape.core.hbytes import to_string_binary
from keyshape.core.splits import shell_quote
from keyshape.errors import BadInput, StoreError
from keyshape.ops.sample import TableSample, region_estimates
from keyshape.schema import KeySchema
from keyshape.store.base import RegionInfo, Store, check_regions

__all__ = ["PlannedSplit", "SplitPlan", "apply_plan", "plan_splits"]


@dataclass(frozen=True)
class PlannedSplit:
    """Cut region ``region`` (its index before any split, from ``start`` to ``end`` exclusive) at
    ``key``."""

    region: int
    start: bytes
    end: bytes
    key: bytes


@dataclass
class SplitPlan:
    """The cuts :func:`plan_splits` proposes for ``table``: ``boundaries``, the table's split keys
    when planned (:func:`apply_plan` refuses a table that changed since); ``splits``, one
    :class:`PlannedSplit` per cut; ``notes``, what the plan could not do and why."""

    table: str
    boundaries: list[bytes]
    splits: list[PlannedSplit]
    notes: list[str] = field(default_factory=list)

    @property
    def keys(self) -> list[bytes]:
        return sorted(s.key for s in self.splits)

    def shell_lines(self) -> list[str]:
        """HBase shell statements, one per split: ``split 'ns:t', 'key'``."""
        return [f"split '{self.table}', {shell_quote(k)}" for k in self.keys]


def _pieces(weights: Sequence[float], capacity: Sequence[int], target_regions: int) -> list[int]:
    pieces = [1] * len(weights)
    for _ in range(max(target_regions - len(weights), 0)):
        best = max((i for i in range(len(weights)) if pieces[i] < capacity[i]), key=lambda i: weights[i] / pieces[i], default=None)
        if best is None:
            break
        pieces[best] += 1
    return pieces


def _cuts(keys: list[bytes], pieces: int, start: bytes, end: bytes, buckets: list[bytes] | None) -> list[bytes]:
    """``pieces - 1`` cut keys at equal-count quantiles of ``keys`` (sorted), inside the region,
    snapped to bucket starts when ``buckets`` is given."""
    n = len(keys)
    out: list[bytes] = []
    for i in range(1, pieces):
        key = keys[i * n // pieces]
        if buckets is not None:
            # the bucket start nearest (in sampled rows) to the quantile
            key = min(buckets, key=lambda b: abs(bisect.bisect_left(keys, b) - i * n // pieces))
        if key > start and (not end or key < end) and key not in out:
            out.append(key)
    return sorted(out)


def plan_splits(
    sample: TableSample,
    *,
    target_regions: int | None = None,
    max_region_mb: float | None = None,
    schema: KeySchema | None = None,
    partial_buckets: bool = False,
) -> SplitPlan:
    """Split points for the biggest regions of a sampled table (see the module docstring).

    - ``sample``: the table's regions and their sampled keys (:func:`keyshape.ops.sample.sample_table`).
    - Give exactly one of ``target_regions`` and ``max_region_mb``.
    - ``schema``: the table's key schema; with a salted one, cuts snap to bucket starts.
    - ``partial_buckets``: cut a region that lies inside one bucket too.

    KeyshapeError when no region can be cut (e.g. a table with one row)."""
    if (target_regions is None) == (max_region_mb is None):
        raise BadInput("give exactly one of --target-regions N and --max-region-mb M")
    regions = sample.regions
    if target_regions is not None and target_regions <= len(regions):
        raise BadInput(f"table {sample.table!r} already has {len(regions)} region(s); ask for more with --target-regions (got {target_regions})")
    distinct = [sorted(set(r.keys)) for r in regions]
    if sum(len(d) for d in distinct) < 2:
        raise BadInput(f"table {sample.table!r} holds {sum(len(d) for d in distinct)} row(s): there is no key to split at; load data first")
    estimates, _ = region_estimates(sample)
    all_buckets = schema.buckets() if schema is not None else None
    notes: list[str] = []
    capacity: list[int] = []
    bucket_sets: list[list[bytes] | None] = []
    for r, keys in zip(regions, distinct):
        inside = None
        if all_buckets is not None and not partial_buckets:
            inside = [b for b in all_buckets if b > r.region.start and (not r.region.end or b < r.region.end)]
        bucket_sets.append(inside)
        # a cut needs a key above the region's start: at most len(keys) pieces, fewer with buckets
        capacity.append(len(keys) if inside is None else len(inside) + 1)
    if max_region_mb is not None:
        if max_region_mb <= 0:
            raise BadInput(f"--max-region-mb must be positive, got {max_region_mb}")
        wanted = [max(math.ceil(r.region.store_size_bytes / 2**20 / max_region_mb), 1) for r in regions]
        if max(wanted) == 1:
            # Nothing is over the limit: an answer, not a failure (it said "too few distinct keys").
            largest = max(r.region.store_size_bytes for r in regions) / 2**20
            return SplitPlan(
                sample.table,
                sample.split_keys,
                [],
                [f"every region holds at most {max_region_mb:g} MiB (the largest {largest:.1f} MiB): nothing to split"],
            )
        pieces = [min(w, c) for w, c in zip(wanted, capacity)]
    else:
        pieces = _pieces(estimates, capacity, int(target_regions or 0))
    splits: list[PlannedSplit] = []
    for i, (r, keys, p, inside) in enumerate(zip(regions, distinct, pieces, bucket_sets)):
        if p < 2:
            continue
        for key in _cuts(keys, p, r.region.start, r.region.end, inside):
            splits.append(PlannedSplit(i, r.region.start, r.region.end, key))
    skipped = [i for i, (p, inside) in enumerate(zip(pieces, bucket_sets)) if inside == [] and estimates[i] == max(estimates)]
    if skipped:
        notes.append(
            f"{len(skipped)} busy region(s) lie inside one salt bucket; cutting them would "
            "leave a region without a whole bucket (pass --partial-buckets to allow it)"
        )
    if not splits:
        raise BadInput(f"no split point found for {sample.table!r}: " + (notes[0] if notes else "its regions hold too few distinct keys"))
    return SplitPlan(sample.table, sample.split_keys, splits, notes)


def _split_levels(plan: SplitPlan) -> list[list[bytes]]:
    """The planned keys in rounds: each region's cuts as a balanced binary tree (its middle cut
    in the first round, the middles of the two halves in the second...), so every round cuts
    only regions the round before made, each at most once, and n cuts of a region take
    ceil(log2(n + 1)) rounds (rounds cut in key order took up to n: each later cut fell in a
    daughter of the one before)."""
    levels: list[list[bytes]] = []

    def place(keys: list[bytes], depth: int) -> None:
        if not keys:
            return
        if len(levels) == depth:
            levels.append([])
        mid = len(keys) // 2
        levels[depth].append(keys[mid])
        place(keys[:mid], depth + 1)
        place(keys[mid + 1 :], depth + 1)

    by_region: dict[int, list[bytes]] = {}
    for s in plan.splits:
        by_region.setdefault(s.region, []).append(s.key)
    for keys in by_region.values():
        place(sorted(keys), 0)
    return [sorted(level) for level in levels]


def apply_plan(
    store: Store,
    plan: SplitPlan,
    *,
    patience: float = 300.0,
    wait: float = 3.0,
    timeout: float = 120.0,
    progress: Callable[[int, bytes], None] | None = None,
    workers: int = 4,
) -> list[RegionInfo]:
    """Split ``plan.table`` at every planned key and return its regions after checking they are
    exactly the old boundaries plus the planned keys (StoreError otherwise).

    The cuts go in rounds (``_split_levels``): a round splits regions of its own (up to
    ``workers`` at a time), so a region cut 7 times takes 3 rounds. A daughter cut again in the
    next round must first lose its parent's files: ``store.split_region`` waits for that (on
    HBase: the daughter's compaction, then a reopen, a few seconds instead of HBase's discharger
    interval, 2 minutes by default). A refused cut is retried every ``wait`` seconds for up to
    ``patience`` seconds. ``progress(n, key)`` is called (in this thread) after each split, n
    counting from 1 in the order they finish. ``timeout``: seconds one split may take (each
    ``store.split_region``)."""
    current = [r.start for r in store.regions(plan.table)[1:]]
    if current != plan.boundaries:
        raise StoreError(
            f"table {plan.table!r} has split or merged since the plan was made "
            f"({len(current) + 1} regions now, {len(plan.boundaries) + 1} then); plan again"
        )
    total = len(plan.splits)

    def split(key: bytes) -> None:
        deadline = time.monotonic() + patience
        attempt = 0
        while True:
            try:
                store.split_region(plan.table, key, timeout=timeout)
                return
            except StoreError as exc:
                attempt += 1
                if time.monotonic() > deadline or "already starts" in str(exc):
                    raise StoreError(f"split of {plan.table!r} at {to_string_binary(key)!r} failed after {attempt} attempt(s): {exc}") from exc
                time.sleep(wait)

    done = 0
    with ThreadPoolExecutor(max_workers=max(workers, 1), thread_name_prefix="split") as pool:
        for level in _split_levels(plan):
            futures = {pool.submit(split, key): key for key in level}
            failed: StoreError | None = None
            for future in as_completed(futures):
                try:
                    future.result()
                except StoreError as exc:
                    failed = failed or exc
                    continue
                done += 1
                if progress is not None:
                    progress(done, futures[future])
            if failed is not None:
                raise StoreError(f"{failed} ({done} of {total} splits done)") from failed
    regions = store.regions(plan.table)
    check_regions(regions, plan.boundaries + plan.keys, plan.table)
    return regions
