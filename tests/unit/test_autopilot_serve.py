"""serve's "plan a fix" action (issue 41): ``/plan`` and ``/api/plan`` run the autopilot's dry run
on a table serve watches, from serve's own history, and show the plan page the CLI writes.

serve's real Poller polls a store (the embedded one: the same Store protocol, with request
counters) while a sequential writer writes; the app is serve's own ``make_app``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from autopilot_serve_fixture import T0, Client
from autopilot_serve_fixture import served as serving

from keyshape.serve.history import History


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Client, History]]:
    with serving(tmp_path) as got:
        yield got


def test_plan_a_fix_shows_the_autopilots_plan_for_a_hot_table(served: tuple[Client, History], monkeypatch: pytest.MonkeyPatch) -> None:
    client, history = served
    monkeypatch.setattr("keyshape.serve.plan_route.time.time", lambda: T0 + 9)  # the history's own clock
    status, text = client.get("/api/plan?table=events")
    plan = json.loads(text)
    assert status == 200, plan
    assert "error" not in plan, plan
    assert plan["diagnosis"]["verdict"] == "hotspot" and plan["current_share"] == 1.0
    assert plan["new_share"] <= 1.5 / plan["new_regions"] and "keyshape migrate" in plan["migrate_command"]
    assert Path(plan["schema_path"]).is_file() and Path(plan["schema_path"]).parent.parent.name == "keyshape-plans"
    assert plan["learned"]["write_rate"] == pytest.approx(100.0, rel=0.2)
    status, page = client.get("/plan?table=events")
    assert status == 200 and "busiest region" in page and plan["new_table"] in page


def test_plan_a_fix_says_why_not_for_an_unknown_table(served: tuple[Client, History]) -> None:
    client, _ = served
    status, text = client.get("/api/plan?table=nope")
    assert status == 404 and "no table" in json.loads(text)["error"]


def test_loadsplit_api_gives_the_replayed_effect_of_a_split_and_applies_nothing(served: tuple[Client, History]) -> None:
    """While a writer keeps appending sequential keys, serve's /api/loadsplit samples the hot
    region's recent writes and replays the best split: no relief (the newest writes all sort
    after it), said so; the table keeps its one region."""
    import threading
    import time

    client, _ = served
    stop = threading.Event()

    def write() -> None:
        i = 10_000
        while not stop.is_set():
            t = int(time.time() * 1000)
            client.store.put("events", client.schema.encode({"event_time": t, "event_id": i}), {b"d:v": b"x"}, t)
            i += 1
            time.sleep(0.002)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        time.sleep(0.5)
        status, text = client.get("/api/loadsplit?table=events&watch=1&lookback=60")
    finally:
        stop.set()
        writer.join(10)
    found = json.loads(text)
    assert status == 200, found
    assert found["writes_per_s"] > 0 and found["sampled_writes"] > 20 and found["split_key"] is not None
    assert not found["relieves"] and found["busiest_share_after"] > 0.9 and any("sequential key" in n for n in found["notes"])
    assert found["shell"][0].startswith("split 'events', ")
    assert len(client.store.regions("events")) == 1  # read-only: nothing applied
    bad, _ = client.get("/api/loadsplit?table=events&watch=0")
    assert bad == 400
