"""Region assignment: RegionMap.assign (numpy, on a KeyArray) against a per-key bisect loop.

Both sides assign the same 16-byte random keys to the regions of 16 and of 1024 random split keys,
and must agree key for key. Also times assign on a Python list of bytes (which maps bisect in C:
converting Python objects to numpy costs more than it saves) and the auto-split simulation.

Run: .venv/bin/python benchmarks/bench_regions.py [--keys N] [--quick]
"""

from __future__ import annotations

import bisect
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of, parser, print_table, write_json  # noqa: E402

from keyshape.core.keyarray import KeyArray  # noqa: E402
from keyshape.core.regions import RegionMap, simulate_auto_split  # noqa: E402


def main() -> None:
    ap = parser(__doc__.splitlines()[0])
    ap.add_argument("--keys", type=int, default=10_000_000, help="keys to assign (default 10,000,000)")
    args = ap.parse_args()
    n = 20_000 if args.quick else args.keys
    repeat = 1 if args.quick else 3
    rng = np.random.default_rng(0)
    keys = KeyArray(rng.integers(0, 256, size=(n, 16), dtype=np.uint8))
    key_list = keys.tolist()
    rows, results = [], []
    for regions in (16, 1024):
        splits = sorted({bytes(r) for r in rng.integers(0, 256, size=(4 * regions, 3), dtype=np.uint8)})
        splits = [splits[i * len(splits) // regions] for i in range(1, regions)]
        region_map = RegionMap(splits)
        t_loop, loop = best_of(repeat, lambda: [bisect.bisect_right(splits, k) for k in key_list])
        t_vec, vec = best_of(repeat, lambda: region_map.assign(keys))
        t_list, vec_list = best_of(repeat, lambda: region_map.assign(key_list))
        assert vec.tolist() == loop and vec_list.tolist() == loop
        row = {
            "regions": len(region_map),
            "keys": n,
            "bisect_s": t_loop,
            "assign_keyarray_s": t_vec,
            "assign_list_s": t_list,
            "keyarray_over_bisect": t_loop / t_vec,
            "list_over_bisect": t_loop / t_list,
            "bisect_ns_per_key": t_loop / n * 1e9,
            "keyarray_ns_per_key": t_vec / n * 1e9,
        }
        results.append(row)
        rows.append([f"{len(region_map)} regions", t_loop, t_vec, t_list, row["keyarray_over_bisect"], row["list_over_bisect"]])
    print_table(
        f"Region assignment, {n:,} keys of 16 bytes, best of {repeat} (seconds; ratio = speed-up)",
        ["", "bisect loop", "assign(KeyArray)", "assign(list)", "KeyArray/bisect", "list/bisect"],
        rows,
    )

    m = min(n, 1_000_000)
    seq = [i.to_bytes(8, "big") for i in range(m)]
    auto = []
    for name, stream in (("sequential", seq), ("random", key_list[:m])):
        t, sim = best_of(1, lambda stream=stream: simulate_auto_split(stream, max_rows=max(m // 64, 2)))
        auto.append({"stream": name, "keys": m, "seconds": t, "splits": len(sim.splits)})
    print_table(
        f"Auto-split simulation, {m:,} writes, split at {max(m // 64, 2):,} rows",
        ["stream", "seconds", "splits"],
        [[a["stream"], a["seconds"], a["splits"]] for a in auto],
    )
    path = write_json("bench_regions", args.out, {"keys": n, "repeat": repeat, "results": results, "auto_split": auto})
    print(f"-> {path}")


if __name__ == "__main__":
    main()
