"""``keyshape.analysis.designs.compare``: the loop ``keyshape compare`` runs (the CLI calls it), with a
progress phase per design."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from keyshape.analysis.designs import compare

SCHEMAS = ["examples/orders.toml", "examples/sequential.toml"]


def test_each_design_gets_its_own_phase_and_the_same_numbers_as_without() -> None:
    seen: list[tuple[str, int, int]] = []

    @contextmanager
    def phase(name: str, rows: int) -> Iterator[Callable[[int], None]]:
        done = [0]
        yield lambda n: done.__setitem__(0, n)
        seen.append((name, rows, done[0]))

    shown = compare(SCHEMAS, 1000, phase=phase, regions=4, seed=7)
    plain = compare(SCHEMAS, 1000, regions=4, seed=7)
    # one phase per design, in order, named by the file stem and told the row count; each saw every row
    assert seen == [("orders", 1000, 1000), ("sequential", 1000, 1000)]
    assert [a.name for a in shown] == ["orders", "sequential"] and [a.rows for a in shown] == [1000, 1000]
    assert [(a.verdict, a.distribution.top_share) for a in shown] == [(a.verdict, a.distribution.top_share) for a in plain]
