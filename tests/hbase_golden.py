"""Loads the golden vectors that tools/golden/run.sh prints by calling REAL upstream jars from Maven
Central. Regenerate with that script; never edit the JSON by hand.

- ``golden()``: tests/data/hbase_golden.json, from hbase-common / hbase-server / hbase-client 2.6.4-hadoop3 (the test server's default line)
  (Bytes, RegionSplitter, MD5Hash, MurmurHash3; tools/golden/GoldenVectors.java).
- ``salt_golden()``: tests/data/salt_golden.json, from phoenix-core-client 5.2.1
  (SaltingUtil.getSaltingByte), opentsdb 2.4.1 (RowKey.prefixKeyWithSalt) and hbasewd 0.1.0
  (RowKeyDistributorByHashPrefix.OneByteSimpleHash); tools/golden/UpstreamSalts.java. Each section
  names the jar it came from (``"jar"``) and the exact call (``"call"``).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

GOLDEN_PATH = Path(__file__).parent / "data" / "hbase_golden.json"
SALT_GOLDEN_PATH = Path(__file__).parent / "data" / "salt_golden.json"


@cache
def golden() -> dict:
    return json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))


@cache
def salt_golden() -> dict:
    return json.loads(SALT_GOLDEN_PATH.read_text(encoding="utf-8"))


def unhex(s: str) -> bytes:
    return bytes.fromhex(s)
