"""``keyshape autopilot`` end to end on the 3-region-server HBase (issue 41): the same loop as
tests/hbase/test_autopilot.py (tests/autopilot_e2e.py) where the designs spread over three
servers: a sequential table and a hot-tenant table, each under an independent writer process,
diagnosed HOTSPOT, learned (write rate within 3x of the writer's), a spreading design chosen
whose replay is near fair, migrated online while the writer writes, cut over, OLD == NEW cell for
cell, and NEW's busiest region share measured live at most ``LIVE_FACTOR`` fair shares."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from autopilot_e2e import check_common, loop, say
from hbase_cluster_fixture import MEASURED

from keyshape.schema import KeySchema
from keyshape.store.hbase import HBaseStore

pytestmark = [pytest.mark.hbase, pytest.mark.hbase_cluster]

RATE = 150.0  # rows a second the writer puts: enough writes an interval for six regions' counters


@pytest.mark.parametrize("tenant", [False, True], ids=["sequential", "hot-tenant"])
def test_autopilot_moves_a_hot_table_to_a_spread_design_on_three_servers(hbase_cluster: Any, tmp_path: Path, tenant: bool) -> None:
    hbase_cluster.all_up()
    with HBaseStore.from_url(hbase_cluster.url) as store:
        name = "apc_tenant" if tenant else "apc_seq"
        r = loop(store, hbase_cluster.url, tmp_path, name, tenant, RATE)
    check_common(r, tmp_path)
    new: KeySchema = r["new_schema"]
    assert new.prefix.salted and r["plan"]["new_regions"] >= 3, (new.prefix, r["plan"]["new_regions"])
    if tenant:
        assert set(new.hash_fields) - {"tenant"}, new.hash_fields  # salted within the tenant
    say("cluster " + name, r)
    MEASURED.append(
        f"autopilot {name}: learned {r['learned']['write_rate']:.1f} vs true {r['true_rate']:.1f} rows/s; replayed busiest "
        f"{r['plan']['current_share']:.2f} -> {r['plan']['new_share']:.2f} over {r['plan']['new_regions']} regions; "
        f"live on NEW {r['after']['busiest_share']:.2f} over {r['after_regions']}"
    )
