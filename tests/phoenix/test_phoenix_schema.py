"""A Phoenix table as a key schema flavour: everything built on KeySchema works on it (analyze,
compare, create, load into the embedded store, merged scans), with Phoenix's own key bytes and
regions (expected bytes from tests/data/phoenix_golden.json, made by Phoenix 5.2.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from keyshape.analysis.designs import analyze_schema
from keyshape.phoenix.ddl import parse_ddl_script
from keyshape.phoenix.schema import PhoenixKeySchema, load_schema
from keyshape.read import scan
from keyshape.schema import KeySchema
from keyshape.store import EmbeddedStore, create_table_from_schema

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "phoenix_golden.json").read_text())


def _toml(tmp_path: Path, ddl: str, workload: str) -> Path:
    (tmp_path / "t.sql").write_text(ddl + ";\n")
    p = tmp_path / "t.toml"
    p.write_text(f'[phoenix]\nddl = "t.sql"\n\n[workload]\n{workload}\n')
    return p


def test_a_toml_with_a_phoenix_section_is_a_key_schema_with_phoenix_bytes() -> None:
    schema = load_schema(EXAMPLES / "phoenix/events.toml")
    assert isinstance(schema, PhoenixKeySchema) and isinstance(schema, KeySchema)
    events = parse_ddl_script((EXAMPLES / "phoenix/events.sql").read_text())["EVENTS"]
    assert schema.split_keys() == events.region_boundaries() and len(schema.split_keys()) == 7
    case = next(c for c in GOLDEN["cases"] if c["name"] == "S1")
    s1 = load_schema(_write(case["ddl"][0]))
    for row in case["rows"]:
        values = {"A": bytes.fromhex(row["values"]["A"][4:]).decode(), "N": int(row["values"]["N"][3:])}
        assert s1.encode(values).hex() == row["keys"]["S1"]
        assert s1.decode(bytes.fromhex(row["keys"]["S1"])) == values
    keys = [bytes.fromhex(row["keys"]["S1"]) for row in case["rows"]]
    rows = [s1.decode(k) for k in keys]
    table = s1.decode_many(keys, as_arrow=True)
    assert table.column_names == list(rows[0]) and table.to_pylist() == rows
    assert {k: list(v) for k, v in s1.decode_many(keys).items()} == table.to_pydict()


def _write(ddl: str) -> Path:
    import tempfile

    p = Path(tempfile.mkdtemp()) / "one.sql"
    p.write_text(ddl + ";")
    return p


def test_analyze_judges_phoenix_designs(tmp_path: Path) -> None:
    seq = _toml(
        tmp_path,
        "CREATE TABLE SEQ (ID BIGINT NOT NULL PRIMARY KEY, V VARCHAR) "
        "SPLIT ON (CAST(50000 AS BIGINT), CAST(100000 AS BIGINT), CAST(150000 AS BIGINT))",
        'rows = 200000\nfields.ID = { generator = "sequential", start = 0 }',
    )
    assert analyze_schema(load_schema(seq)).verdict == "hotspot"
    salted = analyze_schema(load_schema(EXAMPLES / "phoenix/events.toml"))
    assert salted.verdict == "balanced"
    assert len(salted.regions) == 8


def test_create_load_and_merged_scan_on_the_embedded_store() -> None:
    schema = load_schema(EXAMPLES / "phoenix/events.toml")
    store = EmbeddedStore()
    regions = create_table_from_schema(store, schema)
    assert [r.start for r in regions][1:] == schema.split_keys()
    rows = [{"TENANT": f"t{i % 7}", "EVENT_TIME": 1_700_000_000_000 + i, "EVENT_ID": i} for i in range(300)]
    with store.writer(schema.table.full_name) as w:
        for r in rows:
            w.put(schema.encode(r), {b"0:_0": b"x"})
    got = [schema.decode(row.key) for row in scan(store, schema, TENANT="t3")]
    want = sorted((r for r in rows if r["TENANT"] == "t3"), key=lambda r: -r["EVENT_TIME"])
    assert got == want  # one scanner per salt bucket, merged in Phoenix's key order (time DESC)


def test_cli_analyze_and_create_accept_phoenix_schemas(tmp_path: Path) -> None:
    def ks(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, timeout=300)

    out = ks("analyze", str(EXAMPLES / "phoenix/events.toml"), "--rows", "20000")
    assert out.returncode == 0, out.stderr
    assert "BALANCED" in out.stdout
    dry = ks("create", str(EXAMPLES / "phoenix/events.sql"), "--dry-run")
    assert dry.returncode == 0 and dry.stdout.startswith("create 'EVENTS'")
    bad = ks("analyze", str(EXAMPLES / "phoenix/events.sql"))
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["examples/phoenix/events.sql", "examples/phoenix/events.toml"])
def test_lint_of_phoenix_schemas_runs_the_phoenix_lints(name: str) -> None:
    findings = load_schema(EXAMPLES.parent / name).lint()
    assert {f.code for f in findings} == {"phoenix-varchar-empty-is-null"}
