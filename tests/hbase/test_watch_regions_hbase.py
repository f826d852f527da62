"""`watch` of a table that splits many times under a sequential load, held to a key-only scan of
every final region on the real HBase (marked `hbase`; issue 28 item 5).

Request counters carry no keys: when a region splits, its counters die with it and nothing says
which of its rows went to which daughter. The watch counted every write (the totals held) but
projected a split parent's past writes onto the daughters by their LATER writes, so under a
sequential load everything piled onto the last region ("13 empty regions, the last holds 100%"
while the cold regions held 255k rows) and the heat map never showed the diagonal that happened.
Now each split's daughters are counted (key-only scans) when the watch sees them, and the
parent's writes go to the daughters as those counts and the direction of the writes say.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import bisect

import numpy as np
import pytest

from keyshape.ops.live import LiveHeat, count_rows, live_analysis, load_workload, watch
from keyshape.errors import StoreError
from keyshape.schema import KeySchema

pytestmark = pytest.mark.hbase

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20
ROWS = 300_000


def test_watch_gives_each_final_region_the_writes_a_scan_finds_there_and_draws_the_diagonal(hbase: Any, tmp_path: Path) -> None:
    from keyshape.store import open_store

    name = f"i28_45_watch_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.toml"
    path.write_text((ROOT / "examples" / "sequential.toml").read_text().replace('name = "events_seq"', f'name = "{name}"', 1))
    schema = KeySchema.load(path)
    store = open_store(hbase.url)
    loader = open_store(hbase.url)
    try:
        # Small flushes, and no split HBase decides by itself: a split the region server started
        # after the load (a flush's compaction can queue one) would land after the watch ended,
        # a race HBase can win (it failed the suite under load). Every split here is the test's
        # own, made while the load runs: a constant-size policy at HBase's default 10 GiB never
        # splits these few MiB (DisabledRegionSplitPolicy would refuse the test's splits too).
        store.create_table(
            schema.table,
            [],
            attributes={"MEMSTORE_FLUSHSIZE": str(MIB), "SPLIT_POLICY": "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy"},
        )
        done = threading.Event()
        seen = {"quiet": 0}

        # when the counters of each sample were taken (the region server's report, epoch ms):
        # the earliest and the latest report of the sample's regions
        reported: list[tuple[int, int]] = []
        acks: list[tuple[float, int]] = [(0.0, 0)]  # (epoch ms, rows the loader had acknowledged then)

        def on_sample(sample: Any) -> bool:
            stamps = [r.reported_ms for r in heat.latest if r.reported_ms] or [int(time.time() * 1000)]
            reported.append((min(stamps), max(stamps)))
            # quiet only counts once the splitter has finished too: its last split may still be
            # in flight when the load ends, and the watch must see the table as it stays (and
            # count the daughters of a split it sees in a quiet poll, so that poll is not quiet)
            # (a split whose call timed out goes on in the master: none of the table's regions may
            # be in transition either)
            if done.is_set() and not splitting.is_alive() and sample.total_writes == 0 and not sample.vanished:
                if not store.regions_in_transition(name):
                    seen["quiet"] += 1  # the load is over and the counters have settled
            return seen["quiet"] < 2

        heat = LiveHeat()
        heat.add(store.regions(name))
        heat.note_counts({r.name: count_rows(store, name, r) for r in heat.latest})  # as watch does
        watcher = threading.Thread(target=watch, args=(store, name, 1.0), kwargs={"duration": 150.0, "on_sample": on_sample, "heat": heat})
        written = [0]

        def split_as_hbase_would() -> None:
            # As HBase's size policy would under a sequential load: the last region is split at
            # the middle of its rows every ~1 s (and the time a split takes) while the load goes on.
            splitter = open_store(hbase.url)
            try:
                while not done.is_set():
                    time.sleep(1.0)
                    last = splitter.regions(name)[-1]
                    low = schema.decode(last.start)["event_id"] if last.start else 1
                    middle = (low + written[0]) // 2
                    if middle > low + 1000 and not done.is_set():
                        try:
                            splitter.split_region(name, schema.encode({"event_id": middle}), timeout=20)
                        except StoreError:
                            pass  # not splittable yet (a daughter still holds references): try again next round
            finally:
                splitter.close()

        def progress(acked: int, rows: int) -> None:
            written[0] = acked
            acks.append((time.time() * 1000, acked))
            time.sleep(0.1)  # ~10,000 rows a second

        splitting = threading.Thread(target=split_as_hbase_would)
        watcher.start()
        splitting.start()
        try:
            assert load_workload(loader, schema, rows=ROWS, progress=progress).rows == ROWS
        finally:
            done.set()
            splitting.join(120)
            watcher.join(180)
        assert not watcher.is_alive()
        regions = store.regions(name)
        truth = np.array([sum(len(k) for k, _ in store.scan_key_times(name, r.start, r.end, batch_size=5000)) for r in regions], dtype=np.float64)
    finally:
        try:
            store.delete_table(name)
        finally:
            store.close()
            loader.close()
    assert [r.start for r in heat.latest] == [r.start for r in regions], "the table split after the watch"
    splits = sum(len(s.vanished) for s in heat.samples)
    assert splits >= 5, f"only {splits} split(s): nothing much was tested"
    assert heat.split_counts == (splits, splits)  # every split's daughters were counted
    assert truth.sum() == ROWS
    per_sample = np.array([s.total_writes for s in heat.samples])
    interval = float(per_sample.max())
    m = heat.matrix()
    got = m.sum(axis=0)
    print(
        f"{splits} splits, {len(regions)} regions; per region counted {got.astype(int).tolist()}, "
        f"scanned {truth.astype(int).tolist()}; largest interval {interval:,.0f} writes"
    )
    # every final region: what the scan finds there, within one interval's writes per split
    assert np.abs(got - truth).max() <= interval, (got.tolist(), truth.tolist())
    assert abs(got.sum() - ROWS) <= splits * interval
    # the diagonal: each interval's writes sit where the keys written then are, one region
    # (or two, at a boundary) at a time, walking up the key space
    busy = [i for i in range(m.shape[0]) if m[i].sum() > 0.05 * interval]
    hot = [int(np.argmax(m[i])) for i in busy]
    assert hot == sorted(hot), hot
    assert hot[0] <= 1 and hot[-1] == len(regions) - 1, hot
    # one interval's writes sit in the regions holding the ids written in it and one neighbour
    # either side (a batch in flight). The ids written in it: those the loader acknowledged
    # between the region server's reports the interval lies between (the counters are the
    # server's, taken at its report, not at the poll: the loader's count read when the poll
    # returned is later, by up to a second on a busy machine, 20% of an interval's writes).
    assert len(reported) == m.shape[0]
    times = [t for t, _ in acks]

    def acked_by(ms: int) -> int:  # rows acknowledged at ``ms``
        return acks[max(bisect.bisect_right(times, ms) - 1, 0)][1]

    def acked_soon_after(ms: int) -> int:  # rows acknowledged by the first ack after ``ms`` (a write counted, not yet acked)
        return acks[min(bisect.bisect_left(times, ms), len(acks) - 1)][1]

    starts = [r.start for r in regions]
    shares: list[float] = []
    inside, measured = 0.0, 0.0
    where: list[str] = []  # what the assertion shows of the worst interval
    for i in busy:
        low = max(1, (acked_by(reported[i - 1][0]) if i else 0) - 2000)
        high = acked_soon_after(reported[i][1]) + 2000
        first = max(0, bisect.bisect_right(starts, schema.encode({"event_id": low})) - 2)
        last = min(len(regions), bisect.bisect_right(starts, schema.encode({"event_id": high})) + 1)
        # a split parent's writes after its last report are an estimate dealt over its daughters
        # by what they hold (its whole range, old rows too): measured writes are held to the rule
        estimated = sum(v.writes for v in heat.samples[i].vanished)
        own = max(1.0, float(m[i].sum()) - estimated)
        shares.append(float(m[i, first:last].sum()) / own)
        inside, measured = inside + min(float(m[i, first:last].sum()), own), measured + own
        where.append(f"interval {i}: ids {low:,}-{high:,} in regions {first}-{last - 1}, dealt {[int(x) for x in m[i]]}, estimated {estimated:,}")
    # Over the whole load, not interval by interval: a parent's last writes are estimated (its
    # rate to its close), too high when the split held the load up, and an excess in an older
    # piece moves the boundary of a later split's deal by up to an interval (CI beside CPU hogs:
    # one interval of ~2,000 writes dealt one region above its ids, 0.49 of it in the window).
    worst = int(np.argmin(shares))
    assert inside >= 0.9 * measured, (round(inside / measured, 3), [round(x, 3) for x in shares], where[worst])
    a = live_analysis(heat, name=name)
    assert a.verdict == "hotspot", a.reasons
    assert a.empty_regions == 0  # every region holds rows written during the watch
    assert a.count_label == "write requests"
