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
from operator import itemgetter
from typing import Any

__all__ = ["Run", "merge_runs", "columns"]

Run = tuple[list[bytes], list[bytes], list[Any]]


def columns(prefix: Any, keep: Callable[[bytes], bool] | None) -> Callable[[tuple[list[bytes], list[Any]]], Run]:
    """A function turning a scanner batch ``(stored keys, cells)`` into a run ``(originals, keys,
    cells)`` (rows ``keep`` rejects dropped), stripping the prefix by slicing; a key without the
    expected head goes through ``prefix.strip`` so it raises the schema's own error."""
    head = prefix.head_width if prefix.recoverable else 0
    width = prefix.width
    sep = prefix.separator if prefix.sep_after and prefix.separator and width else b""

    def run(batch: tuple[list[bytes], list[Any]]) -> Run:
        keys, values = batch
        if keep is not None:
            kept = [i for i, k in enumerate(keys) if keep(k)]
            if len(kept) < len(keys):
                keys, values = [keys[i] for i in kept], [values[i] for i in kept]
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


def merge_runs(fetchers: list[Callable[[], Run | None]], reverse: bool = False, unique: bool = False) -> Generator[Run, None, None]:
    """Chunks (runs) of the merged order of several sorted streams, each read through a fetcher
    that returns its next non-empty run (ascending by original then stored key, or descending
    with ``reverse``) or None at the end. Holds at most one run per stream plus the chunk being
    yielded. ``unique``: no two rows share an original key (every salt but ``random``), so a
    chunk is sorted by originals alone; otherwise equal originals are ordered by stored key.

    Each stream's run is kept whole with a read position: a round takes ``[position, cut)``
    of it and moves the position, so the rest of a run is never copied (slices kept from round
    to round were most of what the garbage collector had to trace)."""
    runs: list[Run] = []  # ascending (a reverse run is flipped once, when fetched)
    at: list[int] = []  # each run's read position
    live: list[Callable[[], Run | None]] = []
    for fetch in fetchers:
        run = _next(fetch, reverse)
        if run:
            runs.append(run)
            at.append(0)
            live.append(fetch)
    while runs:
        if len(runs) == 1:
            run, used = runs[0], at[0]
            if used:  # what is left: the tail forward, the head in reverse
                run = _slice(run, 0, len(run[0]) - used) if reverse else _slice(run, used, None)
            yield _flip(run) if reverse else run
            while run := _next(live[0], reverse):
                yield _flip(run) if reverse else run
            return
        # forward emits rows <= the smallest last row, reverse emits rows >= the largest first
        # row (of what is left). The bound is a whole row, (original, stored key): rows of equal
        # originals are cut by their stored keys, so no row goes out before one that sorts ahead.
        parts: list[tuple[Run, int, int]] = []
        if not reverse:
            bo, bk = min((run[0][-1], run[1][-1]) for run in runs)
            for n, run in enumerate(runs):
                o, pos = run[0], at[n]
                lo, hi = bisect_left(o, bo, pos), bisect_right(o, bo, pos)
                cut = bisect_right(run[1], bk, lo, hi) if hi > lo else lo
                if cut > pos:
                    parts.append((run, pos, cut))
                    at[n] = cut
        else:
            bo, bk = max((run[0][0], run[1][0]) for run in runs)
            for n, run in enumerate(runs):
                o, end = run[0], len(run[0]) - at[n]  # reverse runs are used up from their end
                lo, hi = bisect_left(o, bo, 0, end), bisect_right(o, bo, 0, end)
                cut = bisect_left(run[1], bk, lo, hi) if hi > lo else lo
                if cut < end:
                    parts.append((run, cut, end))
                    at[n] = len(o) - cut
        yield _merge(parts, reverse, unique)
        kept_runs, kept_at, kept_live = [], [], []
        for run, pos, fetch in zip(runs, at, live):
            if pos == len(run[0]):
                run, pos = _next(fetch, reverse) or ([], [], []), 0
            if run[0]:
                kept_runs.append(run)
                kept_at.append(pos)
                kept_live.append(fetch)
        runs, at, live = kept_runs, kept_at, kept_live


def _slice(run: Run, lo: int, hi: int | None) -> Run:
    return run[0][lo:hi], run[1][lo:hi], run[2][lo:hi]


def _flip(run: Run) -> Run:
    return run[0][::-1], run[1][::-1], run[2][::-1]


def _merge(parts: list[tuple[Run, int, int]], reverse: bool, unique: bool) -> Run:
    """The rows ``[lo, hi)`` of each part's run (each ascending) in one order, descending with
    ``reverse``."""
    if len(parts) == 1:
        run, lo, hi = parts[0]
        one = run if (lo, hi) == (0, len(run[0])) else _slice(run, lo, hi)
        return _flip(one) if reverse else one
    originals: list[bytes] = []
    keys: list[bytes] = []
    values: list[Any] = []
    for (o, k, v), lo, hi in parts:  # each slice is freed at once: nothing for the GC to keep
        originals += o[lo:hi]
        keys += k[lo:hi]
        values += v[lo:hi]
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
