"""Batch-level merging of sorted runs (keyshape.read.runs) against sorting everything at once."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from keyshape.read.runs import Run, merge_runs

keys = st.binary(max_size=4)


def as_run(rows: list[tuple[bytes, bytes, int]]) -> Run:
    return [r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]


def rows_of(chunks) -> list[tuple[bytes, bytes, int]]:
    return [row for originals, keys, values in chunks for row in zip(originals, keys, values)]


def fetchers(streams: list[list[tuple[bytes, bytes, int]]], sizes: list[int], reverse: bool):
    out = []
    for stream, size in zip(streams, sizes):
        ordered = sorted(stream, reverse=reverse)
        chunks = [ordered[i : i + size] for i in range(0, len(ordered), size)]

        def fetch(chunks=chunks):
            return as_run(chunks.pop(0)) if chunks else None

        out.append(fetch)
    return out


@given(st.lists(st.lists(keys, max_size=40), min_size=1, max_size=8), st.data(), st.booleans())
def test_merge_runs_equals_sorting_everything(originals, data, reverse):
    # stored keys are unique across streams (bucket byte + index), originals may repeat (a random
    # salt stores one original in several buckets): equal originals go in stored-key order
    streams = [[(o, bytes([b]) + o + b"%d" % i, i) for i, o in enumerate(stream)] for b, stream in enumerate(originals)]
    sizes = [data.draw(st.integers(1, 12)) for _ in streams]
    merged = rows_of(merge_runs(fetchers(streams, sizes, reverse), reverse))
    assert merged == sorted((row for s in streams for row in s), reverse=reverse)


@given(st.lists(st.lists(keys, max_size=40, unique=True), min_size=1, max_size=8), st.data(), st.booleans())
def test_merge_runs_of_unique_originals_sorts_by_them_alone(originals, data, reverse):
    seen: set[bytes] = set()
    unique = []
    for stream in originals:
        unique.append([o for o in stream if o not in seen])
        seen.update(stream)
    streams = [[(o, bytes([b]) + o, i) for i, o in enumerate(stream)] for b, stream in enumerate(unique)]
    sizes = [data.draw(st.integers(1, 12)) for _ in streams]
    merged = rows_of(merge_runs(fetchers(streams, sizes, reverse), reverse, unique=True))
    assert merged == sorted((row for s in streams for row in s), reverse=reverse)


def test_empty_runs_from_filtering_are_skipped():
    batches = [as_run([(b"a", b"0a", 1)]), as_run([]), as_run([(b"c", b"0c", 2)]), None]
    other = [as_run([(b"b", b"1b", 3)]), None]
    merged = [r[0] for r in rows_of(merge_runs([lambda: batches.pop(0), lambda: other.pop(0)]))]
    assert merged == [b"a", b"b", b"c"]
