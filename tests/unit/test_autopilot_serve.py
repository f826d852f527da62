"""serve's "plan a fix" action (issue 41): ``/plan`` and ``/api/plan`` run the autopilot's dry run
on a table serve watches, from serve's own history, and show the plan page the CLI writes.

serve's real Poller polls a store (the embedded one: the same Store protocol, with request
counters) while a sequential writer writes; the app is serve's own ``make_app``."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from keyshape.schema import KeySchema
from keyshape.serve.app import make_app
from keyshape.serve.history import History
from keyshape.serve.poller import Poller
from keyshape.store import create_table_from_schema
from keyshape.store.embedded import EmbeddedStore

SCHEMA = """[table]
name = "events"
[[table.families]]
name = "d"

[key]
separator = "_"
[[key.fields]]
name = "event_time"
type = "timestamp"
encoding = "text"
[[key.fields]]
name = "event_id"
type = "int64"
encoding = "text"
width = 12
"""


class Client:
    """serve's app under a real uvicorn server on a free loopback port, asked over HTTP."""

    def __init__(self, app: object) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))  # type: ignore[arg-type]
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline
            time.sleep(0.05)

    def get(self, path: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=120) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Client, History]]:
    path = tmp_path / "events.toml"
    path.write_text(SCHEMA)
    schema = KeySchema.load(path)
    store = EmbeddedStore()
    create_table_from_schema(store, schema)
    history = History(tmp_path / "serve.sqlite")
    clock = [1_767_225_600.0]
    poller = Poller(lambda: store, history, ["events"], {"events": schema}, 1.0, clock=lambda: clock[0], monotonic=lambda: clock[0])
    i = 0
    for _ in range(8):  # a poll, then 100 sequential writes a second, each poll after them
        assert poller.poll_once()
        for _ in range(100):
            t = int(clock[0] * 1000) + 10 * (i % 100)
            store.put("events", schema.encode({"event_time": t, "event_id": i}), {b"d:v": b"x"}, t)
            i += 1
        clock[0] += 1.0
    assert poller.poll_once()
    client = Client(make_app(poller, history))
    try:
        yield client, history
    finally:
        client.close()


def test_plan_a_fix_shows_the_autopilots_plan_for_a_hot_table(served: tuple[Client, History], monkeypatch: pytest.MonkeyPatch) -> None:
    client, history = served
    monkeypatch.setattr("keyshape.serve.plan_route.time.time", lambda: 1_767_225_600.0 + 9)  # the history's own clock
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
