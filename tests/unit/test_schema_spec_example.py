"""The key-schema specification's own example (tests/data/schema_spec_example.toml, verbatim) loads, encodes, decodes,
plans scans, splits and lints; and every malformed schema the specification names gets one line naming the
file, the key path and the fix, from the library and from the CLI."""

from __future__ import annotations

import hashlib
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from keyshape.errors import SchemaError
from keyshape.schema import KeySchema

SPEC_EXAMPLE = Path(__file__).parents[1] / "data" / "schema_spec_example.toml"
MAX_LONG = 2**63 - 1


def test_spec_example_loads_with_every_section():
    s = KeySchema.load(SPEC_EXAMPLE)
    assert s.table.full_name == "shop:orders"
    fam = s.table.families[0]
    assert (fam.name, fam.versions, fam.compression, fam.bloom_filter, fam.block_size) == ("d", 1, "NONE", "ROW", 65536)
    assert s.separator == b"_" and s.prefix.name == "md5" and s.prefix.width == 4
    assert s.hash_fields == ["user_id"] and s.field_names == ["user_id", "order_time", "order_id"]
    assert s.workload is not None and s.workload.rows == 1_000_000


def test_spec_example_encodes_the_documented_layout_and_decodes():
    """md5_hex(user_id)[:4] + "_" + user_id + "_" + Bytes.toBytes(Long.MAX_VALUE - ts) + "_" +
    order_id left-padded with "0" to 6 characters."""
    s = KeySchema.load(SPEC_EXAMPLE)
    ts = 1767225600000  # 2026-01-01T00:00:00Z
    key = s.encode({"user_id": "user42", "order_time": "2026-01-01T00:00:00Z", "order_id": "A17"})
    expected = hashlib.md5(b"user42").hexdigest()[:4].encode() + b"_user42_" + struct.pack(">q", MAX_LONG - ts) + b"_000A17"
    assert key == expected
    assert s.decode(key) == {"user_id": "user42", "order_time": ts, "order_id": "A17"}


def test_spec_example_scans_splits_and_lints():
    s = KeySchema.load(SPEC_EXAMPLE)
    one = s.scan_ranges(user_id="user42")
    prefix = hashlib.md5(b"user42").hexdigest()[:4].encode() + b"_user42_"
    assert one == [(prefix, prefix[:-1] + b"`")]
    newer, older = 1767225700000, 1767225600000
    ((start, stop),) = s.scan_ranges(user_id="user42", order_time=(older, newer))
    inside = s.encode({"user_id": "user42", "order_time": older + 5, "order_id": "1"})
    outside = s.encode({"user_id": "user42", "order_time": newer, "order_id": "1"})
    assert start <= inside < stop and not start <= outside < stop
    assert s.split_keys() == [b"%04x" % (i * 4096) for i in range(1, 16)]
    findings = s.lint()
    assert [f for f in findings if f.level == "error"] == []
    assert not {"separator-ambiguous", "separator-in-values"} & {f.code for f in findings}


# --------------------------------------------------------------------------- malformed schemas

EXAMPLE = SPEC_EXAMPLE.read_text()


def edit(old: str, new: str) -> str:
    assert old in EXAMPLE, old
    return EXAMPLE.replace(old, new, 1)


MALFORMED = [
    pytest.param(
        edit('strategy = "md5", length = 4', 'strategy = "sha1", length = 4'),
        "key.prefix.strategy",
        "unknown value 'sha1'",
        "use one of: none, md5, md5-full",
        id="unknown-strategy",
    ),
    pytest.param(
        edit('hash_fields = ["user_id"]', 'hash_fields = ["customer_id"]'),
        "key.hash_fields",
        "'customer_id' is not a key field",
        "use field names from: user_id, order_time, order_id",
        id="missing-hash-field",
    ),
    pytest.param(
        edit('type = "timestamp"', 'type = "datetime"'),
        "key.fields[1].type",
        "unknown value 'datetime'",
        "use one of: string, int32",
        id="unknown-type",
    ),
    pytest.param(edit("width = 6 ", 'width = "6"'), "key.fields[2].width", "must be an integer, got '6'", "write width = 6", id="wrong-value-type"),
    pytest.param(
        edit('type = "timestamp"\norder = "desc"', 'type = "timestamp"\nencoding = "text"\norder = "desc"\nwidth = 13'),
        "key.fields[1].width",
        "width 13 is too small",
        "set width >= 19",
        id="width-too-small",
    ),
    pytest.param(edit("width = 6 ", "width = 0"), "key.fields[2].width", "0 is out of range", "use a value in >= 1", id="width-zero"),
    pytest.param(edit("length = 4", "length = 3"), "key.prefix.length", "3 is out of range", "use a value in 4..32", id="md5-length-3"),
    pytest.param(edit("length = 4", "length = 33"), "key.prefix.length", "33 is out of range", "use a value in 4..32", id="md5-length-33"),
    pytest.param(
        edit('strategy = "md5", length = 4', 'strategy = "phoenix", buckets = 257'),
        "key.prefix.buckets",
        "257 is out of range",
        "use a value in 2..256",
        id="phoenix-257",
    ),
    pytest.param(
        EXAMPLE + '\n[tablee]\nname = "x"\n',
        "tablee",
        "unknown key",
        "known keys here: counter, index, key, splits, table, workload",
        id="unknown-top-level",
    ),
    pytest.param(
        edit('[[key.fields]]\nname = "user_id"', '[[key.fields]]\nname = "user_id"\nwdith = 4'),
        "key.fields[0].wdith",
        "unknown key",
        "known keys here:",
        id="unknown-field-key",
    ),
    pytest.param(
        edit('name = "order_id"\ntype = "string"', 'name = "order_id"'), "key.fields[2].type", "is missing", "add type = ...", id="missing-type"
    ),
]


@pytest.mark.parametrize("text,path,problem,fix", MALFORMED)
def test_malformed_schema_is_one_line_with_file_path_and_fix(tmp_path, text, path, problem, fix):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(SchemaError) as exc:
        KeySchema.load(p)
    msg = str(exc.value)
    assert msg.startswith(f"{p}: {path}: ")
    assert problem in msg and fix in msg and "\n" not in msg


@pytest.mark.parametrize(
    "command,case",
    [
        (["lint"], "unknown-strategy"),
        (["key", "encode"], "missing-hash-field"),
        (["key", "ranges"], "unknown-top-level"),
        (["lint"], "phoenix-257"),
    ],
)
def test_cli_prints_the_one_line_and_exits_non_zero(tmp_path, command, case):
    text, path, problem, fix = next(m.values for m in MALFORMED if m.id == case)
    p = tmp_path / "bad.toml"
    p.write_text(text)
    r = subprocess.run([sys.executable, "-m", "keyshape.cli", *command, str(p)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert str(p) in lines[0] and f"{path}: {problem}" in lines[0] and fix in lines[0]


def test_cli_lints_and_round_trips_the_spec_example():
    run = [sys.executable, "-m", "keyshape.cli"]
    lint = subprocess.run([*run, "lint", str(SPEC_EXAMPLE)], capture_output=True, text=True, timeout=120)
    assert lint.returncode == 0, lint.stderr
    assert lint.stdout.splitlines()[-1] == f"{SPEC_EXAMPLE}: 0 error(s), 0 warning(s)"
    enc = subprocess.run(
        [*run, "key", "encode", str(SPEC_EXAMPLE), "user_id=u_1", "order_time=5", "order_id=A_B"], capture_output=True, text=True, timeout=120
    )
    assert enc.returncode == 0, enc.stderr
    dec = subprocess.run([*run, "key", "decode", str(SPEC_EXAMPLE), enc.stdout.splitlines()[0]], capture_output=True, text=True, timeout=120)
    assert dec.returncode == 0, dec.stderr
    assert dec.stdout.splitlines() == ["user_id=u_1", "order_time=5", "order_id=A_B"]
