"""hbase-driver's generated protobuf modules against HBase's own .proto files.

keyshape speaks HBase's RPC with the message classes hbase-driver ships (tools/hbase/CLIENTS.md says
why it keeps them rather than generating its own). This pins that every field of every message in
the modules keyshape imports has the same name and field number as in the ``.proto`` files shipped
inside the default line's ``hbase-protocol-shaded`` jar (tools/hbase/lines/<version>/lib, fetched by
tools/hbase/fetch.sh; every other line's: tests/hbase/test_hbase_lines.py),
so a wire-format drift shows up here rather than as a corrupt request.
"""

from __future__ import annotations

import importlib
import re
import zipfile
from pathlib import Path

import pytest
import standalone  # tools/hbase/standalone.py

LIB = standalone.LIB  # the default line's jars
MODULES = ["RPC", "Client", "HBase", "Master", "ZooKeeper", "Admin", "Procedure"]  # what keyshape imports


M2 = Path.home() / ".m2" / "repository" / "org" / "apache" / "hbase" / "hbase-protocol-shaded"


def _jar() -> Path:
    # The default line's lib first (the jars the test server runs); else Maven's cache, where
    # fetch.sh copies them from.
    jars = sorted(LIB.glob("hbase-protocol-shaded-*.jar")) if LIB.is_dir() else []
    jars = jars or sorted(M2.glob(f"{standalone.DEFAULT_VERSION}*/hbase-protocol-shaded-*.jar"))
    if not jars:
        pytest.skip(f"no hbase-protocol-shaded jar in {LIB} or ~/.m2: run tools/hbase/fetch.sh")
    return jars[0]


def _proto_fields(text: str) -> set[tuple[str, str, int]]:
    """(message path, field name, number) of every field in a .proto file's text."""
    text = re.sub(r"//[^\n]*", "", text)
    out, stack = set(), []
    for tok in re.finditer(
        r"(message|enum|oneof)\s+(\w+)\s*\{|\}|(?:(?:optional|required|repeated)\s+)?"
        r"([\w.]+)\s+(\w+)\s*=\s*(\d+)",
        text,
    ):
        if tok.group(1):
            stack.append((tok.group(1), tok.group(2)))
        elif tok.group(0) == "}":
            if stack:
                stack.pop()
        elif stack and stack[-1][0] in ("message", "oneof"):
            path = ".".join(name for kind, name in stack if kind == "message")
            out.add((path, tok.group(4), int(tok.group(5))))
    return out


def _driver_fields(name: str) -> set[tuple[str, str, int]]:
    module = importlib.import_module(f"hbasedriver.protobuf_py.{name}_pb2")
    out = set()

    def walk(d, prefix: str) -> None:
        out.update((prefix + d.name, f.name, f.number) for f in d.fields)
        for nested in d.nested_types:
            walk(nested, prefix + d.name + ".")

    for d in module.DESCRIPTOR.message_types_by_name.values():
        walk(d, "")
    return out


@pytest.mark.parametrize("name", MODULES)
def test_driver_messages_match_the_servers_proto_files(name):
    with zipfile.ZipFile(_jar()) as jar:
        path = next(n for n in jar.namelist() if n.endswith(f"/{name}.proto") or n == f"{name}.proto")
        upstream = _proto_fields(jar.read(path).decode("utf-8"))
    driver = _driver_fields(name)
    assert driver, name
    assert driver <= upstream, sorted(driver - upstream)[:10]
