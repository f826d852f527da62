"""The split-simulation calibration's shared steps (tests/hbase/test_splitsim_hbase.py, and the same
calibration on the 3-server cluster in tests/cluster/test_hbase_cluster.py): a schema copied under
a fresh table name, a load at HBase's smallest sizes with its split history read back and replayed
through SplitSimulator, and the checks of the real history against the simulated one."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from keyshape.core.regions import RegionMap
from keyshape.core.splitsim import COMPRESSION_RATIOS, SplitModel, SplitSimulator, cell_size
from keyshape.ops.live import load_workload
from keyshape.ops.split_history import WriteClock, busiest_shares, split_events, split_seconds
from keyshape.schema import KeySchema
from keyshape.workload import LOAD_QUALIFIER, generate, row_value_bytes


ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
WINDOWS = 20
REGION_FACTOR = 1.5
SHARE_TOLERANCE = 0.08


def _schema(tmp_path: Path, example: str, table: str) -> KeySchema:
    text = (ROOT / "examples" / example).read_text()
    name = f"calib_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace(f'name = "{table}"', f'name = "{name}"', 1))
    return KeySchema.load(path)


def _keys(schema: KeySchema, rows: int) -> list[bytes]:
    out: list[bytes] = []
    for columns in generate(schema, rows, seed=0):
        part = schema.encode_many(columns)
        out.extend(part.tolist() if hasattr(part, "tolist") else part)
    return out


def _settled_history(store: Any, table: str, seconds: float = 60.0) -> Any:
    """The table's region history once its splits have settled: a split requested by the last
    flushes shows in meta a moment later (2 s on a quiet machine, more on busy cores), so wait at
    least that, then until none of its regions is in transition and two reads of meta agree."""
    time.sleep(2.0)
    deadline = time.monotonic() + seconds
    history = store.region_history(table)
    while time.monotonic() < deadline:
        moving = store.regions_in_transition(table)
        time.sleep(1.0)
        again = store.region_history(table)
        if not moving and again == history:
            return again
        history = again
    return history


def _load_and_simulate(
    hbase: Any, schema: KeySchema, rows: int, splits: list[bytes], cleaner_interval: float = 120.0, rate: float | None = 40_000
) -> dict[str, Any]:
    """Load ``rows`` into a fresh table at most ``rate`` rows/s (None: as fast as it goes), then
    simulate the same writes at the same times.

    40,000 rows/s is the rate the calibration was made at. Unthrottled, `load` (batches in
    flight) writes 80,000-120,000 rows/s here, and the writes that arrive while a flush and the
    split it triggers are under way move the first split later by a varying amount (a 3-server
    cluster on 2 busy cores: write 72,661 where the model says 52,058)."""
    from keyshape.store import open_store

    store = open_store(hbase.url)
    table = schema.table.full_name
    try:
        namespace = schema.table.namespace or "default"
        if not store.namespace_exists(namespace):
            store.create_namespace(namespace)
        store.create_table(schema.table, splits, attributes={"MAX_FILESIZE": str(2 * MIB), "MEMSTORE_FLUSHSIZE": str(MIB)})
        clock = WriteClock()
        began = time.time()
        clock.report(began, 0)

        def progress(done: int, _total: int) -> None:
            if rate is not None:
                time.sleep(max(0.0, began + done / rate - time.time()))
            clock.report(time.time(), done)

        load_workload(store, schema, rows, 1000, progress=progress)
        history = _settled_history(store, table)
        store.delete_table(table)
    finally:
        store.close()
    keys = _keys(schema, rows)
    online = sorted(r.start for r in history if not r.split and not r.offline and r.start)
    real_events = [(clock.write_at(ms / 1000.0) - 1, key) for ms, key in split_events(history)]
    family = schema.table.families[0]
    # The cell load wrote, from the one definition load and analyze share; and how long this
    # HBase took to split this run, read from meta (it is the machine's, not the table's: 1-2 s
    # idle, more on busy cores, where an instant split predicted 6-7 regions against HBase's 3).
    took = split_seconds(history) or 0.0
    first = min((r.created_ms for r in history), default=0)
    durations = [
        (r.opened_ms - r.created_ms) / 1000.0 for r in history if r.created_ms != first and r.opened_ms is not None and r.opened_ms >= r.created_ms
    ]
    model = SplitModel(
        max_filesize=2 * MIB,
        flush_size=MIB,
        cell_bytes=cell_size(len(family.name), len(LOAD_QUALIFIER), row_value_bytes(schema.workload)),
        compression=COMPRESSION_RATIOS[family.compression.upper()],
        cleaner_interval=cleaner_interval,
        split_seconds=took,
    )
    sim = SplitSimulator(model, splits, windows=WINDOWS)
    sim.feed(keys, clock.seconds_of(rows))
    result = sim.finish()
    sim_events = [(e.write_index, e.split_key) for e in result.splits]
    real_rows = np.bincount(RegionMap(online).assign(keys), minlength=len(online) + 1)
    return {
        "real_regions": len(online) + 1,
        "sim_regions": len(result.region_map),
        "real_rows": real_rows,
        "sim_rows": result.rows,
        "real_events": real_events,
        "sim_events": sim_events,
        "real_share": float(busiest_shares(keys, real_events, splits, WINDOWS).mean()),
        "sim_share": float(busiest_shares(keys, sim_events, splits, WINDOWS).mean()),
        "result": result,
        "splits": splits,
        "split_seconds": took,
        "durations": durations,
        "model": model,
        "keys": keys,
        "times": clock.seconds_of(rows),
    }


def first_split_agrees(r: dict[str, Any], predicted: int) -> bool:
    """HBase's first split (``r``'s real one, as a write index) against a ``predicted`` one:
    within 25 % of the writes, plus, on the late side, the writes made in half the time this
    run's splits took. The model splits as the flush that crosses the size ends; HBase's split
    begins once that flush has run and the master took the request, JVM work on the same cores,
    so on busy cores it comes later (runs: 0-0.23 s later idle with splits of 0.6-0.9 s; 0.63 s
    and 0.64 s later on CI's busy machine with splits of 2.69 s and 1.40 s, 25,000 writes at
    40,000/s). The early side stays strict: HBase never splits before the size is reached."""
    real = r["real_events"][0][0]
    times = r["times"]
    rate = len(times) / max(float(times[-1] - times[0]), 1e-9)
    late = rate * r["split_seconds"] / 2
    return -0.25 * real <= real - predicted <= 0.25 * real + late


def _check(r: dict[str, Any], rows: int, left_daughter: bool = True) -> None:
    """The stated tolerances. ``left_daughter``: also check the left daughter's share of the rows
    against the simulated one (HBase splits at the middle key of the largest store file; when the
    flush files are near equal in size, which one is largest when the split procedure starts is a
    race, so this check holds only where the split starts at once)."""
    note = (
        f"splits took {r['split_seconds']:.2f} s; real {r['real_regions']} regions {r['real_rows'].tolist()} splits at "
        f"{[w for w, _ in r['real_events']]}; simulated {r['sim_regions']} "
        f"{r['sim_rows'].tolist()} at {[w for w, _ in r['sim_events']]}; busiest share "
        f"real {r['real_share']:.3f} simulated {r['sim_share']:.3f}"
    )
    print(note)  # the numbers behind the stated tolerances, shown with pytest -s
    ratio = max(r["real_regions"], r["sim_regions"]) / min(r["real_regions"], r["sim_regions"])
    assert ratio <= REGION_FACTOR, note
    # The share follows the splits' timing: a first split as late as `first_split_agrees` allows
    # leaves one region longer (a quiet-but-slow CI run: real 0.894, simulated 0.800 with the first
    # split 22,739 writes late), so the simulated splits moved by that lag bound it too.
    shares = [r["sim_share"]]
    if r["real_events"] and r["sim_events"] and first_split_agrees(r, r["sim_events"][0][0]):
        lag = max(0, r["real_events"][0][0] - r["sim_events"][0][0])
        moved = [(min(w + lag, rows - 1), key) for w, key in r["sim_events"]]
        shares.append(float(busiest_shares(r["keys"], moved, r["splits"], WINDOWS).mean()))
    assert min(shares) - SHARE_TOLERANCE <= r["real_share"] <= max(shares) + SHARE_TOLERANCE, (note, shares)
    if r["real_regions"] == r["sim_regions"] and r["real_events"] and r["sim_events"]:
        assert first_split_agrees(r, r["sim_events"][0][0]), note
        if r["real_regions"] == 2 and left_daughter:
            real_left = r["real_rows"][0] / rows
            sim_left = r["sim_rows"][0] / rows
            assert abs(real_left - sim_left) <= 0.06, note
