"""The put/update/delete mix the replication-sink tests write while HBase ships the edits
(tests/hbase/test_replication_sink_rekey.py, test_replication_sink_faults.py): one place, so
every referee checks the same kinds of cell."""

from __future__ import annotations

import random
import time
from typing import Any


def write_one(writer: Any, key: bytes, rng: random.Random, last: int) -> int:
    """One operation on ``key`` drawn from ``rng``: a put of three cells in two families at a
    strictly increasing millisecond timestamp (3 in 6), or a Delete of one column (``d:v``), of one
    family (``m``) or of the whole row (1 in 6 each). Returns the last timestamp used (pass it back:
    timestamps only increase: a sink applies two values of one cell at one timestamp in arrival
    order, and only the online migration's cut-over repairs that)."""
    op = rng.randrange(6)
    last = max(last + 1, int(time.time() * 1000))
    if op < 3:
        writer.put(key, {b"d:v": b"u%d" % last, b"d:q%d" % op: b"x", b"m:tag": b"t"}, last)
    elif op == 3:
        writer.delete(key, [b"d:v"])
    elif op == 4:
        writer.delete(key, [b"m"])
    else:
        writer.delete(key)
    return last
