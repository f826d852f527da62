"""The CLI under fuzz (issue 40): hypothesis writes schema files (legal and not: odd table names,
split keys, prefixes, workload sizes; as UTF-8, with a BOM, UTF-16, cut short or as junk bytes) and
command lines (the commands' own options from click's metadata with odd values), and runs them on
the embedded store. The only assertion is the CLI's promise:

- exit 0 with something on stdout (or the --json file written), or
- a non-zero exit with exactly one line on stderr, "error: ...", and no traceback
  (lint's exit 1 is its verdict: findings on stdout, nothing on stderr).

Bounded to stay fast (derandomized, so CI sees the same examples every run): no HBase, no network,
small workloads (at most 500 rows), no HTML/PNG."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keyshape.cli.main import main

LEGAL_NAMES = ["t", "orders", "ns_1", "a-b.c", "caf\u00e9", "9"]
ODD_NAMES = ["my table!", "", "hbase", ".x", "-x", "zookeeper", "x y", "a:b"]
NAMES = LEGAL_NAMES + ODD_NAMES
LEGAL_FIELDS = ["id", "user_id", "ts", "k"]
FIELD_NAMES = LEGAL_FIELDS + ["", "a=b", " "]
LEGAL_TYPES = ["string", "int32", "int64", "timestamp", "bytes", "float64"]


def pick(legal: list[Any], odd: list[Any]) -> st.SearchStrategy[Any]:
    """A legal value, or (one time in five) an odd one."""
    return st.integers(0, 4).flatmap(lambda n: st.sampled_from(legal + odd if n == 0 else legal))


KEY_TEXT = st.text(alphabet=string.ascii_letters + string.digits + "\\x_|", max_size=8)


def _toml(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@st.composite
def schemas(draw: st.DrawFn) -> str:
    """A key schema in TOML: most well formed (so the commands get past loading it); one in three
    with odd values in the places a user can put one."""
    odd_ok = draw(st.integers(0, 2)) == 0

    def pick(legal: list[Any], odd: list[Any]) -> st.SearchStrategy[Any]:  # noqa: F811 - this schema's odd_ok
        return st.sampled_from(legal + odd) if odd_ok else st.sampled_from(legal)

    lines = ["[table]", f"name = {_toml(draw(pick(LEGAL_NAMES, ODD_NAMES)))}"]
    if draw(st.booleans()):
        lines.append(f"namespace = {_toml(draw(pick(['default', 'shop', 'ns_1'], ODD_NAMES)))}")
    lines.append("[key]")
    lines.append(f"separator = {_toml(draw(st.sampled_from(['', '_', '|'])))}")
    field = st.tuples(pick(LEGAL_FIELDS, ["", "a=b", " "]), pick(LEGAL_TYPES, ["bogus"]))
    unique = draw(pick([True], [False]))
    fields = draw(st.lists(field, min_size=draw(pick([1], [0])), max_size=3, unique_by=(lambda f: f[0]) if unique else None))
    prefix = draw(pick([None, "mod", "md5", "murmur3"], ["none", "bogus"]))
    if prefix is not None:
        buckets = draw(pick([None] if prefix == "md5" else [None, 4, 16], [-1, 0, 1, 300]))
        lines.append(f"prefix = {{ strategy = {_toml(prefix)}" + ("" if buckets is None else f", buckets = {buckets}") + " }")
    if draw(pick([prefix is not None], [True])):
        names = [name for name, _ in fields]
        chosen = draw(st.lists(pick(names or ["id"], ["", "nofield"]), min_size=0 if odd_ok else 1, max_size=2, unique=not odd_ok))
        lines.append(f"hash_fields = {_toml(chosen)}")
    for name, ftype in fields:
        lines += ["[[key.fields]]", f"name = {_toml(name)}", f"type = {_toml(ftype)}"]
    splits = draw(pick([None, "explicit", "uniform", "hex", "prefix"], ["bogus"]))
    if splits is not None:
        lines += ["[splits]", f"algorithm = {_toml(splits)}"]
        if splits == "explicit":
            lines.append(f"keys = {_toml(draw(st.lists(KEY_TEXT, max_size=5)))}")
        else:
            lines.append(f"regions = {draw(pick([2, 4, 8], [-1, 0, 1, 5_000_000]))}")
    if fields:  # always: a schema without [workload] generates 100,000 rows
        lines += ["[workload]", f"rows = {draw(st.integers(min_value=-1 if odd_ok else 1, max_value=500))}"]
        name, _ = fields[0]
        generator = draw(pick(["sequential", "zipf", "uniform"], ["bogus"]))
        options = {"zipf": f", cardinality = {draw(pick([10, 1000], [0, 2_000_000_000]))}", "uniform": ", low = 0, high = 100"}.get(generator, "")
        fmt = draw(pick(["", ', format = "u{}"'], [', format = "u{:q}"', ', format = "{1}"']))
        lines.append(f"fields.{_toml(name)} = {{ generator = {_toml(generator)}{options}{fmt} }}")
    return "\n".join(lines) + "\n"


@st.composite
def schema_files(draw: st.DrawFn) -> bytes:
    text = draw(schemas())
    how = draw(st.sampled_from(["utf-8"] * 12 + ["bom", "utf-16", "cut", "junk"]))
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if how == "utf-16":
        return text.encode("utf-16")
    if how == "cut":
        data = text.encode()
        return data[: draw(st.integers(min_value=0, max_value=len(data)))]
    if how == "junk":
        return draw(st.binary(max_size=64))
    return text.encode()


# Values an option is tried with, besides its own choices.
ODD = ["0", "-1", "3", "x", "", "1e9", "2GiB", "\\xFF", "a..b", "99999999999999999999"]
# Never fuzzed: they reach a network, Spark, a browser's files or take minutes.
SKIP = {"--hbase", "--table", "--engine", "--master", "--html", "--png", "--user", "--keys", "--workers", "--count-rows", "--exact"}


def _option_words(command: click.Command, draw: st.DrawFn, json_path: Path) -> list[str]:
    params = [p for p in command.params if isinstance(p, click.Option) and p.opts[0] not in SKIP and p.opts[0] != "--help"]
    words: list[str] = []
    for param in draw(st.lists(st.sampled_from(params), max_size=2, unique_by=lambda p: p.name)) if params else []:
        if param.opts[0] == "--json":
            words += ["--json", str(json_path)]
        elif param.is_flag:
            words.append(param.opts[0])
        elif isinstance(param.type, click.Choice):
            words += [param.opts[0], draw(st.sampled_from([*map(str, param.type.choices), "bogus"]))]
        else:
            words += [param.opts[0], draw(st.sampled_from(ODD))]
    return words


@st.composite
def command_lines(draw: st.DrawFn, schema: str, json_path: Path) -> list[str]:
    kind = draw(st.sampled_from(["lint", "create-dry", "create", "analyze", "encode", "decode", "ranges", "splits", "hash", "compare"]))
    assignments = [f"{draw(pick(LEGAL_FIELDS, ['', 'a=b']))}={draw(KEY_TEXT)}" for _ in range(draw(st.integers(0, 3)))]
    if kind == "lint":
        return ["lint", schema]
    if kind == "create-dry":
        return ["create", schema, "--dry-run"]
    if kind == "create":
        return ["create", schema]
    if kind == "analyze":
        command = main.commands["analyze"]
        return ["analyze", schema, "--rows", str(draw(st.integers(1, 400))), *_option_words(command, draw, json_path)]
    if kind == "compare":
        return ["compare", schema, "--rows", str(draw(st.integers(1, 300)))]
    if kind in ("encode", "ranges"):
        return ["key", kind, schema, *assignments]
    if kind == "decode":
        return ["key", "decode", schema, draw(KEY_TEXT)]
    if kind == "splits":
        algorithm = draw(st.sampled_from(["hex", "decimal", "uniform", "buckets", "range"]))
        command = main.commands["splits"].commands[algorithm]  # type: ignore[attr-defined]
        regions = draw(pick(["4", "8"], ["1", "2", "20000", "x"]))
        return ["splits", algorithm, "-n", regions, "--table", draw(pick(LEGAL_NAMES, ODD_NAMES)), *_option_words(command, draw, json_path)]
    algorithm = draw(st.sampled_from(["md5", "java", "java-bytes", "crc32", "murmur3", "phoenix", "hbasewd", "opentsdb", "bogus"]))
    return ["hash", algorithm, draw(KEY_TEXT), *_option_words(main.commands["hash"], draw, json_path)]


def check_promise(args: list[str], json_path: Path) -> None:
    result = CliRunner().invoke(main, args, prog_name="keyshape")
    shown = f"keyshape {' '.join(args)}"
    # An exception that escaped main (a traceback for a user) is a bug whatever the input.
    assert result.exception is None or isinstance(result.exception, SystemExit), (shown, repr(result.exception))
    stderr = result.stderr
    assert "Traceback" not in stderr and "Traceback" not in result.stdout, (shown, stderr)
    if result.exit_code == 0:
        assert result.stdout or json_path.exists(), (shown, "exit 0 with nothing to show")  # "\t" is the whole table's range
        return
    if args[0] == "lint" and result.exit_code == 1 and not stderr.strip():
        assert "error" in result.stdout, (shown, result.stdout)  # lint's verdict: the schema has errors
        return
    lines = [line for line in stderr.splitlines() if line.strip()]
    # The progress estimate of a long run may precede the error line on stderr; nothing else may.
    lines = [line for line in lines if " rows at ~" not in line]
    assert len(lines) == 1 and lines[0].startswith("error: "), (shown, result.exit_code, stderr)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data(), file=schema_files())
def test_the_cli_keeps_its_promise(tmp_path: Path, data: st.DataObject, file: bytes) -> None:
    schema = tmp_path / "fuzz.toml"
    schema.write_bytes(file)
    json_path = tmp_path / "out.json"
    json_path.unlink(missing_ok=True)
    args = data.draw(command_lines(str(schema), json_path))
    check_promise(args, json_path)
