"""A copy into another design never moves a row by a value its schema's decode rounds.

A Phoenix TIMESTAMP key column carries nanoseconds below the millisecond; the Phoenix key schema
decodes it to milliseconds (the time axis keyshape draws). Re-encoded, such a key is ANOTHER key,
and two rows that differ only in those nanoseconds become ONE key: the second overwrites the
first. `migrate` (and the online re-keyer, which shares `KeySchema.decode_exact`) rejects such a
row to the reject file instead, counted; rows whose values re-encode exactly are copied."""

from __future__ import annotations

from pathlib import Path

import pytest

from keyshape.errors import KeyshapeError
from keyshape.ops.migrate import migrate
from keyshape.ops.online import ReKeyer
from keyshape.phoenix.schema import PhoenixKeySchema
from keyshape.phoenix.ddl import parse_ddl
from keyshape.phoenix.types import PhoenixTimestamp
from keyshape.store import EmbeddedStore

OLD = "CREATE TABLE EV (HOST VARCHAR NOT NULL, AT TIMESTAMP NOT NULL, CONSTRAINT PK PRIMARY KEY (HOST, AT)) SALT_BUCKETS = 4"
NEW = "CREATE TABLE EV2 (HOST VARCHAR NOT NULL, AT TIMESTAMP NOT NULL, CONSTRAINT PK PRIMARY KEY (HOST, AT)) SALT_BUCKETS = 8"


def schemas() -> tuple[PhoenixKeySchema, PhoenixKeySchema]:
    return PhoenixKeySchema(parse_ddl(OLD)), PhoenixKeySchema(parse_ddl(NEW))


def test_rows_that_differ_only_in_nanoseconds_are_rejected_not_merged(tmp_path: Path) -> None:
    old, new = schemas()
    store = EmbeddedStore()
    for s in (old, new):
        store.create_table(s.table, s.split_keys())
    whole = [old.phoenix.key.encode({"HOST": f"h{i}", "AT": PhoenixTimestamp(1_790_000_000_000 + i)}) for i in range(50)]
    twins = [old.phoenix.key.encode({"HOST": "twin", "AT": PhoenixTimestamp(1_790_000_000_123, n)}) for n in (1, 2)]
    for k in whole + twins:
        store.put(old.table.full_name, k, {b"0:v": k[-4:]})
    assert len(set(twins)) == 2 and new.encode(old.decode(twins[0])) == new.encode(old.decode(twins[1]))  # what a plain decode does

    result = migrate(store, old, new, state_path=tmp_path / "s.json", reject_path=tmp_path / "rejects.tsv")

    assert (result.rows, result.rejected) == (50, 2)
    copied = [k for k, _ in store.scan(new.table.full_name)]
    assert sorted(copied) == sorted(new.encode(old.decode(k)) for k in whole)
    lines = (tmp_path / "rejects.tsv").read_text().splitlines()
    assert len(lines) == 2 and all("does not encode back" in line for line in lines)


def test_the_online_rekeyer_rejects_the_same_keys() -> None:
    old, new = schemas()
    rekeyer = ReKeyer.__new__(ReKeyer)  # only its key function: no store or sink needed
    rekeyer.old, rekeyer.new = old, new
    rejects: list[str] = []
    exact = old.phoenix.key.encode({"HOST": "a", "AT": PhoenixTimestamp(1_790_000_000_000)})
    rounded = old.phoenix.key.encode({"HOST": "a", "AT": PhoenixTimestamp(1_790_000_000_000, 7)})
    assert rekeyer._new_key(exact, rejects) == new.encode({"HOST": "a", "AT": 1_790_000_000_000})
    assert rekeyer._new_key(rounded, rejects) is None and len(rejects) == 1


def test_keyshapes_own_schemas_decode_exactly_and_pay_nothing() -> None:
    from keyshape.schema import KeySchema

    root = Path(__file__).resolve().parents[2]
    schema = KeySchema.load(root / "examples" / "orders.toml")
    assert schema.exact_decode
    key = schema.encode({"user_id": "u-17", "order_time": 1_790_000_000_000, "order_id": 10042})
    assert schema.decode_exact(key) == schema.decode(key)
    old, _ = schemas()
    with pytest.raises(KeyshapeError, match="does not encode back"):
        old.decode_exact(old.phoenix.key.encode({"HOST": "a", "AT": PhoenixTimestamp(5, 1)}))
