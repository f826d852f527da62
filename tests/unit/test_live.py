"""Table DDL (`keyshape create --dry-run`), workload loading, and the live region-load heat map,
on the embedded store (no HBase needed); the CLI's error lines through a real subprocess."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.hbytes import to_bytes_binary
from keyshape.errors import StoreError, WriteFailed
from keyshape.ops.live import LiveHeat, live_analysis, load_workload, row_value, watch
from keyshape.schema import FamilySpec, KeySchema, TableSpec
from keyshape.schema.ddl import shell_create_statement
from keyshape.store import EmbeddedStore, ensure_table
from keyshape.store.base import RegionInfo, check_regions
from keyshape.workload import generate

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders.toml"


# ------------------------------------------------------------------------- shell statements


def ruby_single_quoted(literal: str) -> str:
    """What Ruby makes of a single-quoted literal: only \\\\ and \\' are escapes."""
    assert literal[0] == literal[-1] == "'"
    return re.sub(r"\\([\\'])", r"\1", literal[1:-1])


def parse_statement(text: str) -> tuple[list[str], str, list[dict[str, str]], list[bytes]]:
    """Split `keyshape create --dry-run` output into (namespace lines, table, families, splits),
    decoding split keys as the HBase shell does (Ruby literal, then Bytes.toBytesBinary)."""
    lines = text.rstrip("\n").split("\n")
    create = lines[-1]
    assert create.startswith("create '")
    table = re.match(r"create '([^']*)'", create).group(1)
    families = []
    for body in re.findall(r"\{(NAME => [^}]*)\}", create):
        fam = {}
        for key, value in re.findall(r"(\w+) => ('(?:[^'\\]|\\.)*'|\d+)", body):
            fam[key] = ruby_single_quoted(value) if value.startswith("'") else value
        families.append(fam)
    splits: list[bytes] = []
    m = re.search(r"\{SPLITS => \[(.*)\]\}$", create)
    if m:
        literals = re.findall(r"'(?:[^'\\]|\\.)*'", m.group(1))
        splits = [to_bytes_binary(ruby_single_quoted(lit)) for lit in literals]
    return lines[:-1], table, families, splits


def test_dry_run_statement_for_orders_has_namespace_family_options_and_exact_splits() -> None:
    schema = KeySchema.load(ORDERS)
    before, table, families, splits = parse_statement(shell_create_statement(schema))
    assert before == ["create_namespace 'shop'"]
    assert table == "shop:orders"
    family = schema.table.families[0]
    assert families == [
        {
            "NAME": "d",
            "VERSIONS": "1",
            "COMPRESSION": "SNAPPY",
            "BLOOMFILTER": "ROW",
            "BLOCKSIZE": str(family.block_size),
            "IN_MEMORY": "false",
            "DATA_BLOCK_ENCODING": "NONE",
        }
    ]
    assert splits == schema.split_keys()
    assert len(splits) == schema.splits.regions - 1


def test_statement_in_default_namespace_with_ttl_in_memory_and_two_families() -> None:
    spec = TableSpec(
        "events",
        families=[
            FamilySpec("d", versions=3, ttl=86400, in_memory=True, data_block_encoding="FAST_DIFF", bloom_filter="ROWCOL", block_size=8192),
            FamilySpec("m"),
        ],
    )
    text = shell_create_statement(spec, [b"\x80"])
    before, table, families, splits = parse_statement(text)
    assert before == [] and table == "events"
    assert families[0] == {
        "NAME": "d",
        "VERSIONS": "3",
        "COMPRESSION": "NONE",
        "BLOOMFILTER": "ROWCOL",
        "BLOCKSIZE": "8192",
        "IN_MEMORY": "true",
        "DATA_BLOCK_ENCODING": "FAST_DIFF",
        "TTL": "86400",
    }
    assert families[1]["NAME"] == "m" and "TTL" not in families[1]
    assert splits == [b"\x80"]
    # VERSIONS and TTL are Ruby integers (JInteger.valueOf / setTimeToLive(int) in admin.rb).
    assert "VERSIONS => 3" in text and "TTL => 86400" in text


def test_statement_without_splits_has_no_splits_clause() -> None:
    text = shell_create_statement(TableSpec("t"), [])
    assert text == (
        "create 't', {NAME => 'd', VERSIONS => 1, COMPRESSION => 'NONE', "
        "BLOOMFILTER => 'ROW', BLOCKSIZE => '65536', IN_MEMORY => 'false', "
        "DATA_BLOCK_ENCODING => 'NONE'}\n"
    )


@settings(max_examples=200, deadline=None)
@given(st.sets(st.binary(min_size=1, max_size=6), min_size=1, max_size=12))
def test_any_split_keys_survive_the_shells_decoding(keys: set[bytes]) -> None:
    """Quotes, backslashes, \\xNN look-alikes and high bytes all come back byte-exact."""
    _, _, _, splits = parse_statement(shell_create_statement(TableSpec("t"), list(keys)))
    assert splits == sorted(keys)


def test_invalid_family_option_is_refused_with_the_family_named() -> None:
    spec = TableSpec("t", families=[FamilySpec("d", bloom_filter="ROWPREFIX_FIXED_LENGTH")])
    with pytest.raises(StoreError, match="family 'd'.*bloom_filter"):
        shell_create_statement(spec, [])


def test_check_regions_accepts_exact_layout_and_names_the_first_difference() -> None:
    store = EmbeddedStore()
    ensure_table(store, TableSpec("t"), [b"b", b"d"])
    regions = store.regions("t")
    check_regions(regions, [b"d", b"b"], "t")  # order of the split keys does not matter
    with pytest.raises(StoreError, match="3 region.*asks for 4"):
        check_regions(regions, [b"b", b"c", b"d"], "t")
    with pytest.raises(StoreError, match=r"region 1 is \['b', 'd'\).*\['b', 'e'\)"):
        check_regions(regions, [b"b", b"e"], "t")


# ------------------------------------------------------------------------------------ load


def _orders_store() -> tuple[EmbeddedStore, KeySchema]:
    schema = KeySchema.load(ORDERS)
    store = EmbeddedStore()
    ensure_table(store, schema.table, schema.split_keys())
    return store, schema


def test_load_puts_every_row_with_its_write_index() -> None:
    store, schema = _orders_store()
    seen: list[int] = []
    result = load_workload(store, schema, rows=5_000, batch_size=700, progress=lambda done, total: seen.append(done))
    keys = [k for cols in generate(schema, 5_000) for k in schema.encode_many(cols)]
    stored = dict(store.scan("shop:orders"))
    assert result.rows == 5_000 and result.requested == 5_000 and result.failed == []
    assert len(stored) == len(set(keys)) == 5_000
    for i in (0, 1, 4_321, 4_999):
        assert stored[keys[i]] == {b"d:v": row_value(i)}
    # after each batch the rows acknowledged so far (the last, short batch when flushed at the end)
    assert seen == [700 * (i + 1) for i in range(7)] + [4_900, 5_000]


class _FailingStore:
    """Delegates to an embedded store, but its writer's ``fail_on``-th batch fails whole, as a
    batch in flight does when its region server goes away."""

    def __init__(self, inner: EmbeddedStore, fail_on: int, batch_size: int | None = None) -> None:
        self.inner, self.fail_on, self.batch_size = inner, fail_on, batch_size

    def writer(self, table: str, batch_size: int = 1000, **kw):  # type: ignore[no-untyped-def]
        inner, fail_on = self.inner.writer(table, batch_size, **kw), self.fail_on
        batch_size = self.batch_size or batch_size

        class W:
            def __init__(self) -> None:
                self.buffer: list[tuple[bytes, dict[bytes, bytes]]] = []
                self.batches = self.written = 0

            def put(self, row, cells, timestamp=None):  # type: ignore[no-untyped-def]
                self.buffer.append((row, cells))
                if len(self.buffer) == batch_size:
                    self.flush()

            def flush(self) -> None:
                buffer, self.buffer = self.buffer, []
                if not buffer:
                    return
                self.batches += 1
                if self.batches == fail_on:
                    raise WriteFailed("region server went away", [r for r, _ in buffer])
                for row, cells in buffer:
                    inner.put(row, cells)
                inner.flush()
                self.written += len(buffer)

        return W()


def test_load_keep_going_reports_the_unacknowledged_batch() -> None:
    store, schema = _orders_store()
    flaky = _FailingStore(store, fail_on=2)
    result = load_workload(flaky, schema, rows=3_000, batch_size=1_000, keep_going=True)  # type: ignore[arg-type]
    keys = [k for cols in generate(schema, 3_000) for k in schema.encode_many(cols)]
    assert result.rows == 2_000 and result.failed == keys[1_000:2_000]
    assert [k for k, _ in store.scan("shop:orders")] == sorted(keys[:1_000] + keys[2_000:])


def test_load_keep_going_goes_on_with_the_rest_of_a_batch_after_a_failure_inside_it() -> None:
    # the writer's batches (300) end inside load's (1,000): the put that raises is the 600th row
    # of the first load batch, and rows 600..999 must still be written
    store, schema = _orders_store()
    result = load_workload(
        _FailingStore(store, fail_on=2, batch_size=300),
        schema,
        rows=3_000,  # type: ignore[arg-type]
        batch_size=1_000,
        keep_going=True,
    )
    keys = [k for cols in generate(schema, 3_000) for k in schema.encode_many(cols)]
    assert result.failed == keys[300:600] and result.rows == 2_700
    assert [k for k, _ in store.scan("shop:orders")] == sorted(keys[:300] + keys[600:])


def test_load_raises_write_failed_with_the_batch_and_the_acknowledged_count() -> None:
    store, schema = _orders_store()
    with pytest.raises(WriteFailed, match="1,000 row.*acknowledged") as info:
        load_workload(_FailingStore(store, fail_on=2), schema, rows=3_000, batch_size=1_000)  # type: ignore[arg-type]
    keys = [k for cols in generate(schema, 3_000) for k in schema.encode_many(cols)]
    assert info.value.rows == keys[1_000:2_000]


# ---------------------------------------------------------------------------- live deltas


def _abc_store(**kw) -> EmbeddedStore:  # type: ignore[no-untyped-def]
    store = EmbeddedStore(**kw)
    ensure_table(store, TableSpec("t"), [b"b", b"d"])  # regions [,b) [b,d) [d,)
    return store


def _put(store: EmbeddedStore, *rows: bytes) -> None:
    for row in rows:
        store.put("t", row, {b"d:v": b"1"})


def test_deltas_of_embedded_counters_give_the_expected_matrix() -> None:
    store = _abc_store()
    _put(store, b"a0")  # before the baseline: not counted
    heat = LiveHeat()
    assert heat.add(store.regions("t"), 0.0) is None
    _put(store, b"a1", b"a2", b"a3", b"e")
    store.get("t", b"c")
    heat.add(store.regions("t"), 1.0)
    _put(store, b"b", b"c")
    store.get("t", b"e")
    store.get("t", b"f")
    heat.add(store.regions("t"), 2.0)
    assert heat.matrix("write").tolist() == [[3, 0, 1], [0, 2, 0]]
    assert heat.matrix("read").tolist() == [[0, 1, 0], [0, 0, 2]]
    assert [s.at for s in heat.samples] == [1.0, 2.0]


def test_watch_polls_at_the_interval_and_follows_a_split() -> None:
    store = _abc_store(auto_split_rows=4)
    ticks = iter(range(100))
    plan = [[b"a1", b"a2", b"d1"], [b"a3", b"a4", b"a5"], [b"a6", b"c"]]
    slept: list[float] = []

    def sleep(seconds: float) -> None:  # the writes happen "while" watch sleeps
        slept.append(seconds)
        _put(store, *plan[len(slept) - 1])

    heat = watch(store, "t", interval=2.5, samples=3, sleep=sleep, clock=lambda: float(next(ticks)), count_splits=False)
    assert slept == [2.5, 2.5, 2.5]
    # [,b) held a1..a5 after poll 2 (5 rows > 4): it split at its middle row a3.
    assert [r.start for r in heat.latest] == [b"", b"a3", b"b", b"d"]
    m = heat.matrix("write")
    # Sample 2: a3, a4, a5 were counted by the parent, which split at a5 and took its counters
    # with it (HBase drops a split parent's RegionLoad the same way); the daughters start at 0.
    # The embedded store gives no report times, so the parent's last writes are not estimated.
    # Sample 1: [,b) took 2 writes; it has split since and nothing was counted, so each daughter
    # gets half of what the parent's counters saw (HBase splits at the middle of the data), the
    # oldest to the lower one: the daughters' first writes (a6) went up, the keys walk up.
    assert m.shape == (3, 4)
    assert m.sum(axis=1).tolist() == [3, 0, 2]
    assert m[0].tolist() == [1, 1, 0, 1]
    assert m[2].tolist() == [0, 1, 1, 0]  # a6 >= a3, c in [b, d)
    assert heat.split_counts == (0, 1)
    gone = heat.samples[1].vanished
    assert [(v.start, v.end, v.writes) for v in gone] == [(b"", b"b", 0)]
    assert len(gone[0].children) == 2  # found by key range: the store names no parents


def test_watch_counts_the_daughters_of_a_split_and_puts_each_write_where_it_is() -> None:
    """The same writes, with the daughters counted when the watch sees them (the default): each
    write is drawn in the interval it was made and the region that holds it now, the three the
    split parent's counters lost included (in its last interval)."""
    store = _abc_store(auto_split_rows=4)
    ticks = iter(range(100))
    plan = [[b"a1", b"a2", b"d1"], [b"a3", b"a4", b"a5"], [b"a6", b"c"]]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        _put(store, *plan[len(slept) - 1])

    heat = watch(store, "t", interval=2.5, samples=4, sleep=sleep, clock=lambda: float(next(ticks)))
    assert slept == [2.5, 2.5, 2.5]  # the fourth sample is the poll right after the count
    assert [r.start for r in heat.latest] == [b"", b"a3", b"b", b"d"]
    assert heat.split_counts == (1, 1)
    m = heat.matrix("write")
    assert m.tolist() == [[2, 0, 0, 1], [0, 3, 0, 0], [0, 0, 0, 0], [0, 1, 1, 0]]
    rows = [sum(1 for _ in store.scan_keys("t", r.start, r.end)) for r in heat.latest]
    assert m.sum(axis=0).tolist() == rows  # what a scan of each region finds


def test_a_counter_that_restarts_counts_from_zero() -> None:
    def info(writes: int, name: str = "t,,1") -> RegionInfo:
        return RegionInfo(b"", b"", name, "rs1", 0, writes, 0)

    heat = LiveHeat()
    heat.add([info(100)], 0)
    heat.add([info(130)], 1)
    heat.add([info(7)], 2)  # region reopened after a crash: its counter starts again
    heat.add([info(5, "t,,2")], 3)  # a new region (new name): all of its counter is new
    assert heat.matrix().tolist() == [[30], [7], [5]]


def test_live_analysis_judges_and_renders_with_the_shared_heat_map(tmp_path: Path) -> None:
    from keyshape.report.html import write_html
    from keyshape.report.png import write_png

    store = _abc_store()
    heat = LiveHeat()
    heat.add(store.regions("t"), 0)
    for t in range(1, 6):
        _put(store, *[b"e%04d" % (t * 1000 + i) for i in range(300)], b"a", b"c")
        heat.add(store.regions("t"), t)
    a = live_analysis(heat, name="t")
    assert a.verdict == "hotspot"
    assert a.rows == 5 * 302
    assert [r.rows for r in a.regions] == [5, 5, 1500]
    assert a.heat.shape == (5, 3)
    png = write_png(a, tmp_path / "live.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    html = write_html(a, tmp_path / "live.html").read_text()
    assert "HOTSPOT" in html and "data:image/png;base64," in html


def _even_load(seed: int) -> tuple[EmbeddedStore, LiveHeat]:
    """Three polls of 3,000 random writes each, spread evenly over the three regions."""
    rng = np.random.default_rng(seed)
    store = _abc_store()
    heat = LiveHeat()
    heat.add(store.regions("t"), 0)
    for t in range(1, 4):
        _put(store, *[bytes([c]) + b"%06d" % rng.integers(1e6) for c in rng.choice([ord("a"), ord("b"), ord("d")], 3_000)])
        heat.add(store.regions("t"), t)
    return store, heat


def test_live_analysis_of_an_even_spread_is_balanced() -> None:
    _, heat = _even_load(1)
    assert live_analysis(heat).verdict == "balanced"


def test_a_few_trailing_writes_in_one_region_do_not_make_an_even_load_skewed() -> None:
    # A poll that lands just after a load's last puts sees a handful of writes, all in one
    # region: by chance, not a hot moment. Its weight is its handful, not a whole interval.
    store, heat = _even_load(2)
    for t in range(4, 7):
        _put(store, b"d%06d" % t)
        heat.add(store.regions("t"), t)
    a = live_analysis(heat)
    assert a.verdict == "balanced", a.reasons
    assert a.hot_window_share < 0.4
    # the same trailing moments, each a full interval of one region, are a hot spot in time
    for t in range(7, 17):
        _put(store, *[b"d%06d" % (t * 10_000 + i) for i in range(3_000)])
        heat.add(store.regions("t"), t)
    assert live_analysis(heat).verdict == "hotspot"


# ------------------------------------------------------------------------------------- CLI


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


def test_cli_dry_run_prints_the_statements_without_hbase() -> None:
    proc = run("create", str(ORDERS), "--hbase", "127.0.0.1:1", "--dry-run")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shell_create_statement(KeySchema.load(ORDERS))


def test_cli_create_and_load_on_the_embedded_store() -> None:
    proc = run("create", str(ORDERS))
    assert proc.returncode == 0, proc.stderr
    assert "20 regions" in proc.stdout and "95" in proc.stdout
    proc = run("load", str(ORDERS), "--rows", "4000", "--batch-size", "500")
    assert proc.returncode == 0, proc.stderr
    assert "wrote 4,000 rows to shop:orders" in proc.stdout
    assert "live: 4,000 write requests" in proc.stdout
    assert re.search(r"BALANCED|SKEWED|HOTSPOT", proc.stdout)


def test_cli_watch_needs_hbase() -> None:
    line = one_error_line(run("watch", "t"))
    assert "--hbase" in line


def test_cli_connection_refused_is_one_line() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once the socket closes
    url = f"127.0.0.1:{port}"
    for args in (("watch", "t", "--hbase", url, "--samples", "1"), ("create", str(ORDERS), "--hbase", url)):
        line = one_error_line(run(*args))
        assert url in line


def test_cli_invalid_family_option_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(ORDERS.read_text().replace('compression = "SNAPPY"', 'compression = "SNAPY"'))
    line = one_error_line(run("create", str(bad), "--dry-run"))
    assert "compression" in line and "SNAPY" in line
    rowprefix = tmp_path / "rowprefix.toml"
    rowprefix.write_text(ORDERS.read_text().replace('bloom_filter = "ROW"', 'bloom_filter = "ROWPREFIX_FIXED_LENGTH"'))
    line = one_error_line(run("create", str(rowprefix), "--dry-run"))
    assert "bloom_filter" in line


def test_cli_bad_namespace_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "ns.toml"
    bad.write_text(ORDERS.read_text().replace('namespace = "shop"', 'namespace = "sh op"'))
    line = one_error_line(run("create", str(bad)))
    assert "namespace" in line
