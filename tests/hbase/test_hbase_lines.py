"""Every HBase line tools/hbase runs (issue 34): a compatibility subset on each line other than the
default (which runs the whole suite), byte-level golden vectors and the wire protocol checked
against each line's own jars, and one clear line where a line lacks something.

Lines under test: $KEYSHAPE_HBASE_LINES (comma-separated, any line whose server Maven Central can
assemble, e.g. 2.6.1), else one line of each other minor release (2.4.18, 2.5.11): a patch release of
the default's own minor line (2.6.1 beside 2.6.4) has the same protocol and byte functions, which
the jars-level checks below prove for every line, so its server is not started by default.
One line's HBase runs at a time
(module-scoped, parametrized: pytest groups the tests by line), in tools/hbase/run/pytest-line-V/
on free loopback ports, stopped and deleted after its tests. The subset, each through the real
`keyshape` command where users call it: create pre-split, load, scan (cell blocks), merged scan
over the salt buckets, region loads, split, watch, migrate. Kerberos on another line:
tests/secure/test_hbase_lines_secure.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import standalone  # tools/hbase/standalone.py

ROOT = Path(__file__).resolve().parents[2]
OLD = ROOT / "examples" / "migrate" / "events-mod16.toml"  # ns:events, 16 buckets, 8 regions
NEW = ROOT / "examples" / "migrate" / "events-mod32.toml"  # ns:events32, 32 buckets
ROWS = 20_000


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


RUNNABLE = [v for v, line in standalone.LINES.items() if line.artifact and _minor(v) != _minor(standalone.DEFAULT_VERSION)]


def lines_under_test() -> list[str]:
    raw = os.environ.get("KEYSHAPE_HBASE_LINES", "").strip()
    return [v.strip() for v in raw.split(",") if v.strip()] if raw else RUNNABLE


pytestmark = [pytest.mark.hbase, pytest.mark.hbase_lines]


def ks(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def ok(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc.stdout


@pytest.fixture(scope="module", params=lines_under_test())
def line_hbase(request: pytest.FixtureRequest) -> Iterator[Any]:
    version = request.param
    try:
        instance = standalone.start_scratch(Path(standalone.HERE) / "run" / f"pytest-line-{version}", version=version)
    except (standalone.StartFailed, standalone.UnknownVersion) as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield instance
    finally:
        instance.stop()


@pytest.fixture(scope="module")
def loaded(line_hbase: Any) -> Any:
    """ns:events created pre-split from OLD and loaded with ROWS rows through the CLI."""
    ok(ks("create", str(OLD), "--hbase", line_hbase.url))
    ok(ks("load", str(OLD), "--hbase", line_hbase.url, "--rows", str(ROWS)))
    return line_hbase


def store(instance: Any) -> Any:
    from keyshape.store.hbase import HBaseStore

    return HBaseStore.from_url(instance.url)


def test_the_line_that_runs_is_the_line_asked_for(line_hbase: Any) -> None:
    """The master's own log names its version: the jars on the classpath are the line's."""
    log = line_hbase.master_log.read_text(errors="replace")
    assert re.search(rf"HBase {re.escape(line_hbase.version)}\b", log), log[:500]
    assert line_hbase.lib == standalone.LINES[line_hbase.version].lib
    assert any(line_hbase.lib.glob(f"hbase-server-{line_hbase.version}*.jar"))


def test_create_pre_split_and_load(loaded: Any) -> None:
    with store(loaded) as s:
        regions = s.regions("ns:events")
        assert len(regions) == 8
        assert regions[0].start == b"" and regions[-1].end == b""
        assert all(a.end == b.start for a, b in zip(regions, regions[1:]))
        assert sum(1 for _ in s.scan("ns:events", batch_size=2_000)) == ROWS  # cell-block scan


def test_merged_scan_returns_rows_in_original_key_order(loaded: Any) -> None:
    out = ok(ks("scan", str(OLD), "--hbase", loaded.url, "--count"))
    assert re.search(rf"\b{ROWS:,}\b|\b{ROWS}\b", out), out
    out = ok(ks("scan", str(OLD), "--hbase", loaded.url, "--limit", "200", "--wide"))  # whole keys
    keys = re.findall(r"│ (\d\d_dev\d{6}_\d+) │", out)
    assert len(keys) == 200, out[-1000:]
    originals = [k.split("_", 1)[1] for k in keys]
    assert originals == sorted(originals)
    assert len({k[:2] for k in keys}) > 1  # the merge really crossed buckets


def test_region_loads_count_the_writes(loaded: Any) -> None:
    with store(loaded) as s:
        regions = s.regions("ns:events")
    # Each server's own GetRegionLoad: the load's puts are all counted (a multi counts per row).
    assert sum(r.write_requests for r in regions) >= ROWS
    assert all(r.write_requests > 0 for r in regions)
    assert all(r.reported_ms > 0 for r in regions)


def test_watch_reports_every_region(loaded: Any) -> None:
    """watch polls the region loads while rows trickle in: every region, the writes seen."""
    import threading

    stop = threading.Event()
    written: list[bytes] = []

    def write() -> None:
        with store(loaded) as s:
            while not stop.is_set():
                key = f"{len(written) % 16:02d}_watch{len(written):08d}".encode()
                s.put("ns:events", key, {b"d:v": b"x"})
                written.append(key)
                time.sleep(0.005)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        proc = ks("watch", "ns:events", "--hbase", loaded.url, "--interval", "1", "--samples", "3", "--json", "-")
    finally:
        stop.set()
        writer.join()
        with store(loaded) as s:  # keys outside the schema: gone before migrate reads the table
            for key in written:
                s.delete("ns:events", key)
    data = json.loads(ok(proc))
    with store(loaded) as s:
        count = len(s.regions("ns:events"))
    assert data["name"] == "ns:events" and len(data["regions"]) == count
    assert data["rows"] > 0 and data["verdict"] in ("balanced", "skewed", "hotspot")


def test_split_at_a_key(loaded: Any) -> None:
    with store(loaded) as s:
        before = s.regions("ns:events")
    key = "03_dev000500"
    ok(ks("admin", "split", "ns:events", key, "--hbase", loaded.url))
    with store(loaded) as s:
        after = s.regions("ns:events")
        assert len(after) == len(before) + 1
        assert any(r.start == key.encode() for r in after)
        assert sum(1 for _ in s.scan("ns:events", batch_size=2_000)) == ROWS


def test_migrate_copies_every_row_and_verifies(loaded: Any, tmp_path: Path) -> None:
    out = ok(ks("migrate", str(OLD), str(NEW), "--hbase", loaded.url, "--state", str(tmp_path / "m.state"), timeout=900))
    assert re.search(r"verif", out, re.I), out[-1500:]
    with store(loaded) as s:
        assert sum(1 for _ in s.scan("ns:events32", batch_size=2_000)) == ROWS
        assert len(s.regions("ns:events32")) > 1


# SNAPPY: the 2.6 lines through the pure-Java codecs of hbase-compression-aircompressor (only plain
# 2.6.1 on Maven Central); the other -hadoop3 lines through Hadoop 3.3's SnappyCodec (snappy-java).
# 2.4.18 is built on Hadoop 2.10, whose SnappyCodec needs libhadoop's native snappy.
SNAPPY_WORKS = {v for v, line in standalone.LINES.items() if line.hadoop == "3"}


def test_a_compressed_family_works_where_the_line_has_a_codec(line_hbase: Any) -> None:
    proc = ks("create", str(ROOT / "examples" / "orders.toml"), "--hbase", line_hbase.url)
    if line_hbase.version in SNAPPY_WORKS:
        ok(proc)
        with store(line_hbase) as s:
            assert s.describe_table("shop:orders")["d"]["COMPRESSION"] == "SNAPPY"
            s.put("shop:orders", b"00_probe", {b"d:v": b"snappy" * 100})
            s.flush_table("shop:orders")  # an HFile written through the codec
            assert s.get("shop:orders", b"00_probe") == {b"d:v": b"snappy" * 100}
        return
    assert proc.returncode != 0
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert re.search(r"snappy|compress", lines[0], re.I), lines[0]


@pytest.mark.parametrize("compression", ["SNAPPY", "LZ4", "ZSTD"])
def test_bulk_copy_into_a_compressed_family(line_hbase: Any, tmp_path: Path, compression: str) -> None:
    """Read back equal where the line reads the codec, else HBase's refusal in one line
    (tests/hbase/test_bulkload_compression.py, which runs the default line)."""
    from test_bulkload_compression import copy_on_a_line

    copy_on_a_line(line_hbase, tmp_path, compression)


# --- no server needed: the line's own jars ------------------------------------------------------


def _golden_classpath(version: str) -> str:
    jars = standalone.client_jars(version)
    found = standalone.LINES[version]
    if found.artifact is not None:
        return f"{found.lib}/*"
    # 3.0.0-beta-1: its own HBase jars, other projects' classes from the default line.
    others = [
        p for p in sorted(standalone.LIB.glob("*.jar")) if not p.name.startswith("hbase-") or p.name.startswith(("hbase-shaded-", "hbase-unsafe"))
    ]
    return ":".join(str(p) for p in [*jars, *others])


@pytest.mark.parametrize("version", list(standalone.LINES))
def test_golden_vectors_are_the_same_on_every_line(version: str, tmp_path: Path) -> None:
    """tools/golden/GoldenVectors.java (Bytes, OrderedBytes, RegionSplitter, MD5Hash, MurmurHash3)
    compiled and run against each line's jars prints exactly tests/data/hbase_golden.json (made
    by tools/golden/run.sh from the default line's jars): keyshape's byte functions hold on every line."""
    cp = _golden_classpath(version)
    src = ROOT / "tools" / "golden" / "GoldenVectors.java"
    subprocess.run(["javac", "-nowarn", "-d", str(tmp_path), "-cp", cp, str(src)], check=True, capture_output=True, timeout=300)
    out = subprocess.run(["java", "-cp", f"{tmp_path}:{cp}", "GoldenVectors"], check=True, capture_output=True, text=True, timeout=300).stdout
    assert json.loads(out) == json.loads((ROOT / "tests" / "data" / "hbase_golden.json").read_text())


# Messages whose fields hbase-driver's classes know but a line's .proto files lack (2.4.18 predates
# them: balancer dry runs, store file trackers, ModifyTableRequest.reopen_regions,
# RestoreSnapshotRequest.customSFT, ExceptionResponse.server_overloaded). keyshape sends and reads
# none of them (checked against the store's source below); every other line has every field.
ABSENT_ON = {
    "2.4.18": {
        "BalanceRequest",
        "BalanceResponse",
        "ExceptionResponse",
        "ModifyColumnStoreFileTrackerRequest",
        "ModifyColumnStoreFileTrackerResponse",
        "ModifyTableRequest",
        "ModifyTableStoreFileTrackerRequest",
        "ModifyTableStoreFileTrackerResponse",
        "RestoreSnapshotRequest",
    },
}


@pytest.mark.parametrize("version", list(standalone.LINES))
def test_the_wire_protocol_keyshape_speaks_is_in_every_lines_proto_files(version: str) -> None:
    # tests/unit/test_protocol_compat.py by its path: since the tests live in folders, tests/unit is
    # on sys.path only when pytest collected it in the same session (not in a run of tests/hbase).
    import importlib.util

    spec = importlib.util.spec_from_file_location("protocol_compat", ROOT / "tests" / "unit" / "test_protocol_compat.py")
    assert spec is not None and spec.loader is not None
    compat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compat)
    MODULES, _driver_fields, _proto_fields = compat.MODULES, compat._driver_fields, compat._proto_fields

    jar = next(j for j in standalone.client_jars(version) if "protocol-shaded" in j.name)
    missing: set[tuple[str, str, int]] = set()
    with zipfile.ZipFile(jar) as z:
        names = z.namelist()
        for module in MODULES:
            path = next(n for n in names if n.endswith(f"/{module}.proto") or n == f"{module}.proto")
            missing |= _driver_fields(module) - _proto_fields(z.read(path).decode("utf-8"))
    source = "\n".join(p.read_text() for p in (ROOT / "src" / "keyshape" / "store" / "hbase").glob("*.py"))
    used = {(m, f) for m, f, _ in missing if re.search(rf"\b{re.escape(m.split('.')[-1])}\b", source) and re.search(rf"[.\s(]{f}\b\s*[=)]?", source)}
    assert not used, f"HBase {version} lacks fields keyshape uses: {sorted(used)}"
    assert {m for m, _, _ in missing} == ABSENT_ON.get(version, set()), sorted(missing)[:10]


def test_an_unknown_version_is_one_line_and_exit_2() -> None:
    for args in (["start", "--version", "2.7.0"], ["fetch", "--version", "banana"]):
        proc = subprocess.run(
            [sys.executable, str(standalone.HERE / "standalone.py"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "KEYSHAPE_HBASE_RUN_DIR": "/nonexistent/ks-run"},
        )
        assert proc.returncode == 2
        assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr, proc.stderr
        assert "unknown HBase version" in proc.stderr and "2.6.4" in proc.stderr


def test_a_line_without_a_server_on_maven_central_says_why_in_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, str(standalone.HERE / "standalone.py"), "start", "--version", "3.0.0-beta-1"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "KEYSHAPE_HBASE_RUN_DIR": "/tmp/ks-no-such-run"},
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "3.0.0-beta-1" in proc.stderr and "hbase-zookeeper" in proc.stderr


def test_thrift_on_a_line_without_the_gateway_jar_is_refused_before_any_jvm() -> None:
    instance = standalone.Standalone(run_dir=Path("/tmp/ks-no-such-run"), version="2.5.11")
    with pytest.raises(standalone.StartFailed, match="Thrift.*2.6"):
        instance.start(thrift=True, timeout=1)
    assert instance.master_pid() is None


def test_phoenix_on_a_line_without_its_compat_jar_is_one_line_before_any_jvm() -> None:
    import phoenix_server  # tools/hbase/phoenix_server.py

    instance = phoenix_server.PhoenixStandalone(run_dir=Path("/tmp/ks-no-such-run"), version="2.5.11")
    with pytest.raises(standalone.StartFailed, match=r"Phoenix 5\.2\.1 .*compat-2\.6\.0.*2\.6 lines only") as info:
        instance.start(timeout=1)
    assert "\n" not in str(info.value) and instance.master_pid() is None
