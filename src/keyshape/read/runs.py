"""Batch-level merging of sorted runs: the merged scan's inner loop.

A heap merge pays a Python-level heap operation and key call per row. Here each bucket
contributes its current batch (a sorted run) and every round emits, with one C-level sort
(Timsort merges the runs it finds), all rows up to the smallest "last row" of the runs: no row a
bucket has not fetched yet can sort before that bound, because each bucket's next rows sort after
its current batch. At least one run is used up per round, so rounds ~ batches, not rows.

A run is three parallel lists, ``(originals, keys, values)``: original keys (the order), stored
keys (unique within a scan; they break ties between equal originals) and the cells. Columns, not
a tuple per row: a tuple holding a cells dict stays tracked by the garbage collector for as long
as it lives, and a merged scan holds up to ~100,000 rows in flight, so row tuples were promoted
through every generation and set off full collections (a third of a merged scan's time,
measured). Lists of bytes and dicts are a handful of objects whatever their length.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator
from itertools import chain
from operator import itemgetter
from typing import Any

__all__ = ["Run", "merge_runs", "columns"]

Run = tuple[list[bytes], list[bytes], list[Any]]


def columns(prefix: Any, keep: Callable[[bytes], bool] | None
            ) -> Callable[[list[tuple[bytes, Any]]], Run]:
    """A function turning a batch of ``(stored key, cells)`` into a run ``(originals, keys,
    cells)`` (rows ``keep`` rejects dropped), stripping the prefix by slicing; a key without the
    expected head goes through ``prefix.strip`` so it raises the schema's own error."""
    head = prefix.head_width if prefix.recoverable else 0
    width = prefix.width
    sep = prefix.separator if prefix.sep_after and prefix.separator and width else b""

    def run(batch: list[tuple[bytes, Any]]) -> Run:
        if keep is not None:
            batch = [kc for kc in batch if keep(kc[0])]
        keys = [k for k, _ in batch]
        values = [c for _, c in batch]
        if not head:
            return keys, keys, values
        if sep:
            bad = any(k[width:head] != sep for k in keys)
        else:
            bad = any(len(k) < head for k in keys)
        if bad:
            for k in keys:
                prefix.strip(k)  # raises for the malformed key
        return [k[head:] for k in keys], keys, values

    return run


def merge_runs(fetchers: list[Callable[[], Run | None]], reverse: bool = False,
               unique: bool = False) -> Generator[Run, None, None]:
    """Chunks (runs) of the merged order of several sorted streams, each read through a fetcher
    that returns its next non-empty run (ascending by original then stored key, or descending
    with ``reverse``) or None at the end. Holds at most one run per stream plus the chunk being
    yielded. ``unique``: no two rows share an original key (every salt but ``random``), so a
    chunk is sorted by originals alone; otherwise equal originals are ordered by stored key."""
    runs: list[Run] = []
    live: list[Callable[[], Run | None]] = []
    for fetch in fetchers:
        run = _next(fetch, reverse)
        if run:
            runs.append(run)
            live.append(fetch)
    while runs:
        if len(runs) == 1:
            yield _flip(runs[0]) if reverse else runs[0]
            while (run := _next(live[0], reverse)):
                yield _flip(run) if reverse else run
            return
        # runs are kept ascending; forward emits rows <= the smallest last row, reverse emits
        # rows >= the largest first row (each reverse run was flipped from descending)
        # The bound is a whole row, (original, stored key): rows of equal originals are cut by
        # their stored keys, so no row goes out before one that sorts ahead of it.
        parts: list[Run] = []
        if not reverse:
            bo, bk = min((run[0][-1], run[1][-1]) for run in runs)
            for n, run in enumerate(runs):
                o = run[0]
                lo, hi = bisect_left(o, bo), bisect_right(o, bo)
                cut = bisect_right(run[1], bk, lo, hi) if hi > lo else lo
                if cut:
                    parts.append(run if cut == len(o) else _slice(run, 0, cut))
                    runs[n] = _slice(run, cut, None)
        else:
            bo, bk = max((run[0][0], run[1][0]) for run in runs)
            for n, run in enumerate(runs):
                o = run[0]
                lo, hi = bisect_left(o, bo), bisect_right(o, bo)
                cut = bisect_left(run[1], bk, lo, hi) if hi > lo else lo
                if cut < len(o):
                    parts.append(run if not cut else _slice(run, cut, None))
                    runs[n] = _slice(run, 0, cut)
        yield _merge(parts, reverse, unique)
        kept_runs, kept_live = [], []
        for run, fetch in zip(runs, live):
            if not run[0]:
                run = _next(fetch, reverse) or ([], [], [])
            if run[0]:
                kept_runs.append(run)
                kept_live.append(fetch)
        runs, live = kept_runs, kept_live


def _slice(run: Run, lo: int, hi: int | None) -> Run:
    return run[0][lo:hi], run[1][lo:hi], run[2][lo:hi]


def _flip(run: Run) -> Run:
    return run[0][::-1], run[1][::-1], run[2][::-1]


def _merge(parts: list[Run], reverse: bool, unique: bool) -> Run:
    """The rows of ``parts`` (each ascending) in one order, descending with ``reverse``."""
    if len(parts) == 1:
        return _flip(parts[0]) if reverse else parts[0]
    originals = list(chain.from_iterable(p[0] for p in parts))
    keys = list(chain.from_iterable(p[1] for p in parts))
    values = list(chain.from_iterable(p[2] for p in parts))
    order = list(range(len(originals)))
    if not unique:
        order.sort(key=keys.__getitem__, reverse=reverse)  # ties on originals by stored key
    order.sort(key=originals.__getitem__, reverse=reverse)  # stable: keeps the tie order
    pick = itemgetter(*order)  # len(order) >= 2 here, so pick(...) is a tuple
    return list(pick(originals)), list(pick(keys)), list(pick(values))


def _next(fetch: Callable[[], Run | None], reverse: bool) -> Run | None:
    run = fetch()
    while run is not None and not run[0]:  # a batch whose rows were all filtered out
        run = fetch()
    if run and reverse:
        run = _flip(run)
    return run
