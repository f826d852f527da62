"""An independent writer for the online-migration tests (issue 32): a separate process that keeps
putting, updating and deleting rows of a table at a steady rate until SIGTERM, as an application
that knows nothing of the migration would.

    python tests/online_writer.py HBASE_URL SCHEMA.toml --rows N --rate OPS_PER_S [--seed S]

Operations on ids 0..N-1 (so rows are deleted and put again while the copy runs): a put of d:v,
d:q<k> and m:tag (an insert or an update), a delete of column d:v (every version), of family m,
of the whole row, and a put with a fresh d:v version. Put timestamps are the clock kept strictly
increasing, so the referee's comparison is about this mix; values rewritten at one timestamp have
their own test (the cut-over's repair, tests/hbase/test_migrate_online.py). On SIGTERM it flushes, prints one JSON
line of counts and exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
from typing import Any

from keyshape.schema import KeySchema
from keyshape.store.hbase import HBaseStore

BASE_TIME = 1_767_225_600_000


def record(i: int) -> dict[str, Any]:
    return {"event_id": i, "event_time": BASE_TIME + 1000 * i}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("schema")
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=32)
    args = parser.parse_args()
    schema = KeySchema.load(args.schema)
    table = schema.table.full_name
    stopping = [False]

    def stop(*_: object) -> None:
        stopping[0] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    rng = random.Random(args.seed)
    counts = {"puts": 0, "column_deletes": 0, "family_deletes": 0, "row_deletes": 0}
    last = 0
    store = HBaseStore.from_url(args.url)
    started = time.monotonic()
    done = 0
    try:
        with store.writer(table, batch_size=10, in_flight=1) as writer:
            print("started", flush=True)
            while not stopping[0]:
                key = schema.encode(record(rng.randrange(args.rows)))
                op = rng.randrange(8)
                last = max(last + 1, int(time.time() * 1000))
                if op < 4:
                    writer.put(key, {b"d:v": b"u%d" % last, b"d:q%d" % op: b"x%d" % op, b"m:tag": b"t%d" % last}, last)
                    counts["puts"] += 1
                elif op == 4:
                    writer.delete(key, [b"d:v"])
                    counts["column_deletes"] += 1
                elif op == 5:
                    writer.delete(key, [b"m"])
                    counts["family_deletes"] += 1
                elif op == 6:
                    writer.delete(key)
                    counts["row_deletes"] += 1
                else:
                    writer.put(key, {b"d:v": b"r%d" % last}, last)
                    counts["puts"] += 1
                done += 1
                ahead = done / args.rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(ahead)
    finally:
        store.close()
    counts["ops"] = done
    print(json.dumps(counts), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
