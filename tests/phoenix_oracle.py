"""Phoenix 5.2.1 itself (connectionless, tools/golden/phoenix/oracle.sh) as a test oracle, and the
typed-string form its answers use (see PhoenixOracle.java): ``i4:100``, ``str:<utf-8 hex>`` ..."""

from __future__ import annotations

import shutil
import struct
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

from keyshape.phoenix import PhoenixTimestamp, PhoenixType

ORACLE = Path(__file__).resolve().parents[1] / "tools" / "golden" / "phoenix" / "oracle.sh"
_INT_KIND = {1: "i1", 2: "i2", 4: "i4", 8: "i8"}
_SQL_TYPES = {
    "TINYINT": -6,
    "SMALLINT": 5,
    "INTEGER": 4,
    "BIGINT": -5,
    "FLOAT": 6,
    "DOUBLE": 8,
    "DECIMAL": 3,
    "BOOLEAN": 16,
    "DATE": 91,
    "TIME": 92,
    "TIMESTAMP": 93,
    "CHAR": 1,
    "VARCHAR": 12,
    "BINARY": -2,
    "VARBINARY": -3,
}


def to_param(t: PhoenixType, value: Any) -> str:
    """A Python value of type ``t`` as the oracle's typed parameter string."""
    name = t.name
    if value is None:
        return f"null:{_SQL_TYPES.get(name.replace('UNSIGNED_', '').replace('INT', 'INTEGER').replace('LONG', 'BIGINT'), 1111)}"
    if name in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UNSIGNED_TINYINT", "UNSIGNED_SMALLINT", "UNSIGNED_INT", "UNSIGNED_LONG"):
        return f"{_INT_KIND[t.width or 8]}:{value}"
    if name in ("FLOAT", "UNSIGNED_FLOAT"):
        return "f4:" + struct.pack(">f", value).hex()
    if name in ("DOUBLE", "UNSIGNED_DOUBLE"):
        return "f8:" + struct.pack(">d", value).hex()
    if name == "DECIMAL":
        return f"dec:{value}"
    if name == "BOOLEAN":
        return f"bool:{'true' if value else 'false'}"
    if name in ("DATE", "UNSIGNED_DATE"):
        return f"date:{value}"
    if name in ("TIME", "UNSIGNED_TIME"):
        return f"time:{value}"
    if name in ("TIMESTAMP", "UNSIGNED_TIMESTAMP"):
        ts = value if isinstance(value, PhoenixTimestamp) else PhoenixTimestamp(value)
        return f"ts:{ts.millis}:{ts.java_nanos}"
    if name in ("CHAR", "VARCHAR"):
        return "str:" + value.encode("utf-8").hex()
    return "bin:" + bytes(value).hex()


def from_param(text: str) -> Any:
    """The Python value of an oracle typed string (DATE/TIME give epoch ms, TIMESTAMP a PhoenixTimestamp)."""
    kind, _, v = text.partition(":")
    if kind == "null":
        return None
    if kind in ("i1", "i2", "i4", "i8", "date", "time"):
        return int(v)
    if kind == "f4":
        return struct.unpack(">f", bytes.fromhex(v.rjust(8, "0")))[0]
    if kind == "f8":
        return struct.unpack(">d", bytes.fromhex(v.rjust(16, "0")))[0]
    if kind == "dec":
        return Decimal(v)
    if kind == "bool":
        return v == "true"
    if kind == "str":
        return bytes.fromhex(v).decode("utf-8")
    if kind == "bin":
        return bytes.fromhex(v)
    if kind == "ts":
        ms, nanos = v.split(":")
        return PhoenixTimestamp(int(ms), int(nanos) % 1_000_000)
    raise ValueError(f"unknown oracle value {text!r}")


def clipped(ranges: list[tuple[bytes, bytes]], regions: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``[start, stop)`` ranges cut at the region boundaries as Phoenix cuts its scans (a salted
    bucket's scan starts at its region's padded start key), then joined where they touch."""
    cut = []
    for start, stop in ranges:
        for region_start, region_end in regions:
            lo = max(start, region_start)
            ends = [e for e in (stop, region_end) if e]
            hi = min(ends) if ends else b""
            if not hi or lo < hi:
                cut.append((lo, hi))
    out: list[tuple[bytes, bytes]] = []
    for start, stop in sorted(set(cut)):
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], stop)
        else:
            out.append((start, stop))
    return out


def phoenix_ranges(scans: list[str]) -> list[tuple[bytes, bytes]]:
    out: list[tuple[bytes, bytes]] = []
    for start, stop in sorted({tuple(bytes.fromhex(p) for p in s.split(",")) for s in scans}):
        stop = start + b"\x00" if start == stop else stop  # a point scan (a Get)
        if out and out[-1][1] == start:
            out[-1] = (out[-1][0], stop)
        else:
            out.append((start, stop))
    return out


class PhoenixOracle:
    """One long-lived Phoenix JVM answering line requests (EXEC, KEYS, DECODE, REGIONS)."""

    def __init__(self, url: str = "jdbc:phoenix:none") -> None:
        if shutil.which("java") is None or shutil.which("mvn") is None:
            raise RuntimeError("the Phoenix oracle needs a JDK and Maven (tools/golden/phoenix/oracle.sh)")
        self.proc = subprocess.Popen([str(ORACLE), url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
        first = self._line()
        if first != "READY":
            raise RuntimeError(f"the Phoenix oracle did not start: {first!r}")

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the Phoenix oracle exited")
        return line.rstrip("\n")

    def ask(self, *fields: str) -> list[str]:
        assert self.proc.stdin is not None
        # One request per line: multi-line SQL (keyshape's CREATE TABLE output) goes on one line.
        self.proc.stdin.write("\t".join(f.replace("\n", " ") for f in fields) + "\n")
        self.proc.stdin.flush()
        answer = self._line().split("\t")
        if answer[0].startswith("ERR"):
            raise PhoenixOracleError(answer[0][4:])
        return answer[1:]

    def execute(self, sql: str) -> None:
        self.ask("EXEC", sql)

    def keys(self, sql: str, *params: str, tenant: str | None = None) -> dict[str, bytes]:
        """The rows ``sql`` would write (table -> key), through the global connection or, with
        ``tenant``, through a tenant-specific one (``TenantId=tenant``)."""
        out: dict[str, bytes] = {}
        for item in self.ask(*_through(tenant), "KEYS", sql, *params):
            table, _, hexkey = item.partition("=")
            out[table] = bytes.fromhex(hexkey)
        return out

    def decode(self, table: str, key: bytes) -> list[Any]:
        return [from_param(v) for v in self.ask("DECODE", table, key.hex())]

    def regions(self, table: str) -> list[tuple[bytes, bytes]]:
        return [tuple(bytes.fromhex(p) for p in r.split(",")) for r in self.ask("REGIONS", table)]  # type: ignore[misc]

    def scans(self, sql: str, *params: str, tenant: str | None = None) -> list[str]:
        """The ``start,stop`` hex scans of Phoenix's plan for ``sql`` (see SCAN)."""
        return self.ask(*_through(tenant), "SCAN", sql, *params)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _through(tenant: str | None) -> tuple[str, ...]:
    return () if tenant is None else ("TENANT", tenant)


class PhoenixOracleError(Exception):
    """Phoenix refused the request (its message)."""
