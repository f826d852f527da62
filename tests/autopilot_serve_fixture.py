"""serve over a store that a sequential writer writes, for the autopilot's "plan a fix" tests
(tests/unit/test_autopilot_serve.py, tests/browser/test_autopilot_serve_ui.py): serve's real
Poller polls the store (the embedded one: the same Store protocol, with request counters) on a
clock of its own, and serve's own app runs under a real uvicorn server on a free loopback port."""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from keyshape.schema import KeySchema
from keyshape.serve.app import make_app
from keyshape.serve.history import History
from keyshape.serve.poller import Poller
from keyshape.store import create_table_from_schema
from keyshape.store.embedded import EmbeddedStore

T0 = 1_767_225_600.0  # the poller's clock at its first poll
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

    store: EmbeddedStore
    schema: KeySchema

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


@contextmanager
def served(tmp_path: Path) -> Iterator[tuple[Client, History]]:
    path = tmp_path / "events.toml"
    path.write_text(SCHEMA)
    schema = KeySchema.load(path)
    store = EmbeddedStore()
    create_table_from_schema(store, schema)
    history = History(tmp_path / "serve.sqlite")
    clock = [T0]
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
    client.store, client.schema = store, schema  # for tests that write while serve watches
    try:
        yield client, history
    finally:
        client.close()
