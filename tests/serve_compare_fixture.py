"""serve's history of a re-key's two tables, for the before/after page's tests
(tests/unit/test_serve_compare.py, tests/browser/test_serve_compare.py): OLD ("events") takes
100 sequential writes a second in its one region; NEW ("events_new", pre-split in 4 regions on
2 servers) takes the same 100 a second spread evenly, 25 a region. serve's real Poller polls the
embedded store (the same Store protocol, with request counters) on a clock of its own, watching
only OLD until the test makes it watch NEW (as the page does)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from keyshape.schema.specs import TableSpec
from keyshape.serve.history import History
from keyshape.serve.poller import Poller
from keyshape.store.embedded import EmbeddedStore

T0 = 1_767_225_600.0  # the poller's clock at its first poll
POLLS = 8  # polls after the first one, one second apart
OLD, NEW = "events", "events_new"
OLD_RATE, NEW_REGION_RATE = 100.0, 25.0  # writes a second: OLD's one region, each of NEW's four


@contextmanager
def two_tables(tmp_path: Path, watch_new: bool = True) -> Iterator[tuple[Poller, History, list[float]]]:
    """The poller (polled ``POLLS`` + 1 times), its history and its clock (``[now]``)."""
    store = EmbeddedStore(servers=2)
    store.create_table(TableSpec(OLD))
    store.create_table(TableSpec(NEW), [b"\x40", b"\x80", b"\xc0"])
    history = History(tmp_path / "serve.sqlite")
    clock = [T0]
    poller = Poller(lambda: store, history, [OLD, NEW] if watch_new else [OLD], {}, 1.0, clock=lambda: clock[0], monotonic=lambda: clock[0])
    i = 0
    try:
        for _ in range(POLLS):
            assert poller.poll_once()
            for _ in range(int(OLD_RATE)):
                store.put(OLD, b"%012d" % i, {b"d:v": b"x"})  # sequential: all in the last (only) region
                store.put(NEW, bytes([(i % 4) * 0x40]) + b"%012d" % i, {b"d:v": b"x"})  # one in each region in turn
                i += 1
            clock[0] += 1.0
        assert poller.poll_once()
        yield poller, history, clock
    finally:
        history.close()
