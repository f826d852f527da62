"""``keyshape phoenix ...`` and the Phoenix lints, without Java: the expected bytes come from the
golden file that Phoenix 5.2.1 itself produced (tests/data/phoenix_golden.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from keyshape.phoenix import PhoenixKeyError, create_table_sql, parse_ddl
from keyshape.phoenix.ddl import PhoenixDDLError
from keyshape.phoenix.lint import lint_phoenix

GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "phoenix_golden.json").read_text())


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "keyshape.cli", "phoenix", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def ddl_file(tmp_path: Path) -> Path:
    p = tmp_path / "t.sql"
    case = next(c for c in GOLDEN["cases"] if c["name"] == "S1")
    p.write_text(";\n".join(case["ddl"]) + ";\nCREATE TABLE SEQ (ID BIGINT NOT NULL PRIMARY KEY, V VARCHAR) SPLIT ON (100, 200);\n")
    return p


def test_key_encode_and_decode_match_phoenix_bytes(ddl_file: Path) -> None:
    case = next(c for c in GOLDEN["cases"] if c["name"] == "S1")
    row = case["rows"][0]
    a = bytes.fromhex(row["values"]["A"].split(":")[1]).decode()
    n = row["values"]["N"].split(":")[1]
    out = run("key", "encode", str(ddl_file), f"A={a}", f"N={n}", "--hex")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == row["keys"]["S1"]
    decoded = run("key", "decode", str(ddl_file), row["keys"]["S1"], "--hex")
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout.splitlines() == [f"A={a}", f"N={n}"]


def test_ddl_export_uses_binary_split_points_that_reproduce_the_regions(ddl_file: Path) -> None:
    out = run("ddl", str(ddl_file), "--table", "SEQ")
    assert out.returncode == 0, out.stderr
    assert "SPLIT ON (X'8000006400000000', X'800000C800000000')" in out.stdout
    exported = out.stdout[out.stdout.index("CREATE TABLE") :].rstrip().rstrip(";")
    again = parse_ddl(exported)
    assert (
        again.region_boundaries() == parse_ddl("CREATE TABLE SEQ (ID BIGINT NOT NULL PRIMARY KEY, V VARCHAR) SPLIT ON (100, 200)").region_boundaries()
    )


def test_lint_exit_codes_and_one_line_errors(ddl_file: Path, tmp_path: Path) -> None:
    bad = run("lint", str(ddl_file), "--table", "SEQ")
    assert bad.returncode == 1 and "phoenix-split-on-integer-literal" in bad.stdout
    assert "CAST(100 AS BIGINT)" in bad.stdout
    assert run("lint", str(ddl_file)).returncode == 0
    for args in (
        ("ddl", str(tmp_path / "missing.sql")),
        ("key", "encode", str(ddl_file), "N=x"),
        ("key", "decode", str(ddl_file), "zz", "--hex"),
        ("ddl", str(ddl_file), "--table", "NOPE"),
    ):
        r = run(*args)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr


def test_lints_say_what_phoenix_does() -> None:
    codes = lambda ddl: {f.code for f in lint_phoenix(parse_ddl(ddl))}  # noqa: E731
    assert "phoenix-split-on-salted" in codes("CREATE TABLE A (K VARCHAR NOT NULL PRIMARY KEY) SALT_BUCKETS=4 SPLIT ON ('m')")
    assert "phoenix-split-on-integer-literal" not in codes("CREATE TABLE A (K BIGINT NOT NULL PRIMARY KEY) SPLIT ON (CAST(100 AS BIGINT))")
    assert "phoenix-desc-decimal-scale" in codes("CREATE TABLE A (K DECIMAL(10,2) NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (K DESC))")
    assert "phoenix-desc-boolean" in codes("CREATE TABLE A (K BOOLEAN NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (K DESC))")
    assert "phoenix-monotonic-leading-column" in codes("CREATE TABLE A (TS TIMESTAMP NOT NULL PRIMARY KEY)")
    assert "phoenix-monotonic-leading-column" not in codes("CREATE TABLE A (TS TIMESTAMP NOT NULL PRIMARY KEY) SALT_BUCKETS=8")
    assert "phoenix-many-buckets" in codes("CREATE TABLE A (K VARCHAR NOT NULL PRIMARY KEY) SALT_BUCKETS=128")


@pytest.mark.parametrize(
    "ddl, message",
    [
        ("CREATE TABLE A (K VARBINARY NOT NULL, J INTEGER NOT NULL CONSTRAINT PK PRIMARY KEY (K, J))", "last PK column"),
        ("CREATE TABLE A (K INTEGER, J VARCHAR NOT NULL CONSTRAINT PK PRIMARY KEY (K, J))", "fixed width"),
        ("CREATE TABLE A (K INTEGER ARRAY NOT NULL PRIMARY KEY)", "ARRAY"),
        ("CREATE VIEW V AS SELECT * FROM A", "views"),
        ("CREATE TABLE A (K INTEGER NOT NULL PRIMARY KEY) SPLIT ON (TO_DATE('2024-01-01'))", "not supported"),
        ("CREATE TABLE A (K JSON NOT NULL PRIMARY KEY)", "JSON"),
        ("CREATE TABLE A (K INTEGER NOT NULL)", "no PRIMARY KEY"),
    ],
)
def test_unsupported_ddl_is_one_clear_error(ddl: str, message: str) -> None:
    with pytest.raises((PhoenixDDLError, PhoenixKeyError), match=message):
        parse_ddl(ddl)


def test_values_phoenix_refuses_are_refused() -> None:
    key = parse_ddl("CREATE TABLE A (K UNSIGNED_INT NOT NULL, C CHAR(2) NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (K, C))").key
    with pytest.raises(PhoenixKeyError, match="UNSIGNED_INT"):
        key.encode({"K": -1, "C": "ab"})
    with pytest.raises(PhoenixKeyError, match="CHAR"):
        key.encode({"K": 1, "C": "abc"})
    with pytest.raises(PhoenixKeyError, match="may not be null"):
        key.encode({"K": 1})


def test_create_table_round_trips_through_the_parser() -> None:
    for case in GOLDEN["cases"]:
        table = parse_ddl(case["ddl"][0])
        again = parse_ddl(create_table_sql(table))
        assert again.key == table.key and again.columns == table.columns


def test_scan_ranges_cover_exactly_the_rows_with_leading_columns() -> None:
    key = parse_ddl("CREATE TABLE A (U VARCHAR NOT NULL, T BIGINT NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (U DESC, T)) SALT_BUCKETS=4").key
    rows = [{"U": u, "T": t} for u in ("a", "ab", "b") for t in (1, 2)]
    ranges = key.scan_ranges(U="a")
    assert len(ranges) == 4
    inside = [r for r in rows if any(lo <= key.encode(r) < hi for lo, hi in ranges)]
    assert inside == [{"U": "a", "T": 1}, {"U": "a", "T": 2}]
    assert Decimal("1") == parse_ddl("CREATE TABLE D (K DECIMAL NOT NULL PRIMARY KEY)").key.decode(b"\xc1\x02")["K"]


def test_key_commands_accept_a_ddl_file_as_the_schema(ddl_file: Path) -> None:
    def key(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "keyshape.cli", "key", *args], capture_output=True, text=True, timeout=120)

    encoded = key("encode", str(ddl_file), "A=user1", "N=1")
    assert encoded.returncode == 0, encoded.stderr
    case = next(c for c in GOLDEN["cases"] if c["name"] == "S1")
    expected = next(r["keys"]["S1"] for r in case["rows"] if r["values"]["N"] == "i8:1")
    from keyshape.core.hbytes import to_bytes_binary

    assert to_bytes_binary(encoded.stdout.splitlines()[0]).hex() == expected
    decoded = key("decode", str(ddl_file), encoded.stdout.splitlines()[0])
    assert decoded.stdout.splitlines() == ["A=user1", "N=1"]
    ranges = key("ranges", str(ddl_file), "A=user1")
    assert len(ranges.stdout.splitlines()) == 16  # one per salt bucket


def _scan_case(table: str, *columns: str) -> dict:
    return next(s for s in GOLDEN["scans"] if s["ddl"].split()[2] == table and list(s["leading"]) == list(columns))


@pytest.mark.parametrize("command", [("phoenix", "key", "ranges"), ("key", "ranges")])
def test_key_ranges_start_where_phoenix_scans(tmp_path: Path, command: tuple[str, ...]) -> None:
    # issue 28 item 7: A=a on PK(A VARCHAR NOT NULL, B VARCHAR) printed 'a\x00' .. 'a\x01' and missed
    # the row (a, NULL), whose key is 'a'; Phoenix scans [61, 6101)
    case = _scan_case("SC1", "A")
    ddl = tmp_path / "sc1.sql"
    ddl.write_text(case["ddl"] + ";\n")
    out = subprocess.run([sys.executable, "-m", "keyshape.cli", *command, str(ddl), "A=a"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    ((start, stop),) = case["scans"]
    from keyshape.core.hbytes import to_bytes_binary

    assert [tuple(to_bytes_binary(p).hex() for p in line.split("\t")) for line in out.stdout.splitlines()] == [(start, stop)]


def test_split_points_equal_after_padding_are_one_line_errors(tmp_path: Path) -> None:
    # issue 28 item 7: 'g' and X'6700' pad to one boundary on (A VARCHAR, N INTEGER); keyshape kept one
    case = next(s for s in GOLDEN["splits"] if "SPLIT ON ('g', X'6700')" in s["ddl"])
    ddl = tmp_path / "dup.sql"
    ddl.write_text(case["ddl"] + ";\n")
    for args in (("lint", str(ddl)), ("ddl", str(ddl))):
        out = run(*args)
        assert out.returncode != 0 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        assert "All split keys must be unique" in out.stderr and "'g'" in out.stderr, out.stderr


def test_varchar_length_counts_utf16_units_on_every_encode_route() -> None:
    # issue 28 item 7: Phoenix refuses 'a😀' for VARCHAR(2) (3 Java chars); keyshape counted 2 code points
    case = next(
        c for c in GOLDEN["cases"] if c["ddl"][0].startswith("CREATE TABLE") and "VARCHAR(2) NOT NULL" in c["ddl"][0] and "K ASC" in c["ddl"][0]
    )
    key = parse_ddl(case["ddl"][0]).key
    for row in case["rows"]:
        value = bytes.fromhex(row["values"]["K"].split(":")[1]).decode()
        if "refused" in row:
            with pytest.raises(PhoenixKeyError, match="VARCHAR"):
                key.encode({"K": value})  # the compiled route
            with pytest.raises(PhoenixKeyError, match="VARCHAR"):
                key.encode_unsalted({"K": value})  # the general composer
            with pytest.raises(PhoenixKeyError, match="VARCHAR"):
                key.encode_many([{"K": "ab"}, {"K": value}])
        else:
            assert key.encode({"K": value}).hex() == row["keys"][case["name"]]
            assert key.encode_many([{"K": value}])[0].hex() == row["keys"][case["name"]]


def test_index_keys_of_timestamp_double_boolean_columns_decode_and_encode_back() -> None:
    # issue 28 item 7: the index stores these as DECIMAL; keyshape refused the data row's own values
    case = next(c for c in GOLDEN["cases"] if c["name"] == "D3")
    tables: dict = {}
    for ddl in case["ddl"]:
        t = parse_ddl(ddl, tables)
        tables[t.name] = t
    for row in case["rows"]:
        for name, hexkey in row["keys"].items():
            key = tables[name].key
            assert key.encode(key.decode(bytes.fromhex(hexkey))).hex() == hexkey, name
