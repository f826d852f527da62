"""An independent writer for the autopilot tests (issue 41): a separate process that puts NEW rows
at a steady rate until SIGTERM, as an application that knows nothing of keyshape would.

    python tests/autopilot_writer.py HBASE_URL SCHEMA.toml --rate ROWS_PER_S [--tenants]

Keys: ``event_time`` = the clock (ms, strictly increasing), ``event_id`` a counter; with
``--tenants``, ``tenant`` = "acme" for 9 writes in 10 (the hot tenant), else one of 20 others.
Every row is new (a sequential key: the newest region takes the writes). On SIGTERM it flushes,
prints one JSON line {"rows": N, "seconds": S} (S: from the first put to the last acknowledged
flush) and exits 0.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import time

from keyshape.schema import KeySchema
from keyshape.store.hbase import HBaseStore


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("schema")
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--tenants", action="store_true")
    parser.add_argument("--seed", type=int, default=41)
    args = parser.parse_args()
    schema = KeySchema.load(args.schema)
    stopping = [False]

    def stop(*_: object) -> None:
        stopping[0] = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    rng = random.Random(args.seed)
    store = HBaseStore.from_url(args.url)
    rows = 0
    last = 0
    with store.writer(schema.table.full_name, batch_size=10) as writer:
        print("started", flush=True)
        began = time.monotonic()
        while not stopping[0]:
            last = max(last + 1, int(time.time() * 1000))
            record: dict[str, object] = {"event_time": last, "event_id": rows}
            if args.tenants:
                record["tenant"] = "acme" if rng.random() < 0.9 else f"t{rng.randrange(20):02d}"
            writer.put(schema.encode(record), {b"d:v": b"v%d" % rows}, last)
            rows += 1
            ahead = began + rows / args.rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    seconds = time.monotonic() - began
    store.close()
    print(json.dumps({"rows": rows, "seconds": seconds}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
