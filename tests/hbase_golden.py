"""Loads tests/data/hbase_golden.json: vectors printed by the REAL HBase 2.6.4 classes
(Bytes, RegionSplitter, MD5Hash, MurmurHash3) and by Java restatements of the Phoenix, OpenTSDB
and HBaseWD salt formulas, via tools/golden/run.sh. Regenerate with that script; never edit by hand.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

GOLDEN_PATH = Path(__file__).parent / "data" / "hbase_golden.json"


@cache
def golden() -> dict:
    return json.loads(GOLDEN_PATH.read_text(encoding="utf-8"))


def unhex(s: str) -> bytes:
    return bytes.fromhex(s)
