"""The operator's experience (issue 30): errors found before the work starts, output that survives a
closed pipe. Run through a real subprocess, as a user meets them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders.toml"
SEQUENTIAL = ROOT / "examples" / "sequential.toml"


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


@pytest.mark.parametrize(
    "option,path,words",
    [
        ("--png", "/nonexistent/x.png", "folder '/nonexistent' does not exist"),
        ("--html", "/nonexistent/r.html", "folder '/nonexistent' does not exist"),
        ("--json", "/nonexistent/r.json", "folder '/nonexistent' does not exist"),
        ("--html", "/tmp", "is a folder"),
    ],
)
def test_an_unwritable_report_path_is_refused_before_the_analysis_runs(option: str, path: str, words: str) -> None:
    # Refused up front, not after analyzing 5M rows: "Invalid value for '--png'" is click's
    # refusal while it parses the options, before the command runs (no time measured: issue 43).
    line = one_error_line(run("analyze", str(ORDERS), "--rows", "5000000", option, path))
    assert f"Invalid value for '{option}'" in line and words in line


def test_watch_refuses_an_unwritable_report_before_it_connects() -> None:
    line = one_error_line(run("watch", "t", "--hbase", "127.0.0.1:1", "--png", "/nonexistent/w.png"))
    assert "--png" in line and "/nonexistent" in line


@pytest.mark.parametrize("url", ["localhost:abc", "localhost:70000"])
def test_a_port_that_is_not_a_number_is_named_at_once(url: str) -> None:
    # Named before any connection: a connection needs the port as a number, so this message (the
    # address parser's) comes first; a connection error or retry would say something else.
    line = one_error_line(run("analyze", str(ORDERS), "--hbase", url, "--table", "t"))
    assert f"ZooKeeper address {url!r}" in line and "is not a port number" in line and "HOST:PORT" in line and "invalid literal" not in line


def test_more_than_100000_regions_are_refused_with_the_bound() -> None:
    line = one_error_line(run("analyze", str(SEQUENTIAL), "--regions", "100001"))
    assert "--regions" in line and "100000" in line


@pytest.mark.parametrize(
    "args",
    [
        ("splits", "hex", "--regions", "64"),
        ("phoenix", "key", "ranges", str(ROOT / "examples" / "phoenix" / "events.sql")),
        ("analyze", str(ORDERS), "--rows", "20000"),
    ],
)
def test_a_reader_that_stops_reading_gets_no_error_message(args: tuple[str, ...]) -> None:
    """`keyshape ... | head`: the pipe's read end is closed before keyshape writes (deterministic
    SIGPIPE); it printed `error: [Errno 32] Broken pipe`."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "keyshape.cli", *args], stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=ROOT, timeout=120
        )
    finally:
        os.close(write_end)
    assert proc.returncode != 0
    assert proc.stderr == "", proc.stderr


@pytest.mark.hbase
def test_admin_regions_fit_80_columns_one_line_a_region_keys_whole_with_wide_and_json(hbase) -> None:  # type: ignore[no-untyped-def]
    """Through a pipe rich draws 80 columns: long binary keys fold onto more lines instead of
    shrinking to nothing, and the region column is the encoded name `admin move` takes, whole."""
    import re
    import uuid

    from keyshape.core.hbytes import to_string_binary
    from keyshape.store import ensure_table, open_store
    from keyshape.schema import FamilySpec, TableSpec

    name = f"ops80_{uuid.uuid4().hex[:8]}"
    splits = [bytes([0, 0, 0, 0, 0, 0, i, 0xC9]) for i in (1, 2, 3)]
    store = open_store(hbase.url)
    try:
        ensure_table(store, TableSpec(name=name, families=[FamilySpec("cf")]), splits)
        proc = run("admin", "regions", name, "--hbase", hbase.url)
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        # One line per region within 80 columns (issue 40: folded keys took 11 lines a region),
        # the keys cut with "…"; --wide and --json give them whole.
        assert max(len(line) for line in lines) <= 80
        assert sum(line.startswith("│") for line in lines) == 4 and "…" in proc.stdout
        names = {r.name.rstrip(".").rsplit(".", 1)[-1] for r in store.regions(name)}
        listed = set(re.findall(r"\b[0-9a-f]{32}\b", proc.stdout))
        assert listed == names and len(names) == 4
        wide = run("admin", "regions", name, "--hbase", hbase.url, "--wide").stdout
        doc = json.loads(run("admin", "regions", name, "--hbase", hbase.url, "--json", "-").stdout)
        for key in splits:
            assert to_string_binary(key) in wide
        assert [r["start"] for r in doc["regions"]] == ["", *(to_string_binary(k) for k in splits)]
    finally:
        store.delete_table(name)
        store.close()


@pytest.mark.parametrize(
    "args",
    [
        ("analyze", str(SEQUENTIAL), "--regions", "1000", "--top", "6"),
        ("analyze", str(ORDERS), "--top", "6"),
        ("analyze", str(ROOT / "examples" / "timestamp-leading.toml"), "--top", "6"),
    ],
)
def test_region_tables_fit_80_columns_without_cutting_numbers_or_headers(args: tuple[str, ...]) -> None:
    """A pipe or a CI log is 80 columns: region numbers showed as `…`, headers as `sha…`/`serv…`
    and binary keys as `…\\x000\\x…`. Now the keys give way (the end column first), nothing else."""
    proc = run(*args)
    assert proc.returncode == 0, proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.startswith(("┃", "│"))]
    assert table and max(len(line) for line in table) <= 80
    header = table[0]
    for word in ("#", "start", "rows", "share", "server"):
        assert f" {word} " in header, header
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in table[1:]]
    numbers = [r[0] for r in rows if r[0] != "…"]
    assert numbers and all(n.isdigit() for n in numbers)
    assert all(not c.endswith("\\x…") and "\\x…" not in c for r in rows for c in r[1:3])


def _analysis_json(*args: str) -> dict:  # type: ignore[type-arg]
    import json

    proc = run("analyze", *args, "--json", "-")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_no_advice_about_a_server_count_nobody_gave() -> None:
    """`8 regions over 3 region servers cannot be even` came from the default --servers 3."""
    assumed = _analysis_json(str(ORDERS), "--regions", "8")
    assert assumed["servers_assumed"] is True
    assert not any("region servers cannot be even" in a for a in assumed["advice"])
    given = _analysis_json(str(ORDERS), "--regions", "8", "--servers", "3")
    assert given["servers_assumed"] is False
    assert any("8 regions over 3 region servers cannot be even" in a for a in given["advice"])


def test_auto_split_of_a_sequential_key_advises_a_real_salt_not_2_buckets() -> None:
    """The table ends with 2 regions: the salt advice said `buckets = 2`."""
    import re

    d = _analysis_json(str(SEQUENTIAL), "--auto-split")
    counts = [int(n) for a in d["advice"] for n in re.findall(r"buckets = (\d+)", a)]
    assert counts and min(counts) >= 16, d["advice"]


def _records_schema(tmp_path: Path) -> Path:
    """tests/data/records.toml with tables of this test's own."""
    import uuid

    tag = uuid.uuid4().hex[:8]
    text = (ROOT / "tests" / "data" / "records.toml").read_text()
    for name in ("rec_orders_by_product", "rec_ids"):
        text = text.replace(f'"{name}"', f'"{name}_{tag}"')
    text = text.replace('name = "rec_orders"', f'name = "rec_orders_{tag}"')
    path = tmp_path / "records.toml"
    path.write_text(text)
    return path


@pytest.mark.hbase
def test_put_writes_records_that_get_and_index_lookup_find(hbase, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The README's `get` and `index` examples found nothing: no command wrote records."""
    schema = _records_schema(tmp_path)
    assert run("create", str(schema), "--hbase", hbase.url).returncode == 0
    csv_file = tmp_path / "orders.csv"
    csv_file.write_text("user_id,order_id,product_id,amount\nu1,4,p1,12.50\nu2,5,p2,3\nu3,6,p1,7\n")
    put = run("put", str(schema), "--csv", str(csv_file), "--hbase", hbase.url)
    assert put.returncode == 0, put.stderr
    assert "put 3 record(s)" in put.stdout
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text('{"user_id": "u4", "order_id": 7, "product_id": "p1", "d:note": "hi"}\n')
    assert run("put", str(schema), "--jsonl", str(jsonl), "--hbase", hbase.url).returncode == 0
    got = run("get", str(schema), "user_id=u1", "order_id=4", "--hbase", hbase.url)
    assert got.returncode == 0 and "d:amount=12.50" in got.stdout and "1 rows for 1 record" in got.stdout
    by_product = run("index", "lookup", str(schema), "by_product", "product_id=p1", "--hbase", hbase.url)
    assert by_product.returncode == 0 and "3 rows" in by_product.stdout, by_product.stdout
    assert "d:note=hi" in by_product.stdout
    # Put again: the record keeps its one row and its one index row.
    assert run("put", str(schema), "user_id=u1", "order_id=4", "product_id=p2", "--hbase", hbase.url).returncode == 0
    p1 = run("index", "lookup", str(schema), "by_product", "product_id=p1", "--hbase", hbase.url)
    p2 = run("index", "lookup", str(schema), "by_product", "product_id=p2", "--hbase", hbase.url)
    assert "2 rows" in p1.stdout and "2 rows" in p2.stdout


@pytest.mark.parametrize(
    "args,words",
    [
        (("user_id=u1",), "no value for key field(s) order_id"),
        (("user_id=u1", "order_id=x"), "field 'order_id'"),
        (("user_id=u1", "order_id=4", "--family", "zz"), "--family 'zz' is not a family"),
        ((), "no records"),
    ],
)
def test_put_refuses_bad_records_in_one_line(args: tuple[str, ...], words: str) -> None:
    line = one_error_line(run("put", str(ROOT / "tests" / "data" / "records.toml"), *args))
    assert words in line, line


def _schema_copy(tmp_path: Path, source: Path, table: str) -> Path:
    text = source.read_text()
    import re

    text = re.sub(r'(?m)^name = "[^"]+"', f'name = "{table}"', text, count=1)
    path = tmp_path / f"{table}.toml"
    path.write_text(text)
    return path


def _holds_rows(url: str, table: str, rows: int = 1) -> bool:
    """``table`` holds at least ``rows`` rows."""
    from keyshape.errors import KeyshapeError
    from keyshape.store import open_store

    store = open_store(url)
    try:
        return sum(1 for _ in store.scan(table, limit=rows)) >= rows
    except KeyshapeError:
        return False  # not created yet
    finally:
        store.close()


def _interrupt_after(args: list[str], ready: Callable[[], bool]) -> subprocess.CompletedProcess[str]:
    """Run the CLI and send it Ctrl-C once ``ready()`` (it has acknowledged something): on a busy
    machine its start alone can take longer than any fixed wait."""
    import signal

    # A shell without job control starts background jobs with SIGINT ignored, and a child inherits
    # that (Python then never raises KeyboardInterrupt): give the command Ctrl-C's default back.
    proc = subprocess.Popen(
        [sys.executable, "-m", "keyshape.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 120
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # a batch HBase has stored is one the command has heard acknowledged a moment later
        assert proc.poll() is None, "finished before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def _row_count(url: str, table: str) -> int:
    from keyshape.store import open_store

    store = open_store(url)
    try:
        return sum(1 for _ in store.scan(table, columns=[b"d"]))
    finally:
        store.close()


@pytest.mark.hbase
def test_ctrl_c_during_load_says_how_many_rows_were_acknowledged_and_they_are_stored(hbase, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """It printed `error: aborted`. Every row it calls acknowledged must be in the table."""
    import re
    import uuid

    table = f"ctrlc_{uuid.uuid4().hex[:8]}"
    schema = _schema_copy(tmp_path, ORDERS, table)
    # 5 batches stored: with 2 batches in flight, the command has been answered for some of them
    # (a stored row alone can be a batch whose answer a busy command has not read yet)
    proc = _interrupt_after(["load", str(schema), "--hbase", hbase.url, "--rows", "50000000"], lambda: _holds_rows(hbase.url, f"shop:{table}", 5000))
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "aborted" not in proc.stderr
    found = re.search(r"interrupted: ([\d,]+) of 50,000,000 rows written and acknowledged", proc.stderr)
    assert found, proc.stderr
    acknowledged = int(found.group(1).replace(",", ""))
    assert acknowledged > 0
    assert _row_count(hbase.url, f"shop:{table}") >= acknowledged


@pytest.mark.hbase
def test_ctrl_c_during_migrate_names_the_checkpoint_and_resume_finishes(hbase, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import uuid

    tag = uuid.uuid4().hex[:8]
    old = _schema_copy(tmp_path, ORDERS, f"mig_old_{tag}")
    new_text = old.read_text().replace(f"mig_old_{tag}", f"mig_new_{tag}").replace("buckets = 100", "buckets = 40")
    new = tmp_path / "new.toml"
    new.write_text(new_text)
    assert run("load", str(old), "--hbase", hbase.url, "--rows", "20000", "--settle", "0").returncode == 0
    state = tmp_path / "state.json"
    args = ["migrate", str(old), str(new), "--hbase", hbase.url, "--state", str(state), "--max-rows-per-sec", "1000", "--batch-size", "100"]
    proc = _interrupt_after(args, state.exists)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"the checkpoint {state} holds every acknowledged batch" in proc.stderr
    assert "--resume" in proc.stderr and state.exists()
    resumed = run(*args[:-4], "--resume", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert "verify: OK" in resumed.stdout


def test_a_port_that_is_not_zookeeper_is_named_as_such() -> None:
    """A master or region server port accepts the connection and never speaks ZooKeeper: that was
    'ZooKeeper ... does not name an HBase master ... is HBase (still) starting?'."""
    import socket
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    port = server.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])  # accept, then say nothing
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        line = one_error_line(run("analyze", "--hbase", f"127.0.0.1:{port}", "--table", "t"))
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        server.close()
    assert "did not answer as ZooKeeper" in line and "2181" in line and "still) starting" not in line


def test_a_port_where_nothing_listens_says_zookeeper_cannot_be_reached() -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    line = one_error_line(run("analyze", "--hbase", f"127.0.0.1:{port}", "--table", "t"))
    assert f"cannot reach ZooKeeper at 127.0.0.1:{port}" in line


@pytest.mark.hbase
def test_watch_on_an_idle_table_reports_its_regions_and_exits_0(hbase) -> None:  # type: ignore[no-untyped-def]
    """It exited 2 ('no write requests were counted') without any report."""
    import uuid

    from keyshape.schema import FamilySpec, TableSpec
    from keyshape.store import ensure_table, open_store

    name = f"idle_{uuid.uuid4().hex[:8]}"
    store = open_store(hbase.url)
    try:
        ensure_table(store, TableSpec(name=name, families=[FamilySpec("cf")]), [b"m"])
        proc = run("watch", name, "--hbase", hbase.url, "--interval", "1", "--samples", "2")
        assert proc.returncode == 0, proc.stderr
        assert f"{name}: 2 region(s), idle" in proc.stdout and "IDLE" in proc.stdout
        assert "no write requests in 2 poll(s)" in proc.stdout
    finally:
        store.delete_table(name)
        store.close()


@pytest.mark.hbase
def test_watch_json_to_stdout_is_pure_json(hbase) -> None:  # type: ignore[no-untyped-def]
    """watch had no --json; with `--json -` stdout holds the JSON alone (the view goes to stderr)."""
    import json
    import threading
    import uuid

    from keyshape.schema import FamilySpec, TableSpec
    from keyshape.store import ensure_table, open_store

    name = f"wjson_{uuid.uuid4().hex[:8]}"
    store = open_store(hbase.url)
    ensure_table(store, TableSpec(name=name, families=[FamilySpec("cf")]), [b"m"])
    stop = threading.Event()

    def write() -> None:  # a steady trickle of puts while watch polls
        i = 0
        while not stop.is_set():
            store.put(name, f"k{i:08d}".encode(), {b"cf:q": b"v"})
            i += 1
            time.sleep(0.005)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        proc = run("watch", name, "--hbase", hbase.url, "--interval", "1", "--samples", "3", "--json", "-")
    finally:
        stop.set()
        writer.join()
        store.delete_table(name)
        store.close()
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["name"] == name and data["verdict"] in ("balanced", "skewed", "hotspot")
    assert data["rows"] > 0 and len(data["regions"]) == 2
    assert "busiest region" in proc.stderr


def test_lint_of_a_schema_without_workload_does_not_invent_values_too_wide(tmp_path: Path) -> None:
    """lint and load used default UUIDs (36 bytes) for a width-4 field and failed on them."""
    schema = tmp_path / "narrow.toml"
    schema.write_text(
        '[table]\nname = "t"\n[key]\nseparator = "_"\n[[key.fields]]\nname = "code"\ntype = "string"\n'
        'width = 4\n[[key.fields]]\nname = "raw"\ntype = "bytes"\nwidth = 3\n'
    )
    proc = run("lint", str(schema))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "workload-invalid" not in proc.stdout + proc.stderr
    from keyshape import KeySchema
    from keyshape.workload import generate

    s = KeySchema.load(schema)
    cols = next(generate(s, rows=2_000, seed=1, chunk_rows=2_000))
    keys = s.encode_many(cols)
    assert all(len(k) == 4 + 1 + 3 for k in keys)
    assert all(s.decode(k) == {"code": c, "raw": r} for k, c, r in zip(keys[:200], cols["code"][:200], cols["raw"][:200]))


ATTRS_TOML = """[table]
name = "{name}"
max_filesize = 4194304
memstore_flushsize = 2097152
durability = "ASYNC_WAL"
region_replication = 1
split_policy = "constant"
[key]
[[key.fields]]
name = "id"
type = "int64"
[splits]
algorithm = "uniform"
regions = 3
"""


def test_table_attributes_appear_in_the_shell_statement(tmp_path: Path) -> None:
    schema = tmp_path / "attrs.toml"
    schema.write_text(ATTRS_TOML.format(name="attrs_t"))
    proc = run("create", str(schema), "--dry-run")
    assert proc.returncode == 0, proc.stderr
    for part in (
        "MAX_FILESIZE => '4194304'",
        "MEMSTORE_FLUSHSIZE => '2097152'",
        "DURABILITY => 'ASYNC_WAL'",
        "SPLIT_POLICY => 'org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy'",
    ):
        assert part in proc.stdout


@pytest.mark.parametrize(
    "line,words",
    [
        ("max_filesize = 1000", "max_filesize"),
        ("memstore_flushsize = 10", "memstore_flushsize"),
        ('durability = "MAYBE"', "durability"),
        ('split_policy = "sometimes"', "unknown split policy 'sometimes'"),
        ("region_replication = 0", "region_replication"),
    ],
)
def test_bad_table_attributes_are_one_line_errors(tmp_path: Path, line: str, words: str) -> None:
    schema = tmp_path / "bad.toml"
    schema.write_text(
        ATTRS_TOML.format(name="t")
        .replace('durability = "ASYNC_WAL"', line if line.startswith("durability") else 'durability = "ASYNC_WAL"')
        .replace("max_filesize = 4194304", line if line.startswith("max_") else "max_filesize = 4194304")
        .replace("memstore_flushsize = 2097152", line if line.startswith("memstore") else "memstore_flushsize = 2097152")
        .replace('split_policy = "constant"', line if line.startswith("split") else 'split_policy = "constant"')
        .replace("region_replication = 1", line if line.startswith("region_") else "region_replication = 1")
    )
    line_out = one_error_line(run("create", str(schema), "--dry-run"))
    assert words in line_out


@pytest.mark.hbase
def test_create_applies_the_table_attributes_of_the_schema(hbase, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """No way to set MAX_FILESIZE, MEMSTORE_FLUSHSIZE (or any table attribute) from a schema."""
    import uuid

    from keyshape.store import open_store

    name = f"attrs_{uuid.uuid4().hex[:8]}"
    schema = tmp_path / "attrs.toml"
    schema.write_text(ATTRS_TOML.format(name=name))
    assert run("create", str(schema), "--hbase", hbase.url).returncode == 0
    store = open_store(hbase.url)
    try:
        got = store.table_attributes(name)  # type: ignore[attr-defined]
        assert got["MAX_FILESIZE"] == "4194304" and got["MEMSTORE_FLUSHSIZE"] == "2097152"
        assert got["DURABILITY"] == "ASYNC_WAL"
        assert got["SPLIT_POLICY"].endswith("ConstantSizeRegionSplitPolicy")
    finally:
        store.delete_table(name)
        store.close()


@pytest.mark.parametrize(
    "share,cell,prose",
    [
        (0.0625, "6.3%", "6.3%"),
        (0.125, "12.5%", "12.5%"),
        (0.00125, "0.1%", "0.1%"),
        (0.0004, "0.0%", "0.04%"),
        (1 / 3, "33.3%", "33.3%"),
        (1.0, "100.0%", "100%"),
        (0.0, "0.0%", "0%"),
    ],
)
def test_shares_round_half_up_everywhere(share: float, cell: str, prose: str) -> None:
    """The table said 6.2% where the heat map's hover (JavaScript's toFixed) said 6.3%; the prose
    said 'fair share 12%' for 12.5%."""
    from keyshape.analysis.stats import percent, percent_cell
    from keyshape.report.heatmap_html import HEATMAP_JS

    assert percent_cell(share) == cell and percent(share) == prose
    assert "(100 * x).toFixed(1)" in HEATMAP_JS


def test_a_barely_split_salted_table_is_told_to_pre_split_not_to_hash_another_field() -> None:
    import random

    from keyshape.analysis import analyze
    from keyshape.analysis.verdict import SchemaHints

    rng = random.Random(5)
    # 16 salt buckets over 2 regions (split at bucket 8); 80% of the writes in buckets 0..7.
    keys = [bytes([rng.randrange(8) if rng.random() < 0.8 else rng.randrange(8, 16)]) + rng.randbytes(8) for _ in range(40_000)]
    a = analyze(keys, [bytes([8])], hints=SchemaHints(prefix_strategy="mod", buckets=16, real_keys=True))
    assert a.verdict in ("skewed", "hotspot"), a.reasons
    assert any("pre-split it on the buckets" in x for x in a.advice), a.advice
    assert not any("higher-cardinality field" in x for x in a.advice), a.advice


def test_a_hot_region_walking_through_a_live_table_is_not_told_to_take_sampled_splits() -> None:
    """watch on a time-leading table (request counters: no keys, so no write order) advised split
    points from quantiles, while analyze said sampled splits cannot cover future keys."""
    import numpy as np

    from keyshape.analysis.stats import distribution, uniform_baseline
    from keyshape.analysis.verdict import Evidence, SchemaHints, judge

    totals = np.full(8, 1_000)
    ev = Evidence(
        rows=8_000,
        regions=8,
        total=distribution(totals),
        total_baseline=uniform_baseline(8_000, 8),
        hot_window_share=0.97,
        hot_window_baseline=0.2,
        hot_direction=1.0,
        hot_regions_seen=8,
        hottest_label="r7",
        hottest_edge=True,
        increasing=0.0,
        decreasing=0.0,
        hints=SchemaHints(real_keys=True),
    )
    v = judge(ev)
    assert v.verdict == "hotspot"
    text = " ".join(v.advice)
    assert "walks up the key space" in text and "salt or hash prefix" in text
    assert "quantiles" not in text and "sample" not in text.replace("sampled or not", "")


def test_scan_count_prints_the_number_of_matching_rows() -> None:
    """A 50k-row secure scan took 54-98 s drawing rows; --count draws none."""
    whole = run("scan", str(ORDERS), "--load-rows", "3000", "--count")
    assert whole.returncode == 0 and whole.stdout.strip() == "3000", whole.stderr
    user = "user0000001"
    listed = run("scan", str(ORDERS), "--load-rows", "3000", f"user_id={user}", "--limit", "1000")
    counted = run("scan", str(ORDERS), "--load-rows", "3000", f"user_id={user}", "--count")
    import re

    shown = int(re.search(r": (\d+) rows", listed.stdout).group(1))  # type: ignore[union-attr]
    assert counted.stdout.strip() == str(shown)
    assert run("scan", str(ORDERS), "--load-rows", "3000", "--count", "--limit", "10").stdout.strip() == "10"


def test_a_long_run_without_a_terminal_says_once_how_long_it_will_take() -> None:
    """--rows huge: piped output draws no bar, but a run of minutes says so after its first seconds."""
    import io

    from rich.console import Console

    from keyshape.report.terminal import progress_bar

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=False, width=200)
    with progress_bar(console, 1_000_000, "generating and assigning keys") as update:
        update(1_000)  # too early to judge
        time.sleep(2.1)
        update(10_000)  # 1% of the rows after 2 s: still too little to judge by
        update(60_000)  # 6%: the estimate rests on enough rows (5% or 10 s)
    lines = buf.getvalue().strip().splitlines()
    assert len(lines) == 1 and "1,000,000 rows at ~" in lines[0] and "in all (an estimate from the first 60,000 rows)" in lines[0]
    quiet = io.StringIO()
    with progress_bar(Console(file=quiet, force_terminal=False), 1_000, "short") as update:
        time.sleep(2.1)
        update(999)
    assert quiet.getvalue() == ""


def test_a_broken_socket_is_an_error_line_while_a_closed_stdout_is_quiet(tmp_path: Path) -> None:
    """Only stdout's reader going away ends quietly; a connection that breaks mid-command (an
    HBase server dying: BrokenPipeError on its socket) is reported, not swallowed."""
    script = tmp_path / "boom.py"
    script.write_text(
        "import click, sys\n"
        "from keyshape.cli.main import _Group\n"
        "@click.group(cls=_Group)\n"
        "def g():\n    pass\n"
        "@g.command()\n"
        "def boom():\n    raise BrokenPipeError(32, 'Broken pipe (connection to 127.0.0.1:16020)')\n"
        "g()\n"
    )
    proc = subprocess.run([sys.executable, str(script), "boom"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: [Errno 32] Broken pipe (connection to 127.0.0.1:16020)"


def test_a_server_that_answered_before_and_now_closes_at_once_is_retried_not_called_tls() -> None:
    """A region server dying under a load accepts and closes: that was 'it may require TLS or
    Kerberos', a SecurityError that ended the load instead of a retry on the region's new server."""
    import socket
    import threading

    from keyshape.store.hbase.auth import Channel, SecurityError

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def serve() -> None:
        first, _ = server.accept()
        first.sendall(b"x")  # the first connection is answered
        second, _ = server.accept()
        second.close()  # the second is closed without a word
        first.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    where = f"127.0.0.1:{port}"
    a = Channel(socket.create_connection(("127.0.0.1", port)), where)
    assert a.recv(1) == b"x"
    b = Channel(socket.create_connection(("127.0.0.1", port)), where)
    with pytest.raises(ConnectionResetError):
        b.recv(1)
    t.join()
    server.close()
    # An address that never answered still gets the hint.
    lone = socket.socket()
    lone.bind(("127.0.0.1", 0))
    lone.listen(1)
    c = Channel(socket.create_connection(lone.getsockname()), f"127.0.0.1:{lone.getsockname()[1]}")
    lone.accept()[0].close()
    with pytest.raises(SecurityError, match="may require TLS"):
        c.recv(1)
    lone.close()


@pytest.mark.parametrize(
    "command",
    [
        "analyze examples/orders.toml",
        "get examples/records/orders.toml user_id=u1 order_id=4",
        "put examples/records/orders.toml user_id=u1 order_id=4 product_id=p1",
        "index lookup examples/records/orders.toml by_product product_id=p1",
        "ids take examples/records/orders.toml order_id",
    ],
)
def test_user_without_hbase_is_refused_on_every_command(command: str) -> None:
    import shlex

    line = one_error_line(run(*shlex.split(command), "--user", "bob"))
    assert "--user works with --hbase only" in line


@pytest.mark.hbase
def test_the_shared_user_option_is_the_user_the_connection_acts_as(hbase) -> None:  # type: ignore[no-untyped-def]
    """--user was on 4 commands; the shared option reaches every store opened for a command."""
    import click

    from keyshape.cli.hbase import _open
    from keyshape.cli.options import USER_KEY

    with click.Context(click.Command("x")) as ctx:
        ctx.meta[USER_KEY] = "bob"
        store = _open(hbase.url)
        try:
            assert store.user == "bob"  # type: ignore[attr-defined]
        finally:
            store.close()
    for command in (
        ["split-plan", "--help"],
        ["migrate", "--help"],
        ["admin", "regions", "--help"],
        ["phoenix", "catalog", "--help"],
        ["grant", "--help"],
        ["get", "--help"],
    ):
        assert "--user NAME" in run(*command).stdout, command
