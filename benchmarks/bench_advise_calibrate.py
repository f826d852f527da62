"""How reproducible ``keyshape advise --calibrate`` is: FITS back-to-back fits on one real HBase.

The fit (src/keyshape/analysis/advise/calibrate.py) times micro-runs and keeps each run's lower
quartile; a shared machine's neighbours still move it. Reported per fitted constant: each fit's
value and the spread, max/min over the fits (``scanner_ms``, the small difference of a one-row
scan and one RPC, also as ``scanner_ms + rpc_ms``, the sum the model charges a one-row read).
This is the measurement behind the stated tolerance (two fits within a factor of 4 on a 2-core
machine at load 3-20), which the test suite no longer asserts (issue 43: no measured time in a
test).

Run: .venv/bin/python benchmarks/bench_advise_calibrate.py [--fits N] [--hbase HOST:PORT] [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parser, print_table, write_json  # noqa: E402
from _hbase import add_hbase_arg, cluster_facts, hbase_url  # noqa: E402

from keyshape.analysis.advise.calibrate import FITTED, calibrate  # noqa: E402
from keyshape.store import open_store  # noqa: E402


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--fits", type=int, default=4, help="back-to-back fits (default 4)")
    add_hbase_arg(ap)
    args = ap.parse_args()
    fits = 2 if args.quick else max(2, args.fits)
    repeats = 5 if args.quick else 21  # calibrate's own default: 21 timings a run
    with hbase_url(args.hbase) as (url, started):
        store = open_store(url)
        try:
            facts = cluster_facts(store, url, started)
            runs = [calibrate(store, repeats=repeats, where=url, prefix="bench_calib") for _ in range(fits)]
        finally:
            store.close()
    values = {name: [float(getattr(r.model, name)) for r in runs] for name in FITTED}
    values["scanner_ms + rpc_ms"] = [float(r.model.scanner_ms + r.model.rpc_ms) for r in runs]
    spread = {name: max(v) / min(v) for name, v in values.items()}
    print_table(
        f"{fits} back-to-back fits (lower quartile of {repeats} timings a run)",
        ["constant", *[f"fit {i + 1}" for i in range(fits)], "max/min"],
        [[name, *v, spread[name]] for name, v in values.items()],
    )
    print(
        f"widest spread: {max(spread, key=spread.__getitem__)} {max(spread.values()):.2f}x; fits took {', '.join(f'{r.seconds:.1f}' for r in runs)} s"
    )
    path = write_json(
        "bench_advise_calibrate",
        args.out,
        {"hbase": facts, "fits": fits, "repeats": repeats, "values": values, "spread": spread, "seconds": [r.seconds for r in runs]},
    )
    print(f"-> {path}")


if __name__ == "__main__":
    main()
