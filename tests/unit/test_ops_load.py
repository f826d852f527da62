"""``keyshape.ops.load.load_table``: the whole of ``keyshape load`` (create, poll, load, settle,
reconcile, compare with the prediction) called from Python, on the embedded store."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyshape.errors import BadInput, KeyshapeError
from keyshape.ops.load import LoadRun, load_table
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, ensure_table

ORDERS = Path(__file__).resolve().parents[2] / "examples" / "orders.toml"


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


# ------------------------------------------------------------------------------------ watch


def test_watch_table_judges_the_writes_it_saw_and_calls_an_untouched_table_idle() -> None:
    from keyshape.ops.live import load_workload
    from keyshape.ops.watch import watch_table

    schema = KeySchema.load(ORDERS)
    store = EmbeddedStore()
    ensure_table(store, schema.table, schema.split_keys())
    idle = watch_table(store, schema.table.full_name, 0.05, 2, count_splits=False)
    assert idle.idle and idle.analysis is None and idle.servers == []
    as_json = idle.to_dict()
    assert as_json["verdict"] == "idle" and as_json["samples"] == 2 and len(as_json["regions"]) == len(schema.split_keys()) + 1

    def write_once(sample: object) -> None:
        if not written:
            written.append(load_workload(store, schema, 3_000).rows)

    written: list[int] = []
    run = watch_table(store, schema.table.full_name, 0.05, 2, schema=schema, source="test", on_sample=write_once, count_splits=False)
    assert written == [3_000] and not run.idle and run.analysis is not None
    assert int(run.analysis.rows) == 3_000 and sum(s.requests for s in run.servers) == 3_000
    assert run.to_dict()["name"] == schema.table.full_name and run.to_dict()["verdict"] == run.analysis.verdict
    assert run.analysis.label_legend  # the schema's decoded labels on the regions
