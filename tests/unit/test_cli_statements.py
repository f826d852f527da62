"""Issue 40, classes "statements HBase refuses", "inputs overwritten" and "options ignored": every
case here used to exit 0 (a statement HBase refuses, a file destroyed, an option ignored) and must
now get one line on stderr naming the problem, and a non-zero exit; the good neighbours still work.

Runs in-process through click's runner (the CLI's own error handling, main's ``_Group``)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from keyshape.cli.main import main
from keyshape.core.splits import check_split_keys
from keyshape.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]

SCHEMA = """[table]
name = "{name}"
namespace = "{namespace}"
[key]
[[key.fields]]
name = "id"
type = "int64"
[splits]
algorithm = "explicit"
keys = [{keys}]
[workload]
rows = 200
fields.id = {{ generator = "sequential", start = 1 }}
"""


def write_schema(where: Path, file: str, name: str = "t", namespace: str = "default", keys: str = '"05"') -> Path:
    path = where / file
    path.write_text(SCHEMA.format(name=name, namespace=namespace, keys=keys), encoding="utf-8")
    return path


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def refused(args: list[str], words: str) -> str:
    code, out, err = run(args)
    assert code != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert words in lines[0], lines[0]
    return lines[0]


def test_split_keys_are_never_dropped() -> None:
    assert check_split_keys([b"a", b"b"]) == [b"a", b"b"]
    with pytest.raises(BadInput, match=r"key 0 is empty.*Empty split key must not be passed"):
        check_split_keys([b"", b"05"])
    with pytest.raises(BadInput, match=r"key 2 '02' repeats key 1.*All split keys must be unique"):
        check_split_keys([b"01", b"02", b"02", b"07"])
    with pytest.raises(BadInput, match=r"key 1 '02' sorts before key 0 '07'"):
        check_split_keys([b"07", b"02"])


@pytest.mark.parametrize(
    "name,namespace,keys,words",
    [
        ("my table!", "default", '"05"', "table.name: 'my table!' is not a table name HBase accepts"),
        ("t", "bad ns", '"05"', "table.namespace: 'bad ns'"),
        ("meta", "hbase", '"05"', "'hbase' namespace holds HBase's own tables"),
        (".t", "default", '"05"', "starts with '.'"),
        ("zookeeper", "default", '"05"', "zookeeper"),
        ("t", "default", '"", "05"', "key 0 is empty"),
        ("t", "default", '"02", "02", "07"', "key 1 '02' repeats key 0"),
        ("t", "default", '"07", "02"', "key 1 '02' sorts before key 0 '07'"),
    ],
)
@pytest.mark.parametrize("command", ["create {schema} --dry-run", "create {schema}", "analyze {schema}", "lint {schema}", "key decode {schema} x"])
def test_schemas_hbase_refuses_are_refused_by_every_command(tmp_path: Path, name: str, namespace: str, keys: str, words: str, command: str) -> None:
    schema = write_schema(tmp_path, "s.toml", name, namespace, keys)
    refused(shlex.split(command.format(schema=schema)), words)


def test_a_legal_schema_still_creates(tmp_path: Path) -> None:
    schema = write_schema(tmp_path, "s.toml", "orders.v2", "shop", '"02", "05", "07"')
    code, out, err = run(["create", str(schema), "--dry-run"])
    assert code == 0, err
    assert out.startswith("create_namespace 'shop'\ncreate 'shop:orders.v2', ") and "SPLITS => ['02', '05', '07']" in out, out
    code, out, err = run(["create", str(schema)])
    assert code == 0, err
    assert "4 regions" in out, out


@pytest.mark.parametrize(
    "args,words",
    [
        ("splits hex -n 4 --table 'bad name!'", "--table 'bad name!' is not a table HBase can create"),
        ("splits uniform -n 4 --format json --table ''", "the table name is empty"),
        ("splits decimal -n 4 --table hbase:meta", "holds HBase's own tables"),
        ("splits buckets -n 4 --table 'a:b:c'", "not allowed"),
        ('splits hex -n 4 --family "it\'s"', "--family"),
    ],
)
def test_splits_refuse_a_table_hbase_refuses(args: str, words: str) -> None:
    refused(shlex.split(args), words)


def test_splits_with_a_legal_table_still_print() -> None:
    code, out, _ = run(["splits", "hex", "-n", "3", "--table", "ns:ok"])
    assert code == 0 and out == "create 'ns:ok', 'f', SPLITS => ['55555555', 'aaaaaaaa']\n", out


@pytest.mark.parametrize(
    "args,words",
    [
        ("analyze {s} --html {s}", "--html {s} is the file this command reads"),
        ("analyze {s} --json {s}", "--json {s} is the file this command reads"),
        ("analyze {s} --png {dot}", "--png {dot} is the file this command reads"),
        ("compare {s} {s2} --json {s2}", "is the file this command reads"),
        ("analyze {s} --keys {k} --json {k}", "--json {k} is the file this command reads"),
        ("migrate {s} {s2} --hbase 127.0.0.1:1 --state {s}", "--state {s} is the file this command reads"),
        ("migrate {s} {s2} --hbase 127.0.0.1:1 --rejects {s2}", "--rejects {s2} is the file this command reads"),
        ("lint {s} --json {dot}", "--json {dot} is the file this command reads"),
    ],
)
def test_no_output_overwrites_an_input(tmp_path: Path, args: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    schema = write_schema(tmp_path, "s.toml")
    write_schema(tmp_path, "s2.toml")
    keys = tmp_path / "k.csv"
    keys.write_text("rowkey\n\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x01\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    subst = {"s": str(schema), "s2": str(tmp_path / "s2.toml"), "k": str(keys), "dot": "./s.toml"}
    before = schema.read_bytes(), keys.read_bytes()
    refused(shlex.split(args.format(**subst)), words.format(**subst))
    assert (schema.read_bytes(), keys.read_bytes()) == before


@pytest.mark.parametrize(
    "args,words",
    [
        ("hash md5 abc --buckets 16", "hash md5 takes no --buckets"),
        ("hash murmur3 abc --buckets 0", "hash murmur3 takes no --buckets"),
        ("hash phoenix abc --buckets 4 --tags x", "hash phoenix takes no --tags"),
        ("create examples/orders.toml --hbase ''", "is empty (an unset shell variable?)"),
        ("scan examples/orders.toml --hbase ' '", "is empty"),
        ("analyze examples/orders.toml --keys examples/orders.toml --rows 5", "--rows sizes a generated workload"),
        ("analyze examples/sequential.toml --split-policy constant", "--split-policy works with --auto-split only"),
        ("analyze examples/sequential.toml --max-filesize 2GiB", "--max-filesize works with --auto-split only"),
        ("compare examples/sequential.toml --flush-size 64MiB", "--flush-size works with --auto-split only"),
        ("migrate examples/orders.toml examples/sequential.toml --hbase 127.0.0.1:1 --max-lag 2", "--max-lag works with --cutover only"),
        ("migrate examples/orders.toml examples/sequential.toml --hbase 127.0.0.1:1 --cutover", "--cutover works with --online only"),
        ("analyze examples/orders.toml --sample-per-region 5", "--sample-per-region works with --table only"),
        ("admin split t '' --hbase 127.0.0.1:1", "KEY: key 0 is empty; HBase refuses it"),
    ],
)
def test_an_option_that_would_be_ignored_is_refused(args: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    refused(shlex.split(args), words)


def test_hash_still_takes_the_options_it_reads() -> None:
    assert run(["hash", "phoenix", "abc", "--buckets", "4"])[:2] == (0, "1\n")
    assert run(["hash", "md5", "abc"])[0] == 0


HASH_NO_PREFIX = '[table]\nname = "t"\n[key]\nhash_fields = ["id"]\n[[key.fields]]\nname = "id"\ntype = "string"\n'
BLANK_FIELD = '[table]\nname = "t"\n[key]\n[[key.fields]]\nname = ""\ntype = "string"\n'


@pytest.mark.parametrize(
    "args,words",
    [
        ("key encode examples/orders.toml user_id=u1 user_id=u2 order_time=5 order_id=1", "field 'user_id' is given twice (user_id=u2)"),
        ("key ranges examples/orders.toml user_id=u1 user_id=u2", "field 'user_id' is given twice"),
        ("phoenix key encode examples/phoenix/events.sql TENANT=a TENANT=b", "column TENANT is given twice"),
        ("phoenix key decode examples/phoenix/events.sql --hex 01", "key '\\x01' ends before NOT NULL column TENANT"),
        ("phoenix resalt examples/phoenix/events.sql --buckets 4 --target events", "--target events is the source table EVENTS itself"),
        ("lint {tmp}/hash.toml", "key.hash_fields: feeds the key's prefix, and this key has none"),
        ("lint {tmp}/blank.toml", "key.fields[0].name: '' is not a field name"),
    ],
)
def test_nonsense_is_refused_not_half_used(args: str, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "hash.toml").write_text(HASH_NO_PREFIX, encoding="utf-8")
    (tmp_path / "blank.toml").write_text(BLANK_FIELD, encoding="utf-8")
    monkeypatch.chdir(ROOT)
    refused(shlex.split(args.replace("{tmp}", str(tmp_path))), words)


def test_a_whole_phoenix_key_still_decodes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(["phoenix", "key", "decode", "examples/phoenix/events.sql", "--hex", "0161636d65007ffffe64892557ffffffffff800000000000002a"])
    assert code == 0 and out.splitlines()[0] == "TENANT=acme", err
