"""Bad input on every command and option that takes a path, a URL, a number or a key: ONE line on
stderr that names what is wrong, a non-zero exit, never a traceback (issue 30: 100 bad inputs at
least; tests/hbase/test_cli_errors.py and tests/hbase/test_cli_operator.py hold more). Each case is a command
line as a user would type it, and a piece of the line it must print.

Addresses are loopback only: 127.0.0.1:1 has nothing listening."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

CASES = [
    (
        "key decode examples/phoenix/events.sql 0161636d65007ffffe64892557ffffffffff800000000000002a",
        "decode it with keyshape phoenix key decode examples/phoenix/events.sql --hex 0161636d",
    ),
    ("key decode examples/sequential.toml 0000000000000001", "looks like hex, but KEY is read in toStringBinary form"),
    ("analyze /nonexistent.toml", "/nonexistent.toml"),
    ("analyze {tmp}/bad.toml", "{tmp}/bad.toml"),
    ("analyze {tmp}/bin.toml", "{tmp}/bin.toml"),
    ("analyze {tmp}/adir", "{tmp}/adir"),
    ("analyze examples/orders.toml --rows 0", "--rows"),
    ("analyze examples/orders.toml --rows -5", "--rows"),
    ("analyze examples/orders.toml --rows abc", "'abc' is not a valid integer"),
    ("analyze examples/orders.toml --regions 0", "--regions"),
    ("analyze examples/orders.toml --servers 0", "--servers"),
    ("analyze examples/orders.toml --windows 0", "--windows"),
    ("analyze examples/orders.toml --top 1", "--top"),
    ("analyze examples/orders.toml --keys /nonexistent.parquet", "/nonexistent.parquet"),
    ("analyze examples/orders.toml --keys {tmp}/empty.csv", "{tmp}/empty.csv"),
    ("analyze examples/orders.toml --keys {tmp}/nokey.csv --column rowkey", "rowkey"),
    ("analyze examples/orders.toml --keys {tmp}/adir", "{tmp}/adir"),
    ("analyze examples/orders.toml --column rowkey", "--column"),
    ("analyze examples/orders.toml --fail-on bogus", "bogus"),
    ("analyze examples/orders.toml --auto-split abc", "abc"),
    ("analyze examples/orders.toml --auto-split 0", "--auto-split"),
    ("analyze examples/sequential.toml --auto-split --write-rate nofield", "nofield"),
    ("analyze examples/sequential.toml --auto-split --write-rate -5", "-5"),
    ("analyze examples/sequential.toml --auto-split --max-filesize 0", "--max-filesize"),
    ("analyze examples/sequential.toml --auto-split --max-filesize lots", "lots"),
    ("analyze examples/sequential.toml --auto-split --flush-size 1PB", "1PB"),
    ("analyze examples/sequential.toml --auto-split --split-policy bogus", "bogus"),
    ("analyze examples/sequential.toml --auto-split --split-policy key-prefix:x", "key-prefix:x"),
    ("analyze examples/orders.toml --value-bytes -1", "--value-bytes"),
    ("analyze examples/orders.toml --engine bogus", "bogus"),
    ("analyze examples/orders.toml --engine spark", "--engine spark reads --keys PATH"),
    ("analyze examples/orders.toml --master local", "--master"),
    ("analyze examples/orders.toml --time-field x", "--time-field"),
    ("analyze examples/orders.toml --hbase localhost:abc", "needs both --table NS:NAME and --hbase"),
    ("analyze --table t", "--table"),
    ("analyze", "give a SCHEMA"),
    ("analyze examples/orders.toml --table t --hbase 127.0.0.1:1 --rows 5", "--rows"),
    ("analyze examples/orders.toml --seed x", "--seed"),
    ("compare", "Missing argument 'SCHEMAS...'"),
    ("compare examples/orders.toml --strategies bogus:3", "bogus:3"),
    ("compare examples/orders.toml --strategies mod:0", "mod:0"),
    ("compare examples/orders.toml --strategies md5:99", "md5:99"),
    ("compare examples/orders.toml examples/sequential.toml --strategies none,mod:16", "--strategies"),
    ("compare examples/orders.toml --colour-scale rainbow", "rainbow"),
    ("key encode examples/orders.toml", "record lacks key field 'user_id'"),
    ("key encode examples/orders.toml user_id=u1", "record lacks key field 'order_time'"),
    ("key encode examples/orders.toml user_id=u1 order_time=x order_id=1", "cannot read 'x' as a timestamp"),
    ("key encode examples/orders.toml nofield=1 user_id=u1 order_time=5 order_id=1", "no field 'nofield'"),
    ("key encode examples/orders.toml user_id", "user_id"),
    ("key encode examples/sequential.toml event_id=99999999999999999999999", "no int64 can hold it"),
    ("key encode examples/orders.toml user_id=u order_time=-5 order_id=1", "a timestamp is ms since 1970"),
    ("key decode examples/orders.toml 'zz'", "zz"),
    ("key decode examples/orders.toml '\\xZZ'", "\\xZZ"),
    ("key decode examples/orders.toml ''", "shorter than the 3-byte mod prefix"),
    ("key decode examples/orders.toml '99_user0000042_9223370269629175807_000042'", "99_user0000042_9223370269629175807_000042"),
    ("key ranges examples/orders.toml nofield=1", "no field 'nofield'"),
    ("key ranges examples/orders.toml order_time=5", "give user_id before later ones"),
    ("key ranges examples/orders.toml user_id=a..", "cannot be range-scanned"),
    ("lint /nonexistent.toml", "/nonexistent.toml"),
    ("lint {tmp}/bad.toml", "{tmp}/bad.toml"),
    ("splits hex --regions 0", "--regions"),
    ("splits hex --regions abc", "abc"),
    ("splits hex --regions 20000", "--regions"),
    ("splits hex --format bogus --regions 4", "bogus"),
    ("splits decimal --regions 4 --first abc", "abc"),
    ("splits range --regions 4 --start '\\xZZ' --end b", "\\xZZ"),
    ("splits range --regions 4 --start b --end a", "start key 'b' must be smaller than end k"),
    ("splits buckets --regions 4 --width 0", "do not fit 0 byte(s)"),
    ("splits buckets --regions 300 --width 1", "300"),
    ("splits buckets --regions 4 --encoding bogus", "bogus"),
    ("hash bogus x", "bogus"),
    ("hash phoenix x --buckets 0", "buckets must be an int in 1..256, got 0"),
    ("hash phoenix x --buckets 300", "300"),
    ("hash phoenix '\\xZZ' --buckets 4", "\\xZZ"),
    ("hash mod x", "'mod' is not one of"),
    ("scan examples/orders.toml --load-rows -1", "--load-rows"),
    ("scan examples/orders.toml --limit 0", "--limit"),
    ("scan examples/orders.toml --page-size 0", "--page-size"),
    ("scan examples/orders.toml --page-token garbage --page-size 5", "garbage"),
    ("scan examples/orders.toml --page-token abc", "--page-token"),
    ("scan examples/orders.toml --start '\\xZZ'", "\\xZZ"),
    ("scan examples/orders.toml --user bob", "--user"),
    ("scan examples/orders.toml --parallel -1", "--parallel"),
    ("scan examples/orders.toml nofield=1", "no field 'nofield'"),
    ("scan examples/orders.toml --hbase localhost:abc", "localhost:abc"),
    ("create examples/orders.toml --hbase localhost:abc", "localhost:abc"),
    ("create /nonexistent.toml --dry-run", "/nonexistent.toml"),
    ("load examples/orders.toml --rows 0", "--rows"),
    ("load examples/orders.toml --batch-size 0", "--batch-size"),
    ("load examples/orders.toml --settle -1", "--settle"),
    ("load examples/orders.toml --user bob", "--user"),
    ("watch t", "watch needs --hbase"),
    ("watch t --hbase 127.0.0.1:1 --interval 0", "--interval"),
    ("watch t --hbase 127.0.0.1:1 --samples 0", "--samples"),
    ("watch t --hbase 127.0.0.1:1 --metric bogus", "bogus"),
    ("watch t --hbase 127.0.0.1:1", "cannot reach ZooKeeper at 127.0.0.1:1"),
    ("watch t --hbase 127.0.0.1:1 --schema /nonexistent.toml", "/nonexistent.toml"),
    ("get examples/records/orders.toml", "no value for key field 'user_id'"),
    ("get examples/records/orders.toml user_id=u1", "no value for key field 'order_id'"),
    ("get examples/records/orders.toml --csv /nonexistent.csv", "/nonexistent.csv"),
    ("get examples/records/orders.toml --csv {tmp}/nokey.csv", "{tmp}/nokey.csv"),
    ("get examples/records/orders.toml --csv {tmp}/empty.csv", "{tmp}/empty.csv"),
    ("get examples/records/orders.toml user_id=u1 order_id=1 --csv {tmp}/nokey.csv", "--csv"),
    ("put examples/records/orders.toml --jsonl {tmp}/bad.jsonl", "{tmp}/bad.jsonl"),
    ("put examples/records/orders.toml --jsonl {tmp}/arr.jsonl", "{tmp}/arr.jsonl"),
    ("put examples/records/orders.toml --csv {tmp}/empty.csv", "{tmp}/empty.csv"),
    ("put examples/records/orders.toml --csv {tmp}/nokey.csv", "{tmp}/nokey.csv"),
    ("put examples/records/orders.toml user_id=u1 order_id=1 --batch-size 0", "--batch-size"),
    ("index lookup examples/records/orders.toml nosuch product_id=p1", "nosuch"),
    ("index lookup examples/records/orders.toml by_product product_id", "no value in 'product_id'"),
    ("index lookup examples/records/orders.toml by_product nofield=1", "no field 'nofield'"),
    ("index lookup examples/records/orders.toml by_product product_id=p1 --limit 0", "--limit"),
    ("index repair examples/records/orders.toml nosuch", "nosuch"),
    ("ids take examples/records/orders.toml nosuch", "nosuch"),
    ("ids take examples/records/orders.toml order_id -n 0", "-n"),
    ("ids take examples/records/orders.toml order_id --floor -1", "--floor"),
    ("ids show examples/records/orders.toml nosuch", "nosuch"),
    ("admin regions t", "Missing option '--hbase'"),
    ("admin regions t --hbase localhost:abc", "localhost:abc"),
    ("admin split t zz --hbase 127.0.0.1:1", "cannot reach ZooKeeper at 127.0.0.1:1"),
    ("admin move r --hbase 127.0.0.1:1 --timeout 0", "--timeout"),
    ("admin balancer maybe --hbase 127.0.0.1:1", "maybe"),
    ("split-plan t", "Missing option '--hbase'"),
    ("split-plan t --hbase 127.0.0.1:1", "give exactly one of --target-regions N and --max-region-mb M"),
    ("split-plan t --hbase 127.0.0.1:1 --target-regions 1", "--target-regions"),
    ("split-plan t --hbase 127.0.0.1:1 --max-region-mb 0", "--max-region-mb"),
    ("migrate examples/orders.toml", "Missing argument 'NEW.toml'"),
    ("migrate examples/orders.toml examples/sequential.toml", "Missing option '--hbase'"),
    ("migrate examples/orders.toml /nonexistent.toml --hbase 127.0.0.1:1", "/nonexistent.toml"),
    ("migrate examples/orders.toml examples/sequential.toml --hbase 127.0.0.1:1 --verify-only --resume", "--resume"),
    ("migrate examples/orders.toml examples/sequential.toml --hbase 127.0.0.1:1 --max-rows-per-sec 0", "--max-rows-per-sec"),
    ("phoenix ddl /nonexistent.sql", "/nonexistent.sql"),
    ("phoenix ddl {tmp}/bad.sql", "expected TABLE but found 'TABL'"),
    ("phoenix ddl examples/phoenix/events.sql --table NOPE", "NOPE"),
    ("phoenix key encode examples/phoenix/events.sql TENANT=a EVENT_TIME=x", "'x' is not a TIMESTAMP value"),
    ("phoenix key encode examples/phoenix/events.sql NOPE=1", "NOPE=1"),
    ("phoenix key decode examples/phoenix/events.sql --hex zz", "zz"),
    ("phoenix key decode examples/phoenix/events.sql --hex 00", "00"),
    ("phoenix key ranges examples/phoenix/events.sql NOPE=1", "NOPE=1"),
    ("phoenix lint {tmp}/bad.sql", "expected TABLE but found 'TABL'"),
    ("phoenix resalt examples/phoenix/events.sql --table EVENTS --buckets 0 --target E2", "SALT_BUCKETS must be 1..256, got 0"),
    ("phoenix resalt examples/phoenix/events.sql --table EVENTS --buckets 300 --target E2", "300"),
    ("phoenix resalt examples/phoenix/events.sql --table EVENTS --buckets 16 --target E2 --apply", "--apply"),
    ("phoenix catalog EVENTS", "Missing option '--hbase'"),
    ("phoenix catalog EVENTS --hbase localhost:abc", "localhost:abc"),
]


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bad files the cases name: broken TOML, binary, empty and header-only CSVs, bad JSON
    lines, broken DDL, a folder where a file belongs."""
    where = tmp_path_factory.mktemp("bad")
    (where / "bad.toml").write_text("not toml [")
    (where / "bin.toml").write_bytes(b"\x00\x01binary")
    (where / "nokey.csv").write_text("a,b\n1,2\n")
    (where / "empty.csv").write_text("")
    (where / "bad.jsonl").write_text('{"user_id": "u1"\n')
    (where / "arr.jsonl").write_text("[1,2]\n")
    (where / "bad.sql").write_text("CREATE TABL X (A INT)")
    (where / "adir").mkdir()
    return where


def test_there_are_at_least_100_bad_inputs() -> None:
    assert len({c for c, _ in CASES}) == len(CASES) >= 100


@pytest.mark.parametrize("command,words", CASES, ids=[c for c, _ in CASES])
def test_bad_input_gives_one_line_and_a_nonzero_exit(command: str, words: str, tmp: Path) -> None:
    argv = shlex.split(command.replace("{tmp}", str(tmp)))
    proc = subprocess.run(
        [sys.executable, "-m", "keyshape.cli", *argv], capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL
    )
    assert proc.returncode != 0, proc.stdout[-500:]
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert words.replace("{tmp}", str(tmp)) in lines[0], lines[0]
