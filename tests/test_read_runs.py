"""Batch-level merging of sorted runs (keyshape.read.runs) against sorting everything at once."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from keyshape.read.runs import merge_runs

keys = st.binary(max_size=4)


def fetchers(streams: list[list[tuple[bytes, bytes, int]]], sizes: list[int], reverse: bool):
    out = []
    for stream, size in zip(streams, sizes):
        ordered = sorted(stream, reverse=reverse)
        chunks = [ordered[i:i + size] for i in range(0, len(ordered), size)]

        def fetch(chunks=chunks):
            return list(chunks.pop(0)) if chunks else None
        out.append(fetch)
    return out


@given(st.lists(st.lists(keys, max_size=40), min_size=1, max_size=8), st.data(), st.booleans())
def test_merge_runs_equals_sorting_everything(originals, data, reverse):
    # stored keys are unique across streams (bucket byte + index), originals may repeat
    streams = [[(o, bytes([b]) + o + b"%d" % i, i) for i, o in enumerate(stream)]
               for b, stream in enumerate(originals)]
    sizes = [data.draw(st.integers(1, 12)) for _ in streams]
    merged = [row for chunk in merge_runs(fetchers(streams, sizes, reverse), reverse) for row in chunk]
    assert merged == sorted((row for s in streams for row in s), reverse=reverse)


def test_empty_runs_from_filtering_are_skipped():
    batches = [[(b"a", b"0a", 1)], [], [(b"c", b"0c", 2)], None]
    other = [[(b"b", b"1b", 3)], None]
    merged = [r[0] for chunk in merge_runs([lambda: batches.pop(0), lambda: other.pop(0)]) for r in chunk]
    assert merged == [b"a", b"b", b"c"]
