"""`keyshape splits` and `keyshape hash` through a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from keyshape.core.hbytes import to_bytes_binary


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", *args], capture_output=True, text=True, timeout=60)


def test_splits_hex_shell_default():
    """HexStringSplit(4) as an HBase shell create command (TestRegionSplitter values)."""
    p = run("splits", "hex", "--regions", "4", "--table", "ns:orders", "--family", "d")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "create 'ns:orders', 'd', SPLITS => ['40000000', '80000000', 'c0000000']\n"


def test_splits_uniform_file_round_trips_through_to_bytes_binary():
    """UniformSplit(3): TestRegionSplitter.unitTestUniformSplit values, one key per line."""
    p = run("splits", "uniform", "-n", "3", "--format", "file")
    assert p.returncode == 0, p.stderr
    assert [to_bytes_binary(line) for line in p.stdout.splitlines()] == [b"\x55" * 8, b"\xaa" * 8]


def test_splits_range_json():
    """Admin.createTable(desc, 0x0000, 0x7FFF, 5)."""
    p = run("splits", "range", "--start", "\\x00\\x00", "--end", "\\x7F\\xFF", "-n", "5", "--format", "json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["splits_hex"] == ["0000", "2aaa", "5554", "7fff"]


def test_splits_decimal_and_buckets():
    p = run("splits", "decimal", "-n", "3", "--format", "file")
    assert p.stdout.splitlines() == ["33333333", "66666666"]
    p = run("splits", "buckets", "-n", "4", "--format", "file")
    assert p.stdout.splitlines() == ["\\x01", "\\x02", "\\x03"]
    p = run("splits", "buckets", "-n", "3", "--encoding", "long", "--format", "file")
    assert p.stdout.splitlines() == ["\\x00" * 7 + "\\x01", "\\x00" * 7 + "\\x02"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["splits", "hex", "--regions", "1"], "regions"),
        (["splits", "hex", "-n", "4", "--first", "FF", "--last", "00"], "last row"),
        (["splits", "uniform", "-n", "4", "--first", "\\xAA", "--last", "\\x00"], "last row"),
        (["splits", "range", "--start", "b", "--end", "a", "-n", "5"], "smaller"),
        (["splits", "range", "--start", "a", "--end", "b", "-n", "2"], "regions"),
        (["splits", "uniform", "-n", "4", "--first", "\\xzz"], "escape"),
        (["hash", "phoenix", "x"], "--buckets"),
        (["hash", "phoenix", "x", "--buckets", "0"], "buckets"),
    ],
)
def test_bad_input_is_one_line_on_stderr(args, needle):
    p = run(*args)
    assert p.returncode != 0
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "args,expected",
    [
        (["md5", ""], "d41d8cd98f00b204e9800998ecf8427e"),
        (["java", "hello"], "99162322"),  # String.hashCode
        (["java-bytes", ""], "1"),  # Arrays.hashCode(new byte[0])
        (["crc32", "\\x00"], "3523407757"),  # java.util.zip.CRC32, checked on a JVM
        (["phoenix", "\\x00", "--buckets", "7"], "3"),  # 31 % 7
        (["hbasewd", "\\x01", "--buckets", "10"], "2"),  # 32 % 10
        (["opentsdb", "\\x00\\x00\\x00"], "\\x00"),  # annotation row: never salted
    ],
)
def test_hash_command(args, expected):
    p = run("hash", *args)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == expected


def test_splits_range_with_empty_start_says_hbase_would_refuse_the_table():
    """createTable(start, end, n) computes its keys with an empty start (read as zero bytes) and
    then refuses the empty key among them: one line quoting HBase, with the fix."""
    p = run("splits", "range", "--start", "", "--end", "\\x10", "--regions", "4", "--format", "file")
    assert p.returncode == 2 and p.stdout == ""
    assert len(p.stderr.splitlines()) == 1
    assert "Empty split key must not be passed in the split keys." in p.stderr and "\\x00" in p.stderr
