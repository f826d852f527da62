"""Paths the type checker made explicit: a split spec built in code without regions, Phoenix
schemas encoding numpy columns, and encode_many given a run-time as_array flag."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from keyshape import KeySchema
from keyshape.core.keyarray import KeyArray
from keyshape.errors import SchemaError
from keyshape.phoenix.schema import load_schema
from keyshape.schema.specs import SplitSpec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _schema() -> KeySchema:
    return KeySchema.from_dict(
        {
            "table": {"name": "t"},
            "key": {"fields": [{"name": "id", "type": "int64"}], "prefix": {"strategy": "mod", "buckets": 8}},
            "splits": {"algorithm": "hex", "regions": 4},
        }
    )


@pytest.mark.parametrize("algorithm", ["hex", "decimal", "uniform"])
def test_a_split_spec_without_regions_is_a_schema_error(algorithm: str) -> None:
    schema = _schema()
    assert len(schema.split_keys()) == 3  # the parsed spec has its regions
    schema.splits = SplitSpec(algorithm, None, {})  # built in code, past parse's checks
    with pytest.raises(SchemaError, match="splits.regions is required"):
        schema.split_keys()


def test_encode_many_takes_a_run_time_as_array_flag() -> None:
    schema = _schema()
    ids = np.arange(50, dtype=np.int64)
    expected = [schema.encode({"id": int(i)}) for i in ids]
    for as_array in (False, True):
        keys = schema.encode_many({"id": ids}, as_array)
        assert isinstance(keys, KeyArray) == as_array
        assert (keys.tolist() if isinstance(keys, KeyArray) else keys) == expected


def test_phoenix_encode_many_takes_numpy_columns() -> None:
    schema = load_schema(EXAMPLES / "phoenix/events.toml")
    records = [{"TENANT": f"tenant{i % 7:05d}", "EVENT_TIME": 1_767_225_600_000 + 5 * i, "EVENT_ID": i} for i in range(40)]
    columns = {
        "TENANT": np.array([r["TENANT"] for r in records]),
        "EVENT_TIME": np.array([r["EVENT_TIME"] for r in records], dtype=np.int64),
        "EVENT_ID": np.array([r["EVENT_ID"] for r in records], dtype=np.int64),
    }
    expected = [schema.encode(r) for r in records]
    assert schema.encode_many(columns) == expected
    assert schema.encode_many(columns, as_array=True).tolist() == expected
