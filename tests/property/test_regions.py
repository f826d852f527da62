"""RegionMap and the auto-split simulation.

Region boundaries follow HBase's RegionInfo: region i holds starts[i] <= key < ends[i], b"" unbounded,
keys compared as unsigned bytes (Bytes.BYTES_COMPARATOR), so a region lookup is bisect_right over the
split keys.
"""

from __future__ import annotations

import bisect
import random
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from keyshape.core.autosplit import RowLimit
from keyshape.core.regions import RegionMap, simulate_auto_split
from keyshape.core.splitsim import SplitModel, SplitSimulator
from keyshape.schema import FamilySpec, TableSpec
from keyshape.store import EmbeddedStore

# Bytes drawn mostly from the edge values that break naive encodings: NUL (stripped by numpy 'S'),
# 0x01, the sign boundary 0x7f/0x80 and 0xff.
edge_bytes = st.binary(max_size=6).map(lambda b: bytes((0x00, 0x01, 0x7F, 0x80, 0xFF, 0x61)[x % 6] for x in b))
split_sets = st.lists(edge_bytes.filter(bool), max_size=12, unique=True).map(sorted)


def _reference(splits: list[bytes], keys: list[bytes]) -> list[int]:
    return [bisect.bisect_right(splits, k) for k in keys]


@settings(max_examples=300)
@given(splits=split_sets, keys=st.lists(edge_bytes, max_size=40))
def test_assign_matches_bisect_reference(splits: list[bytes], keys: list[bytes]) -> None:
    # Add the split keys themselves, their NUL-extended forms and their prefixes: the cases where
    # an 'S'-array comparison would tie keys that bytes order tells apart.
    extra = [s + tail for s in splits for tail in (b"", b"\x00", b"\x00\x00", b"\xff")]
    extra += [s[:i] for s in splits for i in range(len(s))]
    all_keys = keys + extra
    region_map = RegionMap(splits)
    got = region_map.assign(all_keys)
    assert got.dtype == np.int64
    assert got.tolist() == _reference(splits, all_keys)
    assert [region_map.region_of(k) for k in all_keys] == got.tolist()


@given(splits=split_sets, keys=st.lists(edge_bytes.map(lambda b: b.rstrip(b"\x00")), max_size=40))
def test_assign_accepts_numpy_bytes_array(splits: list[bytes], keys: list[bytes]) -> None:
    array = np.array(keys, dtype="S8")
    assert RegionMap(splits).assign(array).tolist() == _reference(splits, keys)


def test_nul_suffixed_key_is_not_its_prefix() -> None:
    """numpy's 'S' dtype treats b"a" and b"a\\x00" as equal; HBase orders b"a" < b"a\\x00"."""
    region_map = RegionMap([b"a\x00"])
    assert region_map.assign([b"a", b"a\x00", b"a\x00\x00"]).tolist() == [0, 1, 1]


def test_boundaries_are_half_open_like_hbase() -> None:
    region_map = RegionMap([b"b", b"d"])
    assert len(region_map) == 3
    assert region_map.starts == [b"", b"b", b"d"]
    assert region_map.ends == [b"b", b"d", b""]
    # start key inclusive, end key exclusive
    assert region_map.assign([b"", b"a\xff", b"b", b"c\xff\xff", b"d", b"\xff" * 9]).tolist() == [
        0,
        0,
        1,
        1,
        2,
        2,
    ]


def test_no_splits_is_one_region() -> None:
    region_map = RegionMap()
    assert len(region_map) == 1 and region_map.starts == [b""] and region_map.ends == [b""]
    assert region_map.assign([b"x", b""]).tolist() == [0, 0]
    assert region_map.assign([]).tolist() == []


@pytest.mark.parametrize(
    ("splits", "message"),
    [
        ([b"b", b"a"], "sorts before"),
        ([b"a", b"a"], "equals"),
        ([b"a", b""], "empty"),
        (["a"], "must be bytes"),
    ],
)
def test_invalid_split_keys_are_rejected(splits: list, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RegionMap(splits)


def test_unsigned_order_of_split_keys() -> None:
    """0x80 sorts after 0x7f as in Bytes.compareTo (unsigned), so this order is valid."""
    assert RegionMap([b"\x7f", b"\x80"]).assign([b"\x7f\xff", b"\x80"]).tolist() == [1, 2]
    with pytest.raises(ValueError):
        RegionMap([b"\x80", b"\x7f"])


@pytest.mark.parametrize(("regions", "servers"), [(1, 3), (7, 3), (12, 4), (5, 5)])
def test_server_of_round_robin(regions: int, servers: int) -> None:
    region_map = RegionMap([bytes([i]) for i in range(1, regions)])
    owner = region_map.server_of(servers)
    assert len(owner) == regions
    # consecutive regions land on different servers and loads differ by at most one region
    assert all(owner[i] != owner[i + 1] for i in range(regions - 1)) or servers == 1
    counts = np.bincount(owner, minlength=servers)
    assert counts.max() - counts.min() <= 1 or regions < servers
    with pytest.raises(ValueError):
        region_map.server_of(0)


def test_describe_uses_to_string_binary() -> None:
    rows = RegionMap([b"\x00\xffa"]).describe(n_servers=2)
    assert rows == [
        {"region": 0, "start": "", "end": "\\x00\\xFFa", "server": 0},
        {"region": 1, "start": "\\x00\\xFFa", "end": "", "server": 1},
    ]


# --- auto split -------------------------------------------------------------------------------


def test_sequential_keys_split_only_the_last_region() -> None:
    """The classic hot-spot story: monotonic keys into an un-split table always write to the last region,
    which keeps splitting and leaves half-full regions behind that never get another write."""
    keys = [struct.pack(">q", i) for i in range(20_000)]
    sim = simulate_auto_split(keys, max_rows=1000)
    assert len(sim.splits) >= 30
    for n, event in enumerate(sim.splits):
        assert event.region == n  # the last region of the map at that moment
    assert sim.rows.sum() == len(keys)
    assert (sim.rows[:-1] == 500).all()  # half of the 1001 rows that triggered each split
    assert sim.rows[-1] <= 1000


def test_random_keys_split_everywhere() -> None:
    rng = random.Random(7)
    keys = [rng.randbytes(8) for _ in range(20_000)]
    sim = simulate_auto_split(keys, max_rows=1000)
    n_regions = len(sim.region_map)
    last_splits = sum(e.region == len(sim.map_before(e.write_index)) - 1 for e in sim.splits)
    assert last_splits < len(sim.splits) / 4
    # every region has been split off at >= 500 rows and split again above 1000
    assert sim.rows.min() >= 500 and sim.rows.max() <= 1000
    assert n_regions >= 20


@settings(max_examples=150)
@given(
    keys=st.lists(edge_bytes, max_size=120),
    initial=split_sets,
    max_rows=st.integers(1, 9),
)
def test_simulation_invariants(keys: list[bytes], initial: list[bytes], max_rows: int) -> None:
    sim = simulate_auto_split(keys, initial_splits=initial, max_rows=max_rows)
    distinct = sorted(set(keys))
    # the final map holds exactly the counted rows, none above the limit
    counts = np.bincount(sim.region_map.assign(distinct), minlength=len(sim.region_map))
    assert counts.tolist() == sim.rows.tolist()
    assert (sim.rows <= max_rows).all()
    assert sim.writes == len(keys)
    assert sim.map_before(0) == RegionMap(initial)
    assert sim.map_before(len(keys)) == sim.region_map
    for event in sim.splits:
        before = sim.map_before(event.write_index)
        start, end = before.starts[event.region], before.ends[event.region]
        assert start < event.split_key and (end == b"" or event.split_key < end)
        assert sim.map_before(event.write_index + 1).region_of(event.split_key) == event.region + 1


@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(edge_bytes.filter(bool), max_size=150, unique=True),
    initial=split_sets,
    max_rows=st.integers(1, 12),
)
def test_one_auto_split_rule_everywhere(keys: list[bytes], initial: list[bytes], max_rows: int) -> None:
    """Issue 29: one auto-split model. The exact replay, the streaming simulator's "rows" policy
    and the embedded store all apply keyshape.core.autosplit.RowLimit, so on distinct keys (few
    enough that the simulator's key sample is every key) they end with the same regions, split
    at the same writes and keys."""
    exact = simulate_auto_split(keys, initial_splits=initial, max_rows=max_rows)
    sim = SplitSimulator(SplitModel(policy="rows", max_rows=max_rows), initial)
    sim.feed(keys)
    streamed = sim.finish()
    store = EmbeddedStore(auto_split_rows=max_rows)
    store.create_table(TableSpec("t", families=[FamilySpec("cf")]), initial)
    for key in keys:
        store.put("t", key, {b"cf:v": b"x"})
    embedded = [r.start for r in store.regions("t")][1:]
    assert list(streamed.region_map.split_keys) == list(exact.region_map.split_keys) == embedded
    assert [(e.write_index, e.split_key) for e in streamed.splits] == [(e.write_index, e.split_key) for e in exact.splits]
    assert streamed.rows.tolist() == exact.rows.tolist()


def test_row_limit_rule() -> None:
    rule = RowLimit(max_rows=3, max_bytes=100)
    assert not rule.splits(3, 100) and rule.splits(4, 0) and rule.splits(2, 101)
    assert not RowLimit(max_bytes=1).splits(1, 500)  # one row never splits
    assert not RowLimit().splits(10**9, 10**12)  # no limits: never
    assert rule.split_key([b"a", b"b", b"c", b"d"]) == b"c"  # the upper daughter's first row
    with pytest.raises(ValueError, match="max_bytes must be a positive number"):
        RowLimit(max_bytes=0)
    with pytest.raises(ValueError, match="two keys"):
        rule.split_key([b"a"])


def test_rewrites_do_not_add_rows_and_bytes_limit() -> None:
    keys = [b"k%03d" % i for i in range(10)] * 3
    sim = simulate_auto_split(keys, max_bytes=40, value_bytes=6)  # 10 bytes a row
    assert sim.rows.sum() == 10
    assert sim.bytes.sum() == 100
    assert (sim.bytes <= 40).all() and len(sim.region_map) > 1


def test_no_limits_never_split() -> None:
    sim = simulate_auto_split([b"a", b"b"], initial_splits=[b"b"])
    assert sim.splits == [] and sim.rows.tolist() == [1, 1]
    with pytest.raises(ValueError, match="max_rows"):
        simulate_auto_split([b"a"], max_rows=0)


@settings(max_examples=200)
@given(splits=split_sets, keys=st.lists(edge_bytes, max_size=30), width=st.integers(1, 10))
def test_assign_fixed_width_arrays_match_reference(splits: list[bytes], keys: list[bytes], width: int) -> None:
    """2-D uint8 and 'V' arrays keep every byte, NULs included, so they must match bytes order."""
    fixed = [(k + b"\x00" * width)[:width] for k in keys]
    extra = [(s + b"\x00" * width)[:width] for s in splits]
    fixed += extra
    matrix = np.frombuffer(b"".join(fixed), dtype=np.uint8).reshape(len(fixed), width)
    region_map = RegionMap(splits)
    expected = _reference(splits, fixed)
    assert region_map.assign(matrix).tolist() == expected
    assert region_map.assign(matrix.copy().view(f"V{width}").ravel()).tolist() == expected


def test_assign_rejects_text_keys() -> None:
    with pytest.raises(ValueError, match="must be bytes"):
        RegionMap([b"m"]).assign(["a"])
    with pytest.raises(ValueError, match="must be bytes"):
        RegionMap().assign(["a"])
