"""Region administration through the Store protocol, the same on every store: split a region at
an explicit key (HBase Admin ``split(table, splitPoint)``), move a region, list the region servers
and switch the balancer. On HBase, split and move go through the master (SplitTableRegionProcedure,
MoveRegion) and are read back from hbase:meta.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from keyshape.errors import StoreError
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import EmbeddedStore, ensure_table
from keyshape.store.base import Store


def _embedded(request: pytest.FixtureRequest) -> Store:
    return EmbeddedStore(servers=2)


def _hbase(request: pytest.FixtureRequest) -> Store:
    from keyshape.store.hbase import HBaseStore

    return HBaseStore.from_url(request.getfixturevalue("hbase").url)


@pytest.fixture(params=[pytest.param(_embedded, id="embedded"), pytest.param(_hbase, id="hbase", marks=pytest.mark.hbase)])
def store(request: pytest.FixtureRequest) -> Iterator[Store]:
    opened = request.param(request)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def table(store: Store) -> Iterator[str]:
    spec = TableSpec(name=f"ks_admin_{uuid.uuid4().hex[:10]}", families=[FamilySpec("cf")])
    ensure_table(store, spec, [b"g", b"p"])
    try:
        yield spec.full_name
    finally:
        store.delete_table(spec.full_name)


def test_split_at_a_key_gives_exactly_the_two_daughters_and_keeps_rows(store: Store, table: str) -> None:
    rows = [bytes([c]) + b"-row" for c in b"acghkmpz"]
    with store.writer(table) as w:
        for row in rows:
            w.put(row, {b"cf:q": row})
    daughters = store.split_region(table, b"k", timeout=60)
    assert [(d.start, d.end) for d in daughters] == [(b"g", b"k"), (b"k", b"p")]
    assert [(r.start, r.end) for r in store.regions(table)] == [(b"", b"g"), (b"g", b"k"), (b"k", b"p"), (b"p", b"")]
    assert [r for r, _ in store.scan(table)] == rows
    assert store.get(table, b"k-row") == {b"cf:q": b"k-row"}


def test_split_at_an_existing_region_start_is_refused(store: Store, table: str) -> None:
    with pytest.raises(StoreError, match="already starts there"):
        store.split_region(table, b"g")
    with pytest.raises(StoreError, match="empty key"):
        store.split_region(table, b"")


def test_region_servers_count_every_region_of_the_table(store: Store, table: str) -> None:
    hosting: dict[str, int] = {}
    for region in store.regions(table):
        hosting[region.server] = hosting.get(region.server, 0) + 1
    deadline = time.monotonic() + 60  # HBase servers report their loads every 3 s (later on a busy machine)
    while True:
        servers = store.region_servers()
        counts = {s.name: s.regions for s in servers}
        if all(counts.get(name, 0) >= n for name, n in hosting.items()) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert [s.name for s in servers] == sorted(counts)
    assert set(hosting) <= set(counts)
    assert all(counts[name] >= n for name, n in hosting.items()), (counts, hosting)


def test_move_region_to_its_own_server_or_another(store: Store, table: str) -> None:
    region = store.regions(table)[1]
    assert store.move_region(region.name, region.server) == region.server
    others = [s.name for s in store.region_servers() if s.name != region.server]
    if not others:
        with pytest.raises(StoreError, match="only live region server"):
            store.move_region(region.name)
        return
    assert store.move_region(region.name) in others
    moved = store.regions(table)[1]
    assert moved.server in others and (moved.start, moved.end) == (region.start, region.end)
    assert store.move_region(region.name, region.server) == region.server
    assert store.regions(table)[1].server == region.server


def test_move_to_an_unknown_server_names_the_live_ones(store: Store, table: str) -> None:
    region = store.regions(table)[0]
    with pytest.raises(StoreError, match="live ones|its servers"):
        store.move_region(region.name, "nowhere:1")
    with pytest.raises(StoreError):
        store.move_region("no_such_table,,1.0123456789abcdef0123456789abcdef.")


def test_balancer_switch_returns_the_previous_state(store: Store) -> None:
    before = store.set_balancer(False)
    try:
        assert store.set_balancer(False) is False
        assert store.set_balancer(True) is False
        assert store.set_balancer(True) is True
    finally:
        store.set_balancer(before)


@pytest.mark.hbase
def test_admin_cli_splits_lists_and_refuses_in_one_line(hbase: Any) -> None:
    from keyshape.store.hbase import HBaseStore

    with HBaseStore.from_url(hbase.url) as hb:
        name = f"ks_admin_cli_{uuid.uuid4().hex[:8]}"
        ensure_table(hb, TableSpec(name=name, families=[FamilySpec("cf")]), [b"\x10"])
        try:

            def cli(*args: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run(
                    [sys.executable, "-m", "keyshape.cli", "admin", *args, "--hbase", hbase.url], capture_output=True, text=True, timeout=120
                )

            done = cli("split", name, "\\x10\\x80")
            assert done.returncode == 0, done.stderr
            assert [(r.start, r.end) for r in hb.regions(name)] == [(b"", b"\x10"), (b"\x10", b"\x10\x80"), (b"\x10\x80", b"")]
            listed = cli("regions", name)
            assert listed.returncode == 0 and "\\x10\\x80" in listed.stdout
            refused = cli("split", name, "\\x10")
            assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
            assert "already starts there" in refused.stderr
            servers = cli("servers")
            assert servers.returncode == 0 and hb.regions(name)[0].server in servers.stdout
        finally:
            hb.delete_table(name)
