"""``keyshape scan`` on the embedded store filled with --load-rows (deterministic workload)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from keyshape.cli import main
from keyshape.read import scan
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, ensure_table
from keyshape.workload import generate

ORDERS = str(Path(__file__).resolve().parents[2] / "examples" / "orders.toml")


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))  # click >= 8.2 keeps stderr apart
    return r.exit_code, r.stdout, r.stderr


def expected_keys(rows: int) -> list[str]:
    from keyshape.core.hbytes import to_string_binary

    schema = KeySchema.load(ORDERS)
    store = EmbeddedStore()
    ensure_table(store, schema.table, schema.split_keys())
    for chunk in generate(schema, rows=rows):
        for k in schema.encode_many(chunk):
            store.put(schema.table.full_name, k, {b"d:v": b"x"})
    return [to_string_binary(r.key) for r in scan(store, schema)]


def test_pages_across_processes_follow_the_merged_order() -> None:
    want = expected_keys(300)
    code, out1, _ = invoke("scan", ORDERS, "--load-rows", "300", "--page-size", "4", "--wide")  # whole keys
    assert code == 0, out1
    token = re.search(r"next page token: (\S+)", out1).group(1)
    code, out2, _ = invoke("scan", ORDERS, "--load-rows", "300", "--page-size", "4", "--page-token", token, "--wide")
    assert code == 0, out2
    shown = [k for k in re.findall(r"│ (\S+?) +│", out1 + out2) if k in want]
    assert shown == want[:8]


def test_empty_embedded_store_says_how_to_load() -> None:
    code, out, err = invoke("scan", ORDERS, "user_id=user000042")
    assert code == 0
    assert "0 rows" in out and "--load-rows" in err


def test_bad_token_is_one_line_error() -> None:
    code, out, err = invoke("scan", ORDERS, "--page-size", "3", "--page-token", "zzz")
    assert code != 0
    assert "not a keyshape page token" in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in out + err
