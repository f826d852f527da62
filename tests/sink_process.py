"""keyshape's replication sink as a process of its own, for the fault tests (kill -9 must kill a
real process): a RunningSink with an ops.online.ReKeyer (OLD schema -> NEW schema), registered
under --parent with a fixed --cluster-id on a fixed --port, so a restart is the same peer at the
same address (``resume``: the killed run's registration is replaced).

Prints ``ready <server name>`` once registered. Appends one line per call to --log:
``<unix time> ok|refused <entries> <cells> <newest WAL write time (ms) of its entries>``.
``--refuse-calls N``: refuse the first N batches after start (HBase backs off and ships each
again). A count, not a time: on a busy machine the first shipment can come late. SIGTERM stops cleanly (unregisters).

Run: python tests/sink_process.py --quorum Q --parent /p --port N --cluster-id UUID --old OLD.toml --new NEW.toml --log F
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time
import uuid
from pathlib import Path

from keyshape.ops.online import ReKeyer
from keyshape.schema import KeySchema
from keyshape.store.hbase import HBaseStore
from keyshape.store.hbase.sink import RunningSink
from keyshape.store.hbase.walentry import WalEntry


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quorum", required=True)
    ap.add_argument("--parent", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--cluster-id", type=uuid.UUID, required=True)
    ap.add_argument("--old", type=Path, required=True)
    ap.add_argument("--new", type=Path, required=True)
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--rejects", type=Path, default=None)
    ap.add_argument("--refuse-calls", type=int, default=0)
    args = ap.parse_args()
    store = HBaseStore.from_url(args.quorum)
    rekeyer = ReKeyer(store, KeySchema.load(args.old), KeySchema.load(args.new), reject_path=args.rejects)
    log_lock = threading.Lock()
    refused = [0]

    def on_batch(entries: list[WalEntry]) -> None:
        cells = sum(len(e.cells) for e in entries)
        outcome = "ok"
        try:
            with log_lock:
                refuse = refused[0] < args.refuse_calls
                refused[0] += refuse
            if refuse:
                outcome = "refused"
                raise RuntimeError("refusing on purpose (--refuse-calls)")
            rekeyer(entries)
        except BaseException:
            outcome = "refused"
            raise
        finally:
            with log_lock, args.log.open("a") as out:
                newest = max((e.write_time for e in entries), default=0)
                out.write(f"{time.time():.3f} {outcome} {len(entries)} {cells} {newest}\n")

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    with RunningSink(on_batch, args.quorum, args.parent, cluster_id=args.cluster_id, port=args.port, resume=True) as running:
        print(f"ready {running.sink.server_name}", flush=True)
        done.wait()
    store.close()
    sys.exit(0)


if __name__ == "__main__":
    main()
