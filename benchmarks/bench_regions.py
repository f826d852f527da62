"""Region assignment: RegionMap.assign (numpy) against a per-key bisect loop, and auto-split speed.

Run: .venv/bin/python benchmarks/bench_regions.py [N_KEYS]
"""

from __future__ import annotations

import bisect
import random
import sys
import time

import numpy as np

from keyshape.regions import RegionMap, simulate_auto_split


def best_of(repeat: int, fn):  # noqa: ANN001, ANN201
    """(smallest wall time of ``repeat`` runs, last result): other load only ever adds time."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    rng = random.Random(0)
    keys = [rng.randbytes(rng.randint(4, 16)) for _ in range(n)]
    splits = sorted({rng.randbytes(3) for _ in range(255)})
    region_map = RegionMap(splits)

    t_loop, loop = best_of(3, lambda: [bisect.bisect_right(splits, k) for k in keys])
    t_list, vec = best_of(3, lambda: region_map.assign(keys))
    fixed = np.array(keys, dtype="S16")  # an 'S' array drops trailing NULs; checked below
    t_array, vec_array = best_of(3, lambda: region_map.assign(fixed))
    assert vec.tolist() == loop
    assert vec_array.tolist() == [bisect.bisect_right(splits, k) for k in fixed.tolist()]
    print(f"{n:,} keys, {len(region_map)} regions")
    print(f"  bisect loop           {t_loop:7.3f} s")
    print(f"  assign(list of bytes) {t_list:7.3f} s   ratio loop/assign = {t_loop / t_list:.1f}x")
    print(f"  assign('S16' array)   {t_array:7.3f} s   ratio loop/assign = {t_loop / t_array:.1f}x")

    seq = [i.to_bytes(8, "big") for i in range(n)]
    for name, stream in (("sequential", seq), ("random", keys)):
        t0 = time.perf_counter()
        sim = simulate_auto_split(stream, max_rows=max(n // 64, 2))
        dt = time.perf_counter() - t0
        print(f"  auto-split {name:10s} {dt:7.3f} s  {len(sim.splits)} splits")


if __name__ == "__main__":
    main()
