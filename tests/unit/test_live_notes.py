"""``keyshape.ops.sample.analyze_table`` carries what a kind of schema adds to a live table's analysis
(``keyshape.ops.live_notes``): a salted Phoenix table's salt buckets (registered by
``keyshape.phoenix.schema``), on the embedded store. The same analysis against a Phoenix-written
table on a real HBase: tests/phoenix/test_phoenix_live.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from existing_tables import fill, write_schema

from keyshape.ops import live_notes as registry
from keyshape.ops.live_notes import register_live_notes
from keyshape.ops.sample import analyze_table
from keyshape.schema import KeySchema, load_schema
from keyshape.store import EmbeddedStore, create_table_from_schema

DDL = "CREATE TABLE NOTES_T (K VARCHAR NOT NULL PRIMARY KEY, V VARCHAR) SALT_BUCKETS=4"


def test_a_registered_kind_adds_its_notes_and_others_do_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = EmbeddedStore()
    _, schema = write_schema(tmp_path, "seq")
    create_table_from_schema(store, schema)
    fill(store, schema, 300)

    class Other(KeySchema):
        pass

    seen: list[Any] = []
    monkeypatch.setattr(registry, "_NOTES", {})
    register_live_notes(KeySchema, lambda s, live: seen.append((s, live.estimated_rows)) or ["a note from the kind"])
    register_live_notes(Other, lambda s, live: ["never: not this kind"])
    live = analyze_table(store, schema.table.full_name, schema, per_region=50)
    assert live.analysis.reasons[-1] == "a note from the kind"
    assert "never: not this kind" not in live.analysis.reasons
    assert seen == [(schema, live.estimated_rows)]
    raw = analyze_table(store, schema.table.full_name, None, per_region=50)  # raw keys: no kind
    assert "a note from the kind" not in raw.analysis.reasons


def test_a_salted_phoenix_table_says_its_buckets_and_the_region_that_holds_several(tmp_path: Path) -> None:
    path = tmp_path / "t.sql"
    path.write_text(DDL + ";\n")
    schema = load_schema(path)
    store = EmbeddedStore()
    # as SPLIT ON ('m') on a salted table: the first region [, 'm') holds every bucket
    store.create_table(schema.table, split_keys=[b"m"])
    with store.writer(schema.table.full_name) as writer:
        for i in range(400):
            writer.put(schema.encode({"K": f"key{i}"}), {b"0:V": b"v"})
    reasons = analyze_table(store, schema.table.full_name, schema, per_region=100).analysis.reasons
    text = " ".join(" ".join(reasons).split())
    assert "Salt buckets: the busiest" in text
    assert "holds salt buckets 00..03" in text
