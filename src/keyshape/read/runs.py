"""Batch-level merging of sorted runs: the merged scan's inner loop.

A heap merge pays a Python-level heap operation and key call per row. Here each bucket
contributes its current batch (a sorted run) and every round emits, with one C-level ``sorted``
(Timsort merges the runs it finds), all rows up to the smallest "last row" of the runs: no row a
bucket has not fetched yet can sort before that bound, because each bucket's next rows sort after
its current batch. At least one run is used up per round, so rounds ~ batches, not rows.
Rows are ``(original key, stored key, cells)`` tuples; stored keys are unique within a scan,
so two tuples never tie up to their cells.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator
from typing import Any

__all__ = ["merge_runs", "tupler"]

Run = list[tuple[bytes, bytes, Any]]


def tupler(prefix: Any, keep: Callable[[bytes], bool] | None
           ) -> Callable[[list[tuple[bytes, Any]]], Run]:
    """A function turning a batch of ``(stored key, cells)`` into ``(original, key, cells)``
    tuples (rows ``keep`` rejects dropped), stripping the prefix by slicing; a key without the
    expected head goes through ``prefix.strip`` so it raises the schema's own error."""
    head = prefix.head_width if prefix.recoverable else 0
    width = prefix.width
    sep = prefix.separator if prefix.sep_after and prefix.separator and width else b""

    def tuples(batch: list[tuple[bytes, Any]]) -> Run:
        if keep is not None:
            batch = [kc for kc in batch if keep(kc[0])]
        if not head:
            return [(k, k, c) for k, c in batch]
        if sep:
            out = [(k[head:], k, c) for k, c in batch if k[width:head] == sep]
        else:
            out = [(k[head:], k, c) for k, c in batch if len(k) >= head]
        if len(out) != len(batch):
            for k, _ in batch:
                prefix.strip(k)  # raises for the malformed key
        return out

    return tuples


def merge_runs(fetchers: list[Callable[[], Run | None]], reverse: bool = False) -> Generator[Run, None, None]:
    """Chunks of the merged order of several sorted streams, each read through a fetcher that
    returns its next non-empty run (ascending, or descending with ``reverse``) or None at the
    end. Holds at most one run per stream plus the chunk being yielded."""
    runs: list[Run] = []
    live: list[Callable[[], Run | None]] = []
    for fetch in fetchers:
        run = _next(fetch, reverse)
        if run:
            runs.append(run)
            live.append(fetch)
    while runs:
        if len(runs) == 1:
            yield runs[0][::-1] if reverse else runs[0]
            while (run := _next(live[0], reverse)):
                yield run[::-1] if reverse else run
            return
        # runs are kept ascending; forward emits rows <= the smallest last row, reverse emits
        # rows >= the largest first row (each reverse run was flipped from descending)
        if not reverse:
            bound = min(run[-1] for run in runs)
            parts = []
            for k, run in enumerate(runs):
                cut = bisect_right(run, bound)
                if cut:
                    parts.append(run[:cut] if cut < len(run) else run)
                    runs[k] = run[cut:] if cut < len(run) else []
        else:
            bound = max(run[0] for run in runs)
            parts = []
            for k, run in enumerate(runs):
                cut = bisect_left(run, bound)
                if cut < len(run):
                    parts.append(run[cut:] if cut else run)
                    runs[k] = run[:cut] if cut else []
        chunk = parts[0] if len(parts) == 1 else sorted([row for part in parts for row in part], reverse=reverse)
        if len(parts) == 1 and reverse:
            chunk = chunk[::-1]
        yield chunk
        kept_runs, kept_live = [], []
        for run, fetch in zip(runs, live):
            if not run:
                run = _next(fetch, reverse) or []
            if run:
                kept_runs.append(run)
                kept_live.append(fetch)
        runs, live = kept_runs, kept_live


def _next(fetch: Callable[[], Run | None], reverse: bool) -> Run | None:
    run = fetch()
    while run is not None and not run:  # a batch whose rows were all filtered out
        run = fetch()
    if run and reverse:
        run.reverse()
    return run
