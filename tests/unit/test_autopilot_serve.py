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
