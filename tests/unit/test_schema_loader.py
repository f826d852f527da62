"""One loader for every schema file (issue 29): keyshape.schema.load_schema, which KeySchema.load
is, reads keyshape TOML itself and asks the registry of file kinds for the rest; the Phoenix layer
registers Phoenix DDL (.sql) and TOML with [phoenix] into it, so the schema layer names no layer above it."""

from __future__ import annotations

from pathlib import Path

import pytest

import keyshape.phoenix.schema as phoenix_schema
from keyshape.errors import SchemaError
from keyshape.schema import KeySchema, load_schema
from keyshape.schema.loaders import loader_for, loaders, register_loader, unregister_loader

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_every_kind_of_schema_file_loads_through_one_function():
    assert "phoenix" in loaders()
    for path in (EXAMPLES / "phoenix" / "events.sql", EXAMPLES / "phoenix" / "events.toml"):
        direct = phoenix_schema.load_phoenix_schema(path)
        for loaded in (load_schema(path), KeySchema.load(path), phoenix_schema.load_schema(path)):
            assert isinstance(loaded, phoenix_schema.PhoenixKeySchema)
            assert loaded.phoenix.name == direct.phoenix.name and loaded.split_keys() == direct.split_keys()
            assert loaded.field_names == direct.field_names
    orders = EXAMPLES / "orders.toml"
    assert loader_for(orders) is None  # keyshape TOML: the schema layer's own kind
    rec = {"user_id": "user0000042", "order_time": 1767225600000, "order_id": "1234567"}
    assert load_schema(orders).encode(rec) == KeySchema.load(orders).encode(rec) == phoenix_schema.load_schema(orders).encode(rec)


def test_a_registered_kind_is_read_by_its_loader_and_must_give_a_key_schema(tmp_path: Path):
    orders = KeySchema.load(EXAMPLES / "orders.toml")
    good, bad = tmp_path / "a.keys", tmp_path / "b.nokeys"
    good.write_text("orders")
    bad.write_text("nothing")
    register_loader("test-keys", lambda p: p.suffix == ".keys", lambda p: orders)
    register_loader("test-nokeys", lambda p: p.suffix == ".nokeys", lambda p: "not a schema")
    try:
        assert KeySchema.load(good) is orders
        with pytest.raises(SchemaError, match="the test-nokeys loader read no key schema"):
            KeySchema.load(bad)
    finally:
        for kind in ("test-keys", "test-nokeys"):
            unregister_loader(kind)
    with pytest.raises(SchemaError, match="not valid TOML"):
        KeySchema.load(good)


def test_a_fresh_interpreter_loads_phoenix_files_through_keyschema_load_alone():
    """No `import keyshape.phoenix` by the caller: load_schema imports the kinds keyshape ships the
    first time no registered loader claims a file, so KeySchema.load reads a .sql like a .toml."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from keyshape.schema import KeySchema\n"
        "assert 'keyshape.phoenix.schema' not in sys.modules\n"
        f"s = KeySchema.load({str(EXAMPLES / 'phoenix' / 'events.sql')!r})\n"
        "print(type(s).__name__, len(s.split_keys()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    name, splits = out.stdout.split()
    assert name == "PhoenixKeySchema"
    assert int(splits) == len(phoenix_schema.load_phoenix_schema(EXAMPLES / "phoenix" / "events.sql").split_keys())
