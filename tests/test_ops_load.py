"""``keyshape.ops.load.load_table``: the whole of ``keyshape load`` (create, poll, load, settle,
reconcile, compare with the prediction) called from Python, on the embedded store."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyshape.errors import BadInput, KeyshapeError
from keyshape.ops.load import LoadRun, load_table
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, ensure_table

ORDERS = Path(__file__).resolve().parents[1] / "examples" / "orders.toml"


def test_load_table_creates_loads_and_judges_beside_the_prediction() -> None:
    schema = KeySchema.load(ORDERS)
    store = EmbeddedStore()
    created: list[int] = []
    seen: list[int] = []
    run = load_table(
        store,
        schema,
        4_000,
        batch_size=500,
        settle=5.0,
        source="test",
        progress=lambda done, _: seen.append(done),
        on_created=lambda r: created.append(len(r)),
    )
    assert isinstance(run, LoadRun)
    assert created == [len(schema.split_keys()) + 1] and run.created is not None and len(run.created) == created[0]
    assert run.result.rows == 4_000 and run.result.failed == [] and seen[-1] == 4_000
    assert run.counted == 4_000  # the embedded store's region loads count every write
    assert sum(len(keys) for keys, _ in store.scan_key_times(run.table, b"", b"")) == 4_000
    assert sum(run.predicted_shares.values()) == pytest.approx(1.0)
    assert set(run.predicted_shares) == {r.start for r in run.created}
    assert run.live.verdict == run.predicted.verdict  # same rows, same seed: the prediction holds
    assert sum(s.requests for s in run.servers) == 4_000


def test_load_table_into_an_existing_table_does_not_create() -> None:
    schema = KeySchema.load(ORDERS)
    store = EmbeddedStore()
    ensure_table(store, schema.table, schema.split_keys())
    run = load_table(store, schema, 1_000, settle=1.0, on_created=lambda r: pytest.fail("created an existing table"))
    assert run.created is None and run.result.rows == 1_000 and run.rows == 1_000


def test_load_table_without_a_workload_or_rows_is_bad_input(tmp_path: Path) -> None:
    text = ORDERS.read_text()
    bare = tmp_path / "bare.toml"
    bare.write_text(text[: text.index("[workload]")] if "[workload]" in text else text)
    schema = KeySchema.load(bare)
    assert schema.workload is None
    with pytest.raises(BadInput, match="no \\[workload\\] section") as got:
        load_table(EmbeddedStore(), schema)
    assert isinstance(got.value, KeyshapeError) and isinstance(got.value, ValueError)
