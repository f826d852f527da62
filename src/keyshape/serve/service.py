"""``keyshape serve`` as one object: the history file, the poller thread and the web server
(uvicorn serving ``serve.app``), started and stopped together; and ``serve_once`` for CI.

Binds loopback by default; any other address needs a token (``check_bind``), or a reverse proxy
in front that does the authentication (then bind loopback and let the proxy reach it).
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from keyshape.errors import BadInput, KeyshapeError
from keyshape.schema import KeySchema
from keyshape.serve.alerts import SEVERITY, Rule, evaluate
from keyshape.serve.app import make_app
from keyshape.serve.history import History
from keyshape.serve.poller import Poller
from keyshape.store.base import Store

__all__ = ["ServeOptions", "Service", "alerts", "check_bind", "load_schemas", "serve_once"]

DEFAULT_BIND = "127.0.0.1:8080"


def check_bind(bind: str, token: str | None) -> tuple[str, int]:
    """``HOST:PORT`` split and checked: a non-loopback host needs a token."""
    host, sep, port_text = bind.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise BadInput(f"--bind {bind!r}: give HOST:PORT, e.g. {DEFAULT_BIND}")
    if host != "localhost":
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback and not token:
            raise BadInput(
                f"--bind {bind!r} is reachable from other machines: give --token TOKEN (clients send it), "
                f"or bind {DEFAULT_BIND} behind a reverse proxy that authenticates"
            )
    return host, int(port_text)


def load_schemas(folder: str | Path | None) -> dict[str, KeySchema]:
    """Every ``*.toml`` key schema in ``folder``, by its table's full name (``ns:name``) and by
    its plain name in the default namespace."""
    if folder is None:
        return {}
    path = Path(folder)
    if not path.is_dir():
        raise BadInput(f"--schemas {str(folder)!r} is not a folder: give the folder that holds your key schemas (*.toml)")
    out: dict[str, KeySchema] = {}
    for file in sorted(path.glob("*.toml")):
        schema = KeySchema.load(file)
        out[schema.table.full_name] = schema
        if schema.table.full_name.startswith("default:"):
            out[schema.table.full_name.removeprefix("default:")] = schema
    return out


@dataclass
class ServeOptions:
    """What ``keyshape serve`` was given."""

    open_store: Callable[[], Store]
    db: str = "keyshape-serve.db"
    tables: Sequence[str] = ()
    schemas: dict[str, KeySchema] = field(default_factory=dict)
    bind: str = DEFAULT_BIND
    interval: float = 60.0
    token: str | None = None
    alert_rules: Sequence[Rule] = ()


class Service:
    """The running service. ``start()`` returns once the web server listens (``port`` is then
    the real one, also when 0 asked for a free one); ``stop()`` ends both threads and keeps the
    history file."""

    def __init__(self, options: ServeOptions) -> None:
        self.options = options
        self.host, self.port = check_bind(options.bind, options.token)
        self.history = History(options.db)
        self.poller = Poller(options.open_store, self.history, options.tables, options.schemas, options.interval)
        self.app = make_app(self.poller, self.history, options.token, options.alert_rules)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._server: Any = None

    def start(self, timeout: float = 30.0) -> Service:
        import uvicorn

        config = uvicorn.Config(self.app, host=self.host, port=self.port, log_level="warning", access_log=False, lifespan="off")
        self._server = uvicorn.Server(config)
        self._threads = [
            threading.Thread(target=self.poller.run, args=(self._stop,), name="keyshape-serve-poller", daemon=True),
            threading.Thread(target=self._server.run, name="keyshape-serve-web", daemon=True),
        ]
        for t in self._threads:
            t.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._threads[1].is_alive():
                raise KeyshapeError(f"cannot listen on {self.host}:{self.port} (in use? give another --bind)")
            if time.monotonic() > deadline:
                raise KeyshapeError(f"the web server did not start on {self.host}:{self.port} in {timeout:.0f} s")
            time.sleep(0.05)
        sockets = [s for server in self._server.servers for s in server.sockets]
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        return self

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def wait(self) -> None:
        """Until interrupted (Ctrl-C) or the web server ends."""
        try:
            while self._threads and self._threads[1].is_alive():
                self._threads[1].join(0.5)
        except KeyboardInterrupt:
            pass

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.should_exit = True
        for t in self._threads:
            t.join(timeout=30)
        self.history.close()


def alerts(verdicts: Sequence[dict[str, Any]], fail_on: str | None = None, max_share: float | None = None, rules: Sequence[Rule] = ()) -> list[str]:
    """The alert lines of ``serve --once``: tables whose verdict is ``fail_on`` or worse
    ("skewed" or "hotspot"), whose busiest region takes more than ``max_share`` of the writes,
    or on which a ``--config`` rule fires."""
    out = []
    for v in verdicts:
        if fail_on is not None and SEVERITY.get(str(v.get("verdict")), 0) >= SEVERITY[fail_on]:
            out.append(f"{v['table']}: {v['verdict']}")
        share = float(v.get("busiest_region_share") or 0.0)
        if max_share is not None and share > max_share:
            out.append(f"{v['table']}: busiest region takes {100 * share:.0f}% of the writes (limit {100 * max_share:.0f}%)")
        out.extend(f'{a.table}: {a.line} [alerts."{a.rule}"]' for a in evaluate(rules, v) if a.firing)
    return out


def serve_once(options: ServeOptions, sleep: Callable[[float], None] = time.sleep) -> list[dict[str, Any]]:
    """Two polls ``interval`` seconds apart (counters give deltas only between two), recorded in
    the history like the service's, and each matching table's verdict. Raises ``StoreError`` when
    the cluster cannot be reached."""
    from keyshape.errors import StoreError

    history = History(options.db)
    poller = Poller(options.open_store, history, options.tables, options.schemas, options.interval)
    try:
        for i in range(2):
            if i:
                sleep(options.interval)
            if not poller.poll_once():
                raise StoreError(f"cannot poll the cluster: {poller.last_error}")
        out = [dict(s.verdict) or {"table": t, "verdict": "idle"} for t, s in sorted(poller.snapshot().items())]
        for v in out:  # the --config alerts of each table, firing or not
            v["alerts"] = [{"rule": a.rule, "kind": a.kind, "firing": a.firing, "line": a.line} for a in evaluate(options.alert_rules, v)]
        return out
    finally:
        if poller.store is not None:
            poller.store.close()
        history.close()
