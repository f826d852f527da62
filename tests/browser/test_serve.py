"""``keyshape serve`` without a cluster: the history store's roll-ups, retention and heat-map
query, the bind/token rules, the CLI's one-line refusals, and the salted-TOML fix loading back."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.errors import BadInput
from keyshape.ops.liveheat import LiveHeat
from keyshape.schema import KeySchema
from keyshape.serve import History, check_bind, matches
from keyshape.serve.history import Cell
from keyshape.serve.patterns import salted_toml

ROOT = Path(__file__).resolve().parents[2]


def test_a_poll_adds_to_every_layer_and_rollups_sum_exactly(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    base = 1_800_000_000.0  # a minute boundary (divisible by 3600)
    for i in range(5):  # five polls 10 s apart, all in the first minute
        h.record(
            "t",
            base + 10 * i,
            [Cell("r1", b"", b"m", "s1", writes=10.0 + i, reads=1.0, store_bytes=(100 + i) << 20, memstore_bytes=7 << 20, store_files=2)],
        )
    for layer in range(4):
        frames = h.frames("t", layer)
        writes = sum(float(f["writes"].sum()) for _, f in frames)
        last = frames[-1][1]
        # polls: every poll its own bucket; 1 min, 10 min, 1 h: one bucket, the sum of the polls, the last gauges
        assert (len(frames), writes) == ((5, 60.0) if layer == 0 else (1, 60.0))
        assert (int(last["store_mb"][0]), int(last["memstore_mb"][0]), int(last["store_files"][0])) == (104, 7, 2)
    h.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), st.integers(0, 10**8)), min_size=1, max_size=12))
def test_rollups_sum_each_region_over_polls_with_different_regions(tmp_path_factory: pytest.TempPathFactory, polls: list[dict[str, int]]) -> None:
    """Regions come and go between polls (splits, merges): each roll-up bucket holds, per region,
    the sum of its requests over the polls in it, exactly."""
    h = History(tmp_path_factory.mktemp("r") / "h.db")
    for i, poll in enumerate(polls):
        h.record("t", 1_800_000_000.0 + i, [Cell(name, name.encode(), b"", "s", float(w), 0.0) for name, w in poll.items()])
    want: dict[str, int] = {}
    for poll in polls:
        for name, w in poll.items():
            want[name] = want.get(name, 0) + w
    ids = dict(h._db.execute("SELECT id, name FROM regions").fetchall())
    for layer in (1, 2, 3):
        ((_, frame),) = h.frames("t", layer)
        assert {ids[int(r)]: int(w) for r, w in zip(frame["region"], frame["writes"])} == want
    h.close()


def test_prune_keeps_each_layer_for_its_own_time(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    now = 1_800_000_000.0
    for age in (10, 2 * 3600, 12 * 3600, 10 * 86400, 40 * 86400):
        h.record("t", now - age, [Cell("r1", b"", b"", "s", 1.0, 0.0)])
    h.prune(now)
    kept = {layer: len(h.frames("t", layer)) for layer in range(4)}
    # polls: 1 h; 1 min: 6 h; 10 min: 4 days; 1 h: 28 days
    assert kept == {0: 1, 1: 2, 2: 3, 3: 4}
    h.close()


def test_history_survives_reopening_the_file(tmp_path: Path) -> None:
    h = History(tmp_path / "h.db")
    h.record("ns:t", 1000.0, [Cell("r1", b"", b"", "s", 5.0, 0.0)])
    gap = h.open_gap(1001.0, "cluster down")
    h.close_gap(gap, 1010.0)
    h.close()
    again = History(tmp_path / "h.db")
    assert again.tables() == ["ns:t"]
    assert again.last_poll() == 1000.0
    assert again.gaps() == [(1001.0, 1010.0, "cluster down")]
    q = again.heat("ns:t", 0.0, 2000.0)
    assert q.writes.sum() == 5.0
    again.close()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(1, 8), st.integers(0, 10**6)), min_size=1, max_size=20))
def test_heat_query_keeps_every_request_on_the_key_axis(tmp_path_factory: pytest.TempPathFactory, polls: list[tuple[int, int, int]]) -> None:
    """Whatever regions a table had (a split table's regions over time), the heat map's cells of
    a poll add up to that poll's requests: spreading a region over its key buckets loses none."""
    h = History(tmp_path_factory.mktemp("q") / "h.db")
    bounds = [b"", b"b", b"d", b"f", b"h", b"k", b"m", b"p", b"t"]
    total = 0.0
    for t, (first, width, value) in enumerate(polls):
        start, end = bounds[first], bounds[first + width] if first + width < len(bounds) else b""
        h.record("t", 100.0 + t, [Cell(f"r{first}-{width}", start, end, "s", value, 0.0)])
        total += value
    q = h.heat("t", 0.0, 1000.0)
    assert q.writes.shape == (len(polls), len(q.starts))
    assert np.isclose(q.writes.sum(), total)
    assert q.starts == sorted(q.starts)
    h.close()


def test_bind_rules() -> None:
    assert check_bind("127.0.0.1:8080", None) == ("127.0.0.1", 8080)
    assert check_bind("localhost:0", None) == ("localhost", 0)
    assert check_bind("[::1]:9000", None) == ("::1", 9000)
    assert check_bind("0.0.0.0:8080", "secret") == ("0.0.0.0", 8080)
    with pytest.raises(BadInput, match="--token"):
        check_bind("0.0.0.0:8080", None)
    with pytest.raises(BadInput, match="HOST:PORT"):
        check_bind("8080", None)


def test_table_patterns() -> None:
    assert matches("kss_a", ["kss_*"]) and matches("kss_a", ["default:kss_*"]) and matches("ns:t", [])
    assert not matches("ns:t", ["kss_*"]) and matches("ns:t", ["ns:*"])


def _one_line(args: list[str]) -> str:
    proc = subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_cli_refuses_a_public_bind_without_a_token_in_one_line() -> None:
    line = _one_line(["serve", "--hbase", "127.0.0.1:1", "--bind", "0.0.0.0:8080"])
    assert "--token" in line and "reverse proxy" in line


def test_cli_refuses_once_options_without_once_and_a_missing_schema_folder(tmp_path: Path) -> None:
    assert "--once" in _one_line(["serve", "--hbase", "127.0.0.1:1", "--json"])
    assert "not a folder" in _one_line(["serve", "--hbase", "127.0.0.1:1", "--schemas", str(tmp_path / "none")])


def test_salted_fix_is_a_schema_that_loads_with_the_salt_and_the_same_fields(tmp_path: Path) -> None:
    schema = KeySchema.load(ROOT / "examples" / "sequential.toml")
    text = salted_toml(schema, 16)
    fixed = KeySchema.from_dict(tomllib.loads(text))
    assert fixed.prefix.name == "phoenix" and fixed.prefix.bucket_count() == 16
    assert [f.name for f in fixed.fields] == [f.name for f in schema.fields]
    assert len(fixed.split_keys()) == 15
    assert fixed.table.full_name == schema.table.full_name


@pytest.mark.browser
def test_the_page_draws_the_history_while_the_cluster_is_unreachable(tmp_path: Path) -> None:
    """A history from an earlier run, a cluster that refuses connections (ZooKeeper on port 1):
    the service still serves the history, the status says the cluster is unreachable, the open gap
    is in the API, and the page (real headless Chromium) draws the heat map with a hover label."""
    import json
    import time
    import urllib.request

    from chromium import Chromium, chromium_path

    from keyshape.serve import ServeOptions, Service
    from keyshape.store import open_store

    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    h = History(tmp_path / "h.db")
    now = time.time()
    keys = [b"", b"g", b"p"]
    for i in range(30):  # a diagonal: the hot region moves up every 10 polls
        h.record(
            "t",
            now - 300 + 5 * i,
            [Cell(f"r{k}", keys[k], keys[k + 1] if k < 2 else b"", "s", 1000.0 if k == i // 10 else 3.0, 0.0) for k in range(3)],
        )
    h.close()
    service = Service(ServeOptions(lambda: open_store("127.0.0.1:1"), str(tmp_path / "h.db"), (), {}, "127.0.0.1:0", 60.0)).start()
    browser = Chromium(binary)
    try:
        deadline = time.monotonic() + 20
        while True:
            status = json.loads(urllib.request.urlopen(f"{service.url}/api/status", timeout=10).read())
            if any(g["stop"] is None for g in status["gaps"]) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert not status["connected"] and "ZooKeeper" in status["last_error"]
        assert status["gaps"][-1]["stop"] is None
        page = browser.page()
        page.call("Emulation.setDeviceMetricsOverride", width=1400, height=1000, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=f"{service.url}/")
        page.wait_for("Page.loadEventFired")
        page.js("window.ksState.ready.then(function () { window.ksState.select('t'); return window.ksState.refresh(); })")
        shape = page.js("window.ksState.heat.shape")
        assert shape == [30, 3]
        plot = page.js("window.ksState.plot")
        box = page.js(
            "(function () { var c = document.getElementById('heat'); c.scrollIntoView();"
            " var r = c.getBoundingClientRect(); return {left: r.left, top: r.top}; })()"
        )
        # the last poll's hot region is the third ('p' onwards)
        page.mouse("mouseMoved", box["left"] + plot["left"] + 29.5 * plot["width"] / 30, box["top"] + plot["top"] + 2.5 * plot["height"] / 3)
        tip = page.js("document.getElementById('tip').textContent")
        assert tip.startswith("p\nkey p\n") and "1,000 write requests" in tip, tip
        assert "cluster unreachable" in page.js("document.getElementById('status').textContent")
        assert not page.errors, page.errors
    finally:
        browser.close()
        service.stop()


def test_a_token_guards_every_route_but_the_favicon(tmp_path: Path) -> None:
    """With --token, the API, /metrics and the UI answer 401 without it and 200 with it (header or
    query); the service still starts and serves while the cluster refuses connections."""
    import urllib.error
    import urllib.request

    from keyshape.serve import ServeOptions, Service
    from keyshape.store import open_store

    service = Service(ServeOptions(lambda: open_store("127.0.0.1:1"), str(tmp_path / "h.db"), (), {}, "127.0.0.1:0", 60.0, "s3cret")).start()
    try:
        for path in ("/", "/api/tables", "/metrics", "/assets/app.js"):
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(service.url + path, timeout=10)
            assert refused.value.code == 401
            with urllib.request.urlopen(f"{service.url}{path}?token=s3cret", timeout=10) as ok:
                assert ok.status == 200
            request = urllib.request.Request(service.url + path, headers={"Authorization": "Bearer s3cret"})
            with urllib.request.urlopen(request, timeout=10) as ok:
                assert ok.status == 200
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{service.url}/api/tables?token=wrong", timeout=10)
    finally:
        service.stop()


def _heat(hot_of_poll: list[int], regions: int = 8, polls: int = 16) -> LiveHeat:
    """A LiveHeat of ``regions`` fixed regions on one server per two regions: in poll i region
    ``hot_of_poll[i]`` takes 1,000 writes, every other 10."""
    from keyshape.store.base import RegionInfo

    bounds = [b""] + [bytes([32 * k]) for k in range(1, regions)] + [b""]
    counts = [0] * regions
    heat = LiveHeat()
    for i in range(polls + 1):
        if i:
            for k in range(regions):
                counts[k] += 1000 if k == hot_of_poll[i - 1] else 10
        heat.add([RegionInfo(bounds[k], bounds[k + 1], f"r{k}", f"rs{k // 2}:16020", 0, counts[k], 0) for k in range(regions)], float(i))
    return heat


def test_patterns_name_a_hot_band_and_a_walking_diagonal_without_a_schema() -> None:
    """The analyzer's verdict on a live matrix (the same path the poller takes), then the pattern:
    one range hot throughout is a hot band; the hot region stepping up the key space is the
    sequential diagonal, whose cause asks for --schemas when no schema names the field."""
    from keyshape.ops.live import live_analysis
    from keyshape.serve.patterns import name_pattern

    band = live_analysis(_heat([3] * 16), "t")
    p = name_pattern(band)
    assert band.verdict == "hotspot" and p.name == "hot band", (band.verdict, p)
    walk = live_analysis(_heat([i // 2 for i in range(16)]), "t")
    q = name_pattern(walk)
    assert walk.verdict == "hotspot" and q.name == "sequential diagonal", (walk.verdict, q)
    assert "walks up" in q.cause and "--schemas" in q.cause and q.fix_toml == ""
    even = live_analysis(_heat([-1] * 16), "t")
    assert even.verdict == "balanced" and name_pattern(even).name == "balanced"


def _history_service(tmp_path: Path, token: str | None = None) -> Any:
    """A service over a history of table ``t`` (30 polls, a diagonal) while the cluster refuses
    connections (ZooKeeper on port 1): what it serves is the history."""
    import time

    from keyshape.serve import ServeOptions, Service
    from keyshape.store import open_store

    h = History(tmp_path / "h.db")
    now = time.time()
    keys = [b"", b"g", b"p"]
    for i in range(30):
        h.record(
            "t",
            now - 300 + 5 * i,
            [Cell(f"r{k}", keys[k], keys[k + 1] if k < 2 else b"", "s", 1000.0 if k == i // 10 else 3.0, 0.0) for k in range(3)],
        )
    h.save_verdict("t", now, {"table": "t", "verdict": "hotspot", "regions": 3, "busiest_region_share": 0.9, "busiest_server_share": 1.0})
    h.save_verdict('ns:odd"name', now, {"table": 'ns:odd"name', "verdict": "balanced", "regions": 8, "busiest_region_share": 0.2})
    h.close()
    return Service(ServeOptions(lambda: open_store("127.0.0.1:1"), str(tmp_path / "h.db"), (), {}, "127.0.0.1:0", 60.0, token)).start()


def test_metrics_are_grouped_per_family_as_prometheus_parses_them(tmp_path: Path) -> None:
    """Prometheus's own text parser (prometheus_client) reads every family as a gauge with its
    samples: HELP and TYPE, then that family's samples, family by family."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    from keyshape.serve.alerts import parse_alerts

    service = _history_service(tmp_path)
    try:
        text = urllib.request.urlopen(f"{service.url}/metrics", timeout=10).read().decode()
        families = {f.name: f for f in text_string_to_metric_families(text)}
        assert {n: f.type for n, f in families.items()} == {
            n: "gauge"
            for n in (
                "keyshape_up",
                "keyshape_busiest_region_share",
                "keyshape_busiest_server_share",
                "keyshape_verdict",
                "keyshape_regions",
                "keyshape_alert",
            )
        }, text
        verdicts = {s.labels["table"]: s.value for s in families["keyshape_verdict"].samples}
        assert verdicts == {"t": 2.0, 'ns:odd"name': 0.0}, text
        assert [s.value for s in families["keyshape_up"].samples] == [0.0]
        assert {s.labels["table"]: s.value for s in families["keyshape_regions"].samples} == {"t": 3.0, 'ns:odd"name': 8.0}
    finally:
        service.stop()
    # with alerts: their family parses too, one sample per rule kind
    from keyshape.serve.app import metrics_text

    history = History(tmp_path / "h.db")
    poller = service.poller
    text = metrics_text(poller, history, parse_alerts({"alerts": {"*": {"busiest_region_share": 0.5, "verdict": "hotspot"}}}))
    alerts = {f.name: f for f in text_string_to_metric_families(text)}["keyshape_alert"]
    assert alerts.type == "gauge" and {(s.labels["table"], s.labels["kind"]): s.value for s in alerts.samples}[("t", "verdict")] == 1.0
    history.close()


def test_odd_parameters_are_400_and_unknown_tables_404_without_a_traceback(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import logging
    import urllib.error
    import urllib.request

    service = _history_service(tmp_path)
    # uvicorn logs an application's exception (a 500's traceback) on its own logger, which does
    # not propagate to the root logger pytest captures: listen there
    web_log = logging.getLogger("uvicorn.error")
    web_log.addHandler(caplog.handler)
    caplog.set_level(logging.WARNING)
    try:

        def code(path: str) -> int:
            try:
                with urllib.request.urlopen(service.url + path, timeout=10) as r:
                    return int(r.status)
            except urllib.error.HTTPError as exc:
                return int(exc.code)

        assert code("/api/heatmap?table=t&seconds=3600") == 200
        odd = ["seconds=inf", "seconds=1e309", "seconds=-inf", "seconds=nan", "seconds=0", "seconds=1e12", "until=nan", "until=-inf", "until=inf"]
        odd += ["until=1e309", "until=-5", "k0=nan", "k1=inf", "cells=1e309", "keys=nan", "metric=x"]
        assert {q: code(f"/api/heatmap?table=t&{q}") for q in odd} == {q: 400 for q in odd}
        for endpoint in ("table", "heatmap", "regions", "predicted"):
            assert code(f"/api/{endpoint}?table=nope") == 404, endpoint
            assert code(f"/api/{endpoint}?table=t") == 200, endpoint
    finally:
        service.stop()
        web_log.removeHandler(caplog.handler)
    logged = "\n".join(r.getMessage() + (r.exc_text or "") for r in caplog.records)
    assert "Traceback" not in logged and not [r for r in caplog.records if r.levelno >= logging.ERROR], logged


def test_401_names_the_bearer_scheme_and_the_scheme_is_case_insensitive(tmp_path: Path) -> None:
    import urllib.error
    import urllib.request

    service = _history_service(tmp_path, token="s3cret")
    try:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(service.url + "/api/tables", timeout=10)
        assert refused.value.code == 401 and refused.value.headers["WWW-Authenticate"].startswith("Bearer"), refused.value.headers
        for scheme in ("bearer", "BEARER", "Bearer"):
            request = urllib.request.Request(service.url + "/api/tables", headers={"Authorization": f"{scheme} s3cret"})
            with urllib.request.urlopen(request, timeout=10) as ok:
                assert ok.status == 200, scheme
        wrong = urllib.request.Request(service.url + "/api/tables", headers={"Authorization": "Basic s3cret"})
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(wrong, timeout=10)
    finally:
        service.stop()


@pytest.mark.browser
def test_the_page_works_under_a_token_opened_with_it_in_the_address(tmp_path: Path) -> None:
    """`serve --token T`, the page opened as /?token=T in real headless Chromium: its script and
    style load (a cookie carries the token to their plain links), it lists the tables and draws
    the heat map; without the token nothing loads."""
    from chromium import Chromium, chromium_path

    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    service = _history_service(tmp_path, token="s3cret")
    browser = Chromium(binary)
    try:
        page = browser.page()
        page.call("Page.navigate", url=f"{service.url}/?token=s3cret")
        page.wait_for("Page.loadEventFired")
        assert page.js("typeof window.ksState") == "object"  # app.js loaded
        assert page.js("getComputedStyle(document.querySelector('header')).backgroundColor") == "rgb(34, 34, 51)"  # style.css loaded
        page.js("window.ksState.ready.then(function () { window.ksState.select('t'); return window.ksState.refresh(); })")
        assert page.js("window.ksState.heat.shape") == [30, 3]
        assert page.js("document.querySelectorAll('#tables tbody tr').length") == 2
        assert not page.errors, page.errors
    finally:
        browser.close()
        service.stop()


@pytest.mark.browser
def test_the_page_says_why_there_is_no_predicted_map(tmp_path: Path) -> None:
    """A hot band whose regions no key of the schema falls in (boundaries that are no UTF-8 text
    for its tenant field): the API says why, and the page shows that reason in the box instead of
    hiding it."""
    import json
    import time
    import urllib.request

    from chromium import Chromium, chromium_path

    from keyshape.serve.poller import TableState
    from keyshape.store.base import RegionInfo

    binary = chromium_path()
    if binary is None:
        pytest.skip("no Chromium: apt-get install -y chromium, or set KEYSHAPE_CHROMIUM")
    (tmp_path / "tenants.toml").write_text(
        '[table]\nname = "t"\n[[table.families]]\nname = "d"\n[key]\nseparator = "|"\n'
        '[[key.fields]]\nname = "tenant"\ntype = "string"\n[[key.fields]]\nname = "event_id"\ntype = "int64"\nencoding = "hbase"\n'
    )
    service = _history_service(tmp_path)
    heat = LiveHeat()
    for i in range(4):
        heat.add([RegionInfo(b"\xff\xfe", b"\xff\xff", "r0", "s", 0, 1000 * i, 0), RegionInfo(b"\xff\xff", b"", "r1", "s", 0, 10 * i, 0)], 60.0 * i)
    pattern = {"name": "hot band", "fix_prefix": {"strategy": "mod", "buckets": 16}}
    state = TableState("t", heat, verdict={"table": "t", "verdict": "hotspot", "pattern": pattern})
    service.poller.schemas["t"] = KeySchema.load(tmp_path / "tenants.toml")
    with service.poller.lock:
        service.poller.states["t"] = state
    browser = Chromium(binary)
    try:
        body = json.loads(urllib.request.urlopen(f"{service.url}/api/predicted?table=t", timeout=30).read())
        assert not body["available"] and "could be built by the schema" in body["reason"], body
        page = browser.page()
        page.call("Page.navigate", url=f"{service.url}/")
        page.wait_for("Page.loadEventFired")
        # The page shows the other table, then t; the other table's answers are held back until t's
        # are on the page, as a slow server's would be: the late answers must not paint over t.
        page.js(
            "(function () { var f = window.fetch; window.ksHold = false; window.ksHeld = []; window.ksLate = 0;"
            " window.fetch = function (u) { var r = f.apply(this, arguments);"
            " if (!window.ksHold || String(u).indexOf('odd') < 0) return r;"
            " return r.then(function (x) {"
            # counted once the page's own callbacks for it have run (they are microtasks of this)
            " var json = x.json.bind(x); x.json = function () { return json().then(function (b) {"
            " Promise.resolve().then(function () { window.ksLate++; }); return b; }); };"
            " return new Promise(function (ok) { window.ksHeld.push(function () { if (!x.ok) window.ksLate++; ok(x); }); }); }); };"
            " window.ksRelease = function () { window.ksHeld.splice(0).forEach(function (go) { go(); }); return 1; };"
            " return 1; })()"
        )
        page.js(
            "window.ksState.ready.then(function () {"
            " window.ksHold = true; window.ksState.select('ns:odd\"name'); window.ksState.select('t'); return 1; })"
        )
        shows_t = (
            "window.ksHeld.length >= 4 && !!window.ksState.predicted && window.ksState.predicted.table === 't'"
            " && document.getElementById('title').textContent === 't'"
        )
        deadline = time.monotonic() + 60  # the page's calls run side by side: wait for t's answers
        while time.monotonic() < deadline and not page.js(shows_t):
            time.sleep(0.5)
            if page.js("window.ksHeld.length >= 4 && !window.ksState.predicted"):  # on a busy machine a first call can fail: ask again
                page.js("(function () { window.ksState.refresh(); return 1; })()")
        assert page.js(shows_t), page.js("JSON.stringify([window.ksHeld.length, window.ksState.predicted])")
        page.js("window.ksRelease()")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and page.js("window.ksLate") < 4:
            time.sleep(0.2)
        assert page.js("window.ksLate") >= 4
        assert page.js("window.ksState.table") == "t"
        assert page.js("document.getElementById('title').textContent") == "t"
        shown = page.js("getComputedStyle(document.getElementById('predictbox')).display")
        assert shown == "block", page.js("JSON.stringify([window.ksState.table, window.ksState.predicted])")
        assert page.js("getComputedStyle(document.getElementById('predictpair')).display") == "none"
        note = page.js("document.getElementById('predictnote').textContent")
        assert note.startswith("No predicted map: no key of the 2 observed regions could be built by the schema"), note
        assert not page.errors, page.errors
    finally:
        browser.close()
        service.stop()
