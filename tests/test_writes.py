"""Writes keep one copy of each record under every prefix strategy, never leave an index row
without its main row, and never lose a re-put to a delete in the same millisecond; checked
against a plain dict on the embedded store and on a real HBase."""
from __future__ import annotations

import time
from typing import Any

import pytest
import write_oracle as wo

from keyshape.errors import KeyshapeError, SchemaError
from keyshape.read import IndexedWriter, delete_record, get, put_record, repair_index
from keyshape.read.index import index_key
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, create_table_from_schema, open_store


@pytest.mark.parametrize("strategy,options", wo.STRATEGIES, ids=[s for s, _ in wo.STRATEGIES])
def test_10000_random_writes_match_the_oracle_embedded(strategy: str, options: dict[str, int]) -> None:
    store = EmbeddedStore()
    schema = wo.schema_for(strategy, options)
    oracle = wo.run(store, schema, 10_000, seed=hash(strategy) & 0xFFFF)
    wo.check(store, schema, oracle)
