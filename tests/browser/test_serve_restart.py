"""``keyshape serve`` while the real HBase under it crashes and comes back (the standalone
fixture's own HBase: this test kills it, so it needs the fixture-started instance, not a shared
one; marked ``hbase``): the gap is recorded with its reason, the poller reconnects, polling and
the heat map resume after the gap, and the page (real headless Chromium) shows the gap."""

from __future__ import annotations

import json
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import pytest
from chromium import Chromium, chromium_path

from keyshape.ops.live import load_workload
from keyshape.schema import KeySchema
from keyshape.serve import ServeOptions, Service, load_schemas

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read().decode())


def wait(what: str, check: Any, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def _when(value: Any, ok: Any) -> Any:
    return value if ok(value) else None


def test_a_restart_of_hbase_is_a_gap_and_polling_resumes(hbase: Any, tmp_path: Path) -> None:
    from keyshape.store import open_store

    instance = hbase.require_standalone()
    table = f"kss_restart_{uuid.uuid4().hex[:8]}"
    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "seq.toml").write_text(
        (ROOT / "examples" / "sequential.toml").read_text().replace('name = "events_seq"', f'name = "{table}"', 1)
    )
    schema = KeySchema.load(tmp_path / "schemas" / "seq.toml")
    store = open_store(hbase.url)
    store.create_table(schema.table, [])
    store.close()
    options = ServeOptions(lambda: open_store(hbase.url), str(tmp_path / "h.db"), [table], load_schemas(tmp_path / "schemas"), "127.0.0.1:0", 1.0)
    service = Service(options).start()
    try:
        writer = open_store(hbase.url)
        load_workload(writer, schema, 5_000, batch_size=1000)
        writer.close()
        wait("a poll with the writes", lambda: get(f"{service.url}/api/heatmap?table={table}&seconds=600")["max"] > 0, 30)
        polls_before = get(f"{service.url}/api/status")["polls"]

        instance.kill()  # a crash: SIGKILL of the HBase JVM (master, region server, ZooKeeper)
        killed_at = time.time()
        status = f"{service.url}/api/status"
        down = wait("the open gap", lambda: _when(get(status), lambda s: not s["connected"] and s["gaps"]), 120)
        gap = down["gaps"][-1]
        assert gap["stop"] is None and gap["start"] >= killed_at - 2 and down["last_error"], down
        instance.start(timeout=240)

        up = wait("polling again", lambda: _when(get(status), lambda s: s["connected"] and s["polls"] > polls_before), 240)
        closed = up["gaps"][-1]
        assert closed["start"] == gap["start"] and closed["stop"] is not None and closed["stop"] > closed["start"], up
        writer = open_store(hbase.url)
        load_workload(writer, schema, 5_000, batch_size=1000)  # the same rows again: puts count as writes all the same
        writer.close()
        # the heat map has polls on both sides of the gap, and the gap in it
        heat = f"{service.url}/api/heatmap?table={table}&seconds=900"
        after = wait(
            "writes counted after the gap", lambda: _when(get(heat), lambda h: h["max"] > 0 and any(t > closed["stop"] for t in h["times"])), 60
        )
        assert any(t < gap["start"] for t in after["times"]) and any(t > closed["stop"] for t in after["times"])
        assert any(g["start"] == gap["start"] and g["stop"] == closed["stop"] for g in after["gaps"])
        _page_shows_the_gap(service, table)
    finally:
        service.stop()
        if instance.master_pid() is None:  # failed between the kill and the restart: later tests need it
            instance.start(timeout=240)
        cleanup = open_store(hbase.url)
        try:
            cleanup.delete_table(table)
        finally:
            cleanup.close()


def _page_shows_the_gap(service: Service, table: str) -> None:
    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    browser = Chromium(binary)
    try:
        page = browser.page()
        page.call("Emulation.setDeviceMetricsOverride", width=1400, height=1000, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=f"{service.url}/")
        page.wait_for("Page.loadEventFired")
        page.js(f"window.ksState.ready.then(function () {{ window.ksState.select({json.dumps(table)}); return window.ksState.refresh(); }})")
        # the grey band the page draws where two buckets lie further apart than 2.5 steps
        band = page.js("""(function () {
            var h = window.ksState.heat, p = window.ksState.plot, c = document.getElementById('heat').getContext('2d');
            var step = h.step || h.interval, cw = p.width / h.times.length;
            for (var i = 1; i < h.times.length; i++) if (h.times[i] - h.times[i - 1] > 2.5 * step) {
                var d = c.getImageData(Math.round(p.left + i * cw), Math.round(p.top + p.height / 2), 1, 1).data;
                return [d[0], d[1], d[2]];
            }
            return null; })()""")
        assert band is not None and min(band) > 150, band  # light grey over the dark map
        assert not page.errors, page.errors
    finally:
        browser.close()
