"""Issue 40, class "tracebacks": every input file goes through one reader (keyshape.core.files) that
turns a file of the wrong kind into one line naming the file and what was expected. Each case here
used to print a traceback (UnicodeDecodeError, ArrowInvalid, sqlite3.DatabaseError) or a misleading
parse error ("Invalid statement at line 1" for a UTF-8 BOM). Decision: a UTF-8 BOM is harmless and
accepted; UTF-16/32 and every other encoding are refused with "save it as UTF-8"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from keyshape.cli.main import main
from keyshape.core.files import read_text, sniff
from keyshape.errors import BadInput

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ROOT / "examples" / "orders.toml"
DDL = ROOT / "examples" / "phoenix" / "events.sql"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("files")
    text = ORDERS.read_text(encoding="utf-8")
    (where / "bom.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (where / "u16.toml").write_bytes(text.encode("utf-16"))
    (where / "u16be.toml").write_bytes(b"\xfe\xff" + text.encode("utf-16-be"))
    (where / "latin1.toml").write_bytes(text.replace("order", "ordér").encode("latin-1"))
    (where / "nul.toml").write_bytes(b"[table]\x00\x00name")
    pq.write_table(pa.table({"rowkey": [b"a", b"b"]}), where / "k.parquet")
    shutil.copy(where / "k.parquet", where / "kp.csv")
    shutil.copy(where / "k.parquet", where / "schema.toml.parquet")
    (where / "quote.csv").write_text('rowkey,b\n"a,1\nb,2\n', encoding="utf-8")
    (where / "u16.csv").write_bytes("rowkey\nabc\n".encode("utf-16"))
    (where / "bom.sql").write_bytes(b"\xef\xbb\xbf" + DDL.read_bytes())
    (where / "u16.sql").write_bytes(DDL.read_text(encoding="utf-8").encode("utf-16"))
    (where / "text.db").write_text("not a database", encoding="utf-8")
    (where / "adir").mkdir()
    return where


def run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize(
    "args,words",
    [
        ("analyze {f}/u16.toml", "{f}/u16.toml: is UTF-16 text, not a key schema (TOML, or a Phoenix .sql); save it as UTF-8"),
        ("lint {f}/u16be.toml", "{f}/u16be.toml: is UTF-16 text"),
        ("key decode {f}/latin1.toml x", "{f}/latin1.toml: is not UTF-8 text (byte 0xe9"),
        ("create {f}/nul.toml --dry-run", "{f}/nul.toml: holds NUL bytes"),
        ("analyze {f}/k.parquet", "{f}/k.parquet: is a Parquet file, not a key schema"),
        ("lint {f}/schema.toml.parquet", "is a Parquet file, not a key schema"),
        ("analyze examples/orders.toml --keys examples/orders.toml", "examples/orders.toml: not a CSV of keys (CSV parse error: Expected 1 columns"),
        ("analyze examples/orders.toml --keys {f}/kp.csv", "{f}/kp.csv: is a Parquet file, not a CSV of keys"),
        ("analyze examples/orders.toml --keys {f}/quote.csv", "{f}/quote.csv: not a CSV of keys"),
        ("analyze examples/orders.toml --keys {f}/u16.csv", "{f}/u16.csv: is UTF-16 text, not a CSV of keys"),
        ("phoenix ddl {f}/u16.sql", "{f}/u16.sql: is UTF-16 text, not a Phoenix DDL script"),
        ("serve --hbase 127.0.0.1:1 --once --db /nonexistent-dir/h.db", "--db /nonexistent-dir/h.db: the folder /nonexistent-dir does not exist"),
        ("serve --hbase 127.0.0.1:1 --once --db {f}/adir", "--db {f}/adir: is a folder"),
        ("serve --hbase 127.0.0.1:1 --once --db {f}/text.db", "--db {f}/text.db: is text or another kind of file, not an SQLite database"),
        ("serve --hbase 127.0.0.1:1 --once --db {f}/k.parquet", "is a Parquet file, not an SQLite database"),
    ],
)
def test_a_file_of_the_wrong_kind_is_named_in_one_line(files: Path, args: str, words: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(args.format(f=files).split())
    assert code != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert words.format(f=files) in lines[0], lines[0]


def test_a_utf8_bom_is_harmless(files: Path) -> None:
    code, out, err = run(["key", "encode", str(files / "bom.toml"), "user_id=u1", "order_time=5", "order_id=1"])
    assert code == 0, err
    assert out == run(["key", "encode", str(ORDERS), "user_id=u1", "order_time=5", "order_id=1"])[1]
    code, out, err = run(["phoenix", "ddl", str(files / "bom.sql")])
    assert code == 0 and "CREATE TABLE" in out, err


def test_read_text_and_sniff() -> None:
    assert sniff(b"PAR1....") == "a Parquet file"
    assert sniff(b"SQLite format 3\x00") == "an SQLite database"
    assert sniff(b"\xff\xfe\x00\x00x") == "UTF-32 text"
    assert sniff(b"[table]") is None
    with pytest.raises(BadInput, match="no such file"):
        read_text("/nonexistent.toml", "a schema")
    with pytest.raises(BadInput, match="is a folder"):
        read_text("/tmp", "a schema")


@pytest.mark.parametrize(
    "old,new,words",
    [
        ("cardinality = 1000000,", "cardinality = 2000000000,", "cardinality: 2,000,000,000 is more than 50,000,000 values"),
        ("cardinality = 1000000,", "cardinality = 9000000000000000000000,", "is more than 50,000,000 values"),
        ('format = "user{:07d}"', 'format = "user{:q}"', "format: 'user{:q}' is not a format for an integer"),
        ('format = "user{:07d}"', 'format = "user{1}"', "format: 'user{1}' is not a format for an integer"),
        ("regions = 20 ", "regions = 5000000 ", "splits.regions: 5000000 is out of range; use a value in 2..100000"),
    ],
)
def test_sizes_in_a_schema_are_bounded_before_allocation(tmp_path: Path, old: str, new: str, words: str) -> None:
    """A zipf cardinality of 2e9 tried to allocate 60 GiB; [splits] regions = 5000000 ran 151 s
    after estimating 24 s (analyze --regions stops at 100,000); a bad format was a traceback."""
    text = ORDERS.read_text(encoding="utf-8")
    assert old in text
    schema = tmp_path / "big.toml"
    schema.write_text(text.replace(old, new), encoding="utf-8")
    code, out, err = run(["analyze", str(schema), "--rows", "100"])
    assert code != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], err
