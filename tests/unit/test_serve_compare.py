"""serve's before/after numbers of a re-key (serve.compare, issue 41) on a history serve's own
Poller filled: OLD's one region takes every write, NEW's four take a quarter each."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_compare_fixture import NEW, NEW_REGION_RATE, OLD, OLD_RATE, POLLS, T0, two_tables

from keyshape.serve.app import table_rows
from keyshape.serve.compare import compare_body, region_rate_p99
from keyshape.serve.history import History
from keyshape.serve.poller import Poller


def test_the_p99_region_rate_is_the_rate_each_region_took(tmp_path: Path) -> None:
    with two_tables(tmp_path) as (_poller, history, clock):
        p99, n = region_rate_p99(history, OLD, T0 - 1, clock[0])
        assert p99 == pytest.approx(OLD_RATE) and n == POLLS - 1  # the first stored interval has no start
        p99, n = region_rate_p99(history, NEW, T0 - 1, clock[0])
        assert p99 == pytest.approx(NEW_REGION_RATE) and n == 4 * (POLLS - 1)
        assert region_rate_p99(history, NEW, clock[0] + 10, clock[0] + 20) == (0.0, 0)  # no poll then


def test_both_sides_carry_serves_verdict_and_the_p99(tmp_path: Path) -> None:
    with two_tables(tmp_path) as (poller, history, clock):
        body = compare_body(poller, history, table_rows(poller, history), OLD, NEW, 3600, now=clock[0])
        rows = {r["table"]: r for r in table_rows(poller, history)}
        before, after = body["before"], body["after"]
        for s in (before, after):  # the same numbers as /api/tables (one place: the poller's verdict)
            row = rows[s["table"]]
            assert (s["verdict"], s["busiest_region_share"], s["busiest_server_share"]) == (
                row["verdict"],
                row["busiest_region_share"],
                row["busiest_server_share"],
            )
        assert before["verdict"] == "hotspot" and before["busiest_region_share"] == pytest.approx(1.0)
        assert after["busiest_region_share"] == pytest.approx(0.25) and after["busiest_server_share"] == pytest.approx(0.5)
        assert after["verdict"] != "hotspot"
        assert (before["p99_region_write_rate"], after["p99_region_write_rate"]) == (pytest.approx(OLD_RATE), pytest.approx(NEW_REGION_RATE))
        assert not body["added_after"] and body["watching_after"] and before["polled"] and after["polled"]
        assert before["judged_at"] == after["judged_at"] == clock[0]  # the last poll's verdicts


def test_a_new_table_outside_the_watched_patterns_is_watched_from_then_on(tmp_path: Path) -> None:
    with two_tables(tmp_path, watch_new=False) as (poller, history, clock):
        body = compare_body(poller, history, table_rows(poller, history), OLD, NEW, 3600, now=clock[0])
        assert body["added_after"] and body["after"]["verdict"] == "not judged yet" and body["after"]["rates"] == 0 and not body["after"]["polled"]
        assert not poller.watch(NEW, OLD)  # once only
        assert poller.poll_once() and NEW in poller.snapshot()  # the next poll takes NEW in
        store = poller.store
    # serve restarted on the same history: NEW is watched again while OLD is; not when OLD is not
    again = History(tmp_path / "serve.sqlite")
    try:
        assert again.watched() == {NEW: OLD}
        restarted = Poller(lambda: store, again, [OLD], {}, 1.0)  # type: ignore[arg-type, return-value]
        assert restarted.poll_once() and NEW in restarted.snapshot() and OLD in restarted.snapshot()
        narrower = Poller(lambda: store, again, ["other_*"], {}, 1.0)  # type: ignore[arg-type, return-value]
        assert NEW not in narrower.patterns
    finally:
        again.close()


def test_an_interval_across_a_gap_is_no_rate(tmp_path: Path) -> None:
    """The cluster unreachable for 30 s: the poll after it covers the gap too, so its requests over
    the frames' spacing would be a rate the regions never ran at; it is left out."""
    with two_tables(tmp_path) as (poller, history, clock):
        gap = history.open_gap(clock[0] + 0.5, "cluster unreachable")
        clock[0] += 30.0
        history.close_gap(gap, clock[0])
        poller.store.put(OLD, b"%012d" % 10**9, {b"d:v": b"x"})  # type: ignore[union-attr]
        assert poller.poll_once()
        p99, n = region_rate_p99(history, OLD, T0 - 1, clock[0])
        assert n == POLLS - 1 and p99 == pytest.approx(OLD_RATE)


def test_the_window_slides_so_a_load_just_ended_is_still_judged_on_its_polls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window of MAX_SAMPLES polls full of one region's writes, then quiet polls: the oldest
    half of the window goes and the verdict stays the load's (a window restarted from nothing
    judged the table 'idle' on its first empty polls, just after the load ended)."""
    from keyshape.schema.specs import TableSpec
    from keyshape.store.embedded import EmbeddedStore

    monkeypatch.setattr("keyshape.serve.poller.MAX_SAMPLES", 10)
    store = EmbeddedStore(servers=2)
    store.create_table(TableSpec(OLD))
    history = History(tmp_path / "serve.sqlite")
    clock = [T0]
    poller = Poller(lambda: store, history, [OLD], {}, 1.0, clock=lambda: clock[0], monotonic=lambda: clock[0])  # type: ignore[arg-type, return-value]
    try:
        i = 0
        for _ in range(10):  # the baseline poll, then writes in each of 10 intervals
            assert poller.poll_once()
            for _ in range(100):
                store.put(OLD, b"%012d" % i, {b"d:v": b"x"})
                i += 1
            clock[0] += 1.0
        for _ in range(4):  # the load has ended: the first poll counts its last interval (a full window)
            assert poller.poll_once()
            clock[0] += 1.0
        state = poller.snapshot()[OLD]
        assert len(state.heat.samples) == 5 + 3  # half the full window kept, then 3 quiet polls
        assert state.heat.samples[-1].writes.sum() == 0 and state.heat.samples[-4].writes.sum() == 100
        assert state.verdict["verdict"] == "hotspot", state.verdict
        assert state.verdict["busiest_region_share"] == pytest.approx(1.0)
    finally:
        history.close()
