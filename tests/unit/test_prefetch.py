"""keyshape.core.prefetch: order, errors where they happened, early stop; and the analyzer gives
the same result with the background producer as without it."""

from __future__ import annotations

import threading

import pytest

from keyshape.core.prefetch import prefetch


def test_items_in_order_and_errors_at_their_place():
    assert list(prefetch(iter(range(50)), depth=2)) == list(range(50))

    def broken():
        yield 1
        yield 2
        raise ValueError("chunk 3 is bad")

    got = []
    with pytest.raises(ValueError, match="chunk 3 is bad"):
        for x in prefetch(broken()):
            got.append(x)
    assert got == [1, 2]


def test_closing_early_stops_the_producer():
    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield i
            i += 1

    gen = prefetch(endless(), depth=2)
    assert [next(gen) for _ in range(3)] == [0, 1, 2]
    gen.close()
    assert not any(t.name == "keyshape-prefetch" and t.is_alive() for t in threading.enumerate())
    assert len(produced) <= 3 + 2 + 1  # at most depth items ahead, plus the one in hand


def test_analyze_schema_same_result_with_and_without_the_thread(monkeypatch):
    from keyshape.analysis import designs

    with_thread = designs.analyze_schema("examples/orders.toml", 30_000).to_dict()
    monkeypatch.setattr(designs, "prefetch", lambda items, depth=2: items)
    without = designs.analyze_schema("examples/orders.toml", 30_000).to_dict()
    assert with_thread == without
