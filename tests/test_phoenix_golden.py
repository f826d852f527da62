"""keyshape's Phoenix row keys against Phoenix 5.2.1 itself: keys, decoded values and region
boundaries that Phoenix produced in connectionless mode (tests/data/phoenix_golden.json, written by
tools/golden/phoenix/run.sh). No Java needed to run these."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from phoenix_oracle import from_param

from keyshape.phoenix import PhoenixTable, parse_ddl
from keyshape.phoenix.types import fraction_digits

GOLDEN = json.loads((Path(__file__).parent / "data" / "phoenix_golden.json").read_text())
CASES = GOLDEN["cases"]


def _tables(ddls: list[str]) -> dict[str, PhoenixTable]:
    tables: dict[str, PhoenixTable] = {}
    for ddl in ddls:
        t = parse_ddl(ddl, tables)
        tables[t.name] = t
    return tables


def _rows() -> list[tuple[str, int]]:
    return [(c["name"], i) for c in CASES for i in range(len(c["rows"]))]


def _case(name: str) -> dict[str, Any]:
    return next(c for c in CASES if c["name"] == name)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b and str(a) == str(b) or (a != a and b != b)
    if isinstance(a, Decimal) or isinstance(b, Decimal):
        return a is not None and b is not None and Decimal(a) == Decimal(b)
    return a == b


def test_the_golden_file_covers_what_it_claims() -> None:
    types = {c["ddl"][0].split("(K ")[1].split(" NOT NULL")[0] for c in CASES if c["name"].startswith("T")}
    assert {"TINYINT", "BIGINT", "UNSIGNED_LONG", "FLOAT", "DOUBLE", "DECIMAL", "DECIMAL(10,2)", "BOOLEAN",
            "DATE", "TIME", "TIMESTAMP", "UNSIGNED_TIMESTAMP", "CHAR(5)", "BINARY(4)", "VARCHAR"} <= types
    assert any("SALT_BUCKETS" in d for c in CASES for d in c["ddl"])
    assert any("CREATE INDEX" in d for c in CASES for d in c["ddl"])
    assert any("MULTI_TENANT" in d for c in CASES for d in c["ddl"])
    assert sum(len(c["rows"]) for c in CASES) > 150


@pytest.mark.parametrize("name,i", _rows())
def test_keys_equal_phoenix(name: str, i: int) -> None:
    case = _case(name)
    tables = _tables(case["ddl"])
    row = case["rows"][i]
    values = {k: from_param(v) for k, v in row["values"].items()}
    for table_name, hexkey in row["keys"].items():
        table = tables[table_name]
        record = {c.name: values.get(c.name) for c in table.key.columns}
        assert table.key.encode(record).hex() == hexkey, (table_name, values)


@pytest.mark.parametrize("name,i", _rows())
def test_decode_equals_phoenix_reading(name: str, i: int) -> None:
    case = _case(name)
    tables = _tables(case["ddl"])
    row = case["rows"][i]
    written = {k: from_param(v) for k, v in row["values"].items()}
    for table_name, hexkey in row["keys"].items():
        table = tables[table_name]
        ours = table.key.decode(bytes.fromhex(hexkey))
        theirs = [from_param(v) for v in row["decoded"][table_name]]
        columns = list(table.key.columns)
        if table.key.salt_buckets:
            theirs = theirs[1:]  # Phoenix's RowKeySchema starts with the salt byte
        theirs += [None] * (len(columns) - len(theirs))  # trailing NULLs are not walked
        for column, phoenix_value in zip(columns, theirs):
            value = ours[column.name]
            if column.desc and column.type.name == "BOOLEAN":
                # Phoenix writes fe/ff but PBoolean.toObject(DESC) reads both as false; keyshape
                # reads back what was written.
                assert phoenix_value is False and value == written[column.name]
                continue
            assert _same(value, phoenix_value), (table_name, column.name, value, phoenix_value)
            if column.name in written and written[column.name] is not None and table_name == name:
                expected = written[column.name]
                quirk = (column.desc and column.type.name == "DECIMAL" and column.type.scale is not None
                         and fraction_digits(expected) > column.type.scale)
                if column.type.name == "DECIMAL" and column.type.scale is not None and not quirk:
                    expected = Decimal(expected).quantize(Decimal(1).scaleb(-column.type.scale), rounding="ROUND_DOWN")
                if column.type.name == "BINARY":
                    expected = expected.ljust(column.type.width, b"\x00")  # BINARY(n) reads back padded
                if not quirk:
                    assert _same(value, expected) or (isinstance(expected, str) and value == expected.rstrip(" ")), (
                        column.name, value, expected)


@pytest.mark.parametrize("case", GOLDEN["splits"], ids=[s["ddl"].split()[2] for s in GOLDEN["splits"]])
def test_region_boundaries_equal_phoenix(case: dict[str, Any]) -> None:
    table = parse_ddl(case["ddl"])
    # Connectionless Phoenix lists the regions in SPLIT ON order; HBase sorts split keys.
    phoenix = sorted(bytes.fromhex(end) for _, end in case["regions"][:-1])
    assert table.region_boundaries() == phoenix


def test_desc_decimal_with_more_fraction_digits_is_written_ascending_as_phoenix_does() -> None:
    # DECIMAL(10,2) DESC, 12.345: Phoenix writes the ASC bytes of 12.34 plus 0xFF, reads -116.37.
    table = parse_ddl("CREATE TABLE Q (K DECIMAL(10,2) NOT NULL, V VARCHAR CONSTRAINT PK PRIMARY KEY (K DESC))")
    key = table.key.encode({"K": Decimal("12.345")})
    assert key.hex() == "c10d23ff"
    assert table.key.decode(key)["K"] == Decimal("-116.37")
