"""A real headless Chromium (Debian's package) driven over the Chrome DevTools Protocol, for the
browser tests of the HTML reports: open a file, collect console errors and uncaught exceptions,
run JavaScript, move and drag the mouse, take screenshots."""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import websocket  # websocket-client

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")


def chromium_path() -> str | None:
    """The browser binary, or None (then the browser tests skip, saying how to install it)."""
    env = os.environ.get("KEYSHAPE_CHROMIUM")
    if env:
        return env
    return next((p for p in map(shutil.which, CHROMIUM_NAMES) if p), None)


class Page:
    """One browser tab; every call waits for its reply (bounded by ``timeout`` seconds)."""

    def __init__(self, ws_url: str, timeout: float = 30.0) -> None:
        self.ws = websocket.create_connection(ws_url, timeout=timeout, suppress_origin=True)
        self.timeout = timeout
        self._ids = itertools.count(1)
        self.errors: list[str] = []
        self.events: list[dict[str, Any]] = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def _note(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        self.events.append(msg)
        if method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append(d.get("exception", {}).get("description") or d.get("text", "exception"))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
        elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
            self.errors.append(p["entry"]["text"])

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        i = next(self._ids)
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == i:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._note(msg)
        raise TimeoutError(f"{method}: no reply in {self.timeout} s")

    def wait_for(self, method: str) -> dict[str, Any]:
        for msg in self.events:
            if msg.get("method") == method:
                return msg
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            self._note(msg)
            if msg.get("method") == method:
                return msg
        raise TimeoutError(f"no {method} in {self.timeout} s")

    def open(self, path: Path, width: int = 1280, height: int = 900) -> None:
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)
        self.events.clear()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def js(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, pressed: bool = False) -> None:
        """``kind``: mouseMoved, mousePressed or mouseReleased (left button)."""
        extra: dict[str, Any] = {}
        if kind != "mouseMoved" or pressed:
            extra = {"button": "left", "buttons": 1 if kind != "mouseReleased" else 0, "clickCount": 1}
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        self.ws.close()


class Chromium:
    """A headless Chromium process with its own throw-away profile; ``page()`` opens a tab."""

    def __init__(self, binary: str, timeout: float = 60.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="keyshape-chromium-")
        self.proc = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-dev-shm-usage",
                "--remote-debugging-port=0",
                "--remote-allow-origins=*",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = self._devtools_port(timeout)

    def _devtools_port(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        assert self.proc.stderr is not None
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                # Keep draining its log, or a full pipe would stall the browser.
                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return int(m.group(1))
        self.close()
        raise RuntimeError("chromium did not start its DevTools endpoint")

    def page(self) -> Page:
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=10) as r:
            targets = json.load(r)
        tab = next(t for t in targets if t["type"] == "page")
        return Page(tab["webSocketDebuggerUrl"])

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        shutil.rmtree(self.profile, ignore_errors=True)
